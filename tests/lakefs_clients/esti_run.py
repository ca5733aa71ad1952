"""Runs esti, lakeFS's own system tests (a Go test binary built by ``make esti``), against
``graveler serve``; started by tests/lakefs_clients/test_esti.py inside a private network
namespace, or by hand:

    unshare -n python -m tests.lakefs_clients.esti_run ESTI_DIR WORKDIR [RUN [SKIP]]

``ESTI_DIR`` is what scripts/build-esti.sh caches (``esti.test`` and the ``golden/`` and
``files/`` folders esti reads from its working directory); ``RUN`` and ``SKIP`` are Go's
``-test.run`` and ``-test.skip`` patterns; ``GRAVELER_ESTI_LAKECTL`` names the lakectl binary
esti's lakectl tests run. In its network namespace (nothing leaves it) this:

* brings loopback up and starts moto's S3 server on it, with the bucket of the repositories'
  storage namespaces;
* starts ``graveler serve`` with its namespaces on that bucket (``--namespace-root s3://...``,
  so ``config`` reports an ``s3`` blockstore) and imports esti's default admin key pair;
* puts the contract tap (tests/lakefs_clients/tap.py) in front of the server, so that every
  lakeFS API answer esti gets is also checked against lakeFS's OpenAPI document; esti's API
  client, its S3 client (path-style) and lakectl all go through it;
* runs the binary with ``-test.v=test2json`` and writes ``WORKDIR/esti.log`` (its output) and
  ``WORKDIR/report.json``: the binary's exit code, each test's outcome (:func:`outcomes`), the
  tap's violations and the operations it checked.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.lakefs_clients.contract import contract
from tests.lakefs_clients.tap import ContractTap
from tests.serving import ESCAPES, GRAVELER, LAKEFS_CLIENT_SETTINGS, Key, Served

#: esti's default admin key pair (its ``-admin-access-key-id`` flag's default), imported as is.
ADMIN_KEY = Key("AKIAIOSFDNN7EXAMPLEQ", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
#: Any key works with moto.
MOTO_KEY = Key("testing", "testing")
#: The bucket that holds the repositories' storage namespaces.
BUCKET = "esti-storage"
#: What lakectl's import test reads (esti names the bucket and prefix; on lakeFS's own runs it
#: holds 2,100 objects under ``prefix-1/``, which is all that test counts).
IMPORT_BUCKET = "esti-system-testing-data"
IMPORT_PREFIX = "import-test-data/prefix-1/"
IMPORT_OBJECTS = 2100
#: Go test framing lines (``-test.v=test2json`` marks them with ^V): outcome and test name.
RESULT = re.compile(r"^\s*\x16?--- (PASS|FAIL|SKIP): (\S+) \(")
OUTCOMES = {"PASS": "passed", "FAIL": "failed", "SKIP": "skipped"}
#: Variables that would point esti, lakectl or the server anywhere but here.
UNSET = (*ESCAPES, *LAKEFS_CLIENT_SETTINGS, "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")


def outcomes(output: str) -> dict[str, str]:
    """Test name (``TestX`` or ``TestX/sub``) -> passed, failed or skipped, from the framing
    lines of a Go test binary's verbose output. A test that never finished is absent."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        match = RESULT.match(line)
        if match:
            found[match.group(2)] = OUTCOMES[match.group(1)]
    return found


@contextmanager
def moto_s3() -> Iterator[str]:
    """moto's S3 server on loopback, with :data:`BUCKET`; yields its URL."""
    import logging

    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        url = f"http://{host}:{port}"
        s3 = boto3.client("s3", endpoint_url=url, **MOTO_KEY.boto)
        s3.create_bucket(Bucket=BUCKET)
        seed_import_data(s3)
        yield url
    finally:
        server.stop()


def seed_import_data(s3: Any) -> None:
    """:data:`IMPORT_OBJECTS` objects of 1 KiB under :data:`IMPORT_PREFIX`."""
    from concurrent.futures import ThreadPoolExecutor

    s3.create_bucket(Bucket=IMPORT_BUCKET)
    body = bytes(range(256)) * 4

    def put(n: int) -> None:
        s3.put_object(Bucket=IMPORT_BUCKET, Key=f"{IMPORT_PREFIX}file{n:06d}", Body=body)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, range(1, IMPORT_OBJECTS + 1)))


def import_admin_key(served: Served) -> None:
    """``graveler credentials create --admin`` with esti's own key pair."""
    key = ["--access-key-id", ADMIN_KEY.access_key_id, "--secret-access-key", "-"]
    subprocess.run(
        [*GRAVELER, "--home", str(served.home), "credentials", "create", "--admin", *key],
        input=ADMIN_KEY.secret_access_key + "\n",
        env=served.env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )


def esti_env(api: str, work: Path, lakectl: Path) -> dict[str, str]:
    """esti's settings (viper, prefix ``ESTI_``): no set-up call, the imported admin key,
    S3 namespaces on :data:`BUCKET`, the S3 gateway on the API's port, lakectl's folder."""
    binaries = work / "bin"
    binaries.mkdir(exist_ok=True)
    (binaries / "lakectl").symlink_to(lakectl)
    env = {k: v for k, v in os.environ.items() if k not in UNSET and not k.startswith("ESTI_")}
    env.update(
        HOME=str(work / "user"),
        TMPDIR=str(work / "tmp"),
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        AWS_EC2_METADATA_DISABLED="true",
        TEST_WEBHOOK_HOST="127.0.0.1",
        ESTI_SETUP_LAKEFS="false",
        ESTI_ACCESS_KEY_ID=ADMIN_KEY.access_key_id,
        ESTI_SECRET_ACCESS_KEY=ADMIN_KEY.secret_access_key,
        ESTI_ENDPOINT_URL=api,
        ESTI_S3_ENDPOINT=api.split("://", 1)[1],  # host:port: minio clients take no scheme
        ESTI_FORCE_PATH_STYLE="true",
        ESTI_BLOCKSTORE_TYPE="s3",
        ESTI_STORAGE_NAMESPACE=f"s3://{BUCKET}/esti",
        ESTI_BINARIES_DIR=str(binaries),
    )
    for folder in ("user", "tmp"):
        (work / folder).mkdir(exist_ok=True)
    return env


def server_env(moto: str, work: Path) -> dict[str, str]:
    return {
        "HOME": str(work / "user"),
        "GRAVELER_S3_ENDPOINT_URL": moto,
        "AWS_ACCESS_KEY_ID": MOTO_KEY.access_key_id,
        "AWS_SECRET_ACCESS_KEY": MOTO_KEY.secret_access_key,
        "AWS_REGION": "us-east-1",
    }


def run_binary(esti: Path, env: dict[str, str], work: Path, run: str, skip: str) -> int:
    """The esti binary, in its own folder (golden files are read from there); its output to
    ``WORKDIR/esti.log``. Returns its exit code."""
    args = [str(esti / "esti.test"), "-test.v=test2json", "-test.count=1", "-system-tests"]
    args += ["-test.timeout=20m", "-test.run", run or "."]
    if skip:
        args += ["-test.skip", skip]
    with open(work / "esti.log", "w") as log:
        done = subprocess.run(
            args, cwd=esti, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=1500
        )
    return done.returncode


def main(esti: Path, work: Path, run: str = "", skip: str = "") -> int:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    lakectl = Path(os.environ["GRAVELER_ESTI_LAKECTL"])
    (work / "user").mkdir(parents=True, exist_ok=True)
    report: dict[str, object] = {}
    with (
        moto_s3() as moto,
        Served(
            work / "home",
            None,
            "--namespace-root",
            f"s3://{BUCKET}/repos",
            env=server_env(moto, work),
        ) as served,
    ):
        import_admin_key(served)
        server = urlsplit(served.url)
        assert server.hostname is not None and server.port is not None
        tap = ContractTap((server.hostname, server.port), contract())
        try:
            env = esti_env(tap.url, work, lakectl)
            report["returncode"] = run_binary(esti, env, work, run, skip)
        finally:
            tap.close()
        report["violations"] = tap.take_violations()
        report["checked"] = dict(tap.checked)
    report["outcomes"] = outcomes((work / "esti.log").read_text(errors="replace"))
    (work / "report.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2]), *sys.argv[3:5]))
