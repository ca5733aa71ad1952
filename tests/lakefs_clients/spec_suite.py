"""Runs lakefs-spec's own test suite, unmodified, against ``graveler serve``; started by
tests/lakefs_clients/test_lakefs_spec_suite.py inside a private network namespace.

    python -m tests.lakefs_clients.spec_suite SDIST WORKDIR

The suite hard-codes ``localhost:8000`` and lakeFS's quickstart key pair, and writes
``~/.lakectl.yaml``. So this, alone in its network namespace (where port 8000 is free
whatever the machine runs):

* brings the namespace's loopback up;
* starts ``graveler serve`` over ``WORKDIR/home`` on a free port and imports the quickstart
  key with ``graveler credentials create --admin --access-key-id ... --secret-access-key -``;
* listens on ``127.0.0.1:8000`` with the contract tap (tests/lakefs_clients/tap.py) in front of
  the server, so every answer the suite gets is also checked against lakeFS's OpenAPI document;
* unpacks the suite (its ``tests/`` and ``pyproject.toml``, which holds its pytest settings)
  from the source distribution and runs pytest on it with ``HOME`` in ``WORKDIR``;
* writes ``WORKDIR/junit.xml`` (pytest's), ``WORKDIR/pytest.log`` and ``WORKDIR/report.json``
  (pytest's exit code, the tap's violations and the operations it checked).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from urllib.parse import urlsplit

from tests.lakefs_clients.contract import contract
from tests.lakefs_clients.tap import ContractTap
from tests.serving import ESCAPES, GRAVELER, LAKEFS_CLIENT_SETTINGS, Served

#: lakeFS's quickstart key pair, which the suite signs in with.
QUICKSTART_KEY = ("AKIAIOSFOLQUICKSTART", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
PORT = 8000
#: Variables that would point the suite (or the server) anywhere but here.
UNSET = (*ESCAPES, *LAKEFS_CLIENT_SETTINGS, "PYTHONPATH", "LAKECTL_CONFIG_FILE", "PYTEST_ADDOPTS")


def unpack(sdist: Path, target: Path) -> Path:
    """The suite's ``tests/`` and ``pyproject.toml`` from the sdist, into ``target``."""
    with tarfile.open(sdist) as tar:
        members = []
        for member in tar.getmembers():
            _top, _, rel = member.name.partition("/")
            if not (rel == "pyproject.toml" or rel.startswith("tests/")):
                continue
            if not (member.isfile() or member.isdir()) or ".." in rel.split("/"):
                continue
            member.name = rel
            members.append(member)
        tar.extractall(target, members=members, filter="data")
    return target


def import_quickstart_key(served: Served) -> None:
    key_id, secret = QUICKSTART_KEY
    subprocess.run(
        [
            *GRAVELER,
            "--home",
            str(served.home),
            "credentials",
            "create",
            "--admin",
            "--access-key-id",
            key_id,
            "--secret-access-key",
            "-",
        ],
        input=secret + "\n",
        env=served.env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )


def suite_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(HOME=str(home), NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    return env


def main(sdist: Path, work: Path) -> int:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    suite = unpack(sdist, work / "suite")
    user_home = work / "user"
    user_home.mkdir()
    report: dict[str, object] = {}
    with Served(work / "home", None, env={"HOME": str(user_home)}) as served:
        import_quickstart_key(served)
        server = urlsplit(served.url)
        assert server.hostname is not None and server.port is not None
        tap = ContractTap((server.hostname, server.port), contract(), port=PORT)
        try:
            with open(work / "pytest.log", "w") as log:
                done = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "pytest",
                        "-p",
                        "no:cacheprovider",
                        "-rfEs",
                        "--rootdir",
                        str(suite),
                        "-c",
                        str(suite / "pyproject.toml"),
                        "--basetemp",
                        str(work / "pytest-tmp"),
                        "--junitxml",
                        str(work / "junit.xml"),
                        "tests",
                    ],
                    cwd=suite,
                    env=suite_env(user_home),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    timeout=900,
                )
            report["returncode"] = done.returncode
        finally:
            tap.close()
        report["violations"] = tap.take_violations()
        report["checked"] = dict(tap.checked)
    (work / "report.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
