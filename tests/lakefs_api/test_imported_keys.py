"""``graveler credentials create --access-key-id ID --secret-access-key SECRET``: a key pair
made by lakeFS (or another graveler) brought over as it is, so that its clients keep their
settings. The imported key signs in to lakeFS's API and to the S3 gateway; formats are
checked, a taken ID is refused, and the secret is never printed nor stored in the clear."""

from __future__ import annotations

import secrets
import string
import subprocess

import boto3
import pytest
import requests

from tests.lakefs_api.conftest import Server
from tests.serving import GRAVELER

QUICKSTART_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # lakeFS's documented example


def new_id() -> str:
    return "AKIA" + "".join(secrets.choice(string.ascii_uppercase + "234567") for _ in range(16))


def graveler(server: Server, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    served = server.served
    return subprocess.run(
        [*GRAVELER, "--home", str(served.home), *args],
        env=served.env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_imported_key_signs_in_to_the_api_and_the_gateway(server: Server) -> None:
    key_id = new_id()
    done = graveler(
        server,
        "credentials",
        "create",
        "--admin",
        "--access-key-id",
        key_id,
        "--secret-access-key",
        QUICKSTART_SECRET,
    )
    assert done.returncode == 0, done.stderr
    assert key_id in done.stdout and QUICKSTART_SECRET not in done.stdout + done.stderr
    user = requests.get(f"{server.base}/user", auth=(key_id, QUICKSTART_SECRET), timeout=30)
    assert user.status_code == 200 and user.json()["user"]["id"] == key_id
    wrong = requests.get(f"{server.base}/user", auth=(key_id, QUICKSTART_SECRET[:-1] + "X"))
    assert wrong.status_code == 401
    s3 = boto3.client(
        "s3",
        endpoint_url=server.served.url,
        aws_access_key_id=key_id,
        aws_secret_access_key=QUICKSTART_SECRET,
        region_name="us-east-1",
    )
    assert isinstance(s3.list_buckets()["Buckets"], list)
    listing = graveler(server, "--json", "credentials", "list").stdout
    assert key_id in listing and '"admin"' in listing and QUICKSTART_SECRET not in listing
    database = server.served.home / "graveler.db"
    wal = database.with_name("graveler.db-wal")
    stored = database.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    assert key_id.encode() in stored and QUICKSTART_SECRET.encode() not in stored


def test_the_secret_may_come_from_standard_input(server: Server) -> None:
    key_id, secret = new_id(), secrets.token_urlsafe(30)
    done = graveler(
        server,
        "--json",
        "credentials",
        "create",
        "--read-only",
        "--access-key-id",
        key_id,
        "--secret-access-key",
        "-",
        stdin=secret + "\n",
    )
    assert done.returncode == 0, done.stderr
    assert '"access_key_id": "' + key_id + '"' in done.stdout and secret not in done.stdout
    reader = requests.get(f"{server.base}/repositories", auth=(key_id, secret), timeout=30)
    assert reader.status_code == 200
    refused = requests.post(
        f"{server.base}/repositories",
        auth=(key_id, secret),
        json={"name": "never", "storage_namespace": "local://never"},
        timeout=30,
    )
    assert refused.status_code == 403  # the scope given at import holds


def test_a_taken_id_is_refused_and_the_first_key_kept(server: Server) -> None:
    key_id = new_id()
    args = ("credentials", "create", "--access-key-id", key_id, "--secret-access-key")
    assert graveler(server, *args, QUICKSTART_SECRET).returncode == 0
    other = "Z" * 40
    again = graveler(server, *args, other)
    assert again.returncode == 4  # a conflict
    assert f"access key '{key_id}' already exists" in again.stderr
    assert f"graveler credentials delete {key_id}" in again.stderr
    assert other not in again.stdout + again.stderr
    kept = requests.get(f"{server.base}/user", auth=(key_id, QUICKSTART_SECRET), timeout=30)
    assert kept.status_code == 200
    assert requests.get(f"{server.base}/user", auth=(key_id, other)).status_code == 401


MALFORMED = [
    ("akiaiosfolquickstart", QUICKSTART_SECRET, "upper-case letters and digits"),
    ("AKIA-IOSFOLQUICKSTART", QUICKSTART_SECRET, "upper-case letters and digits"),
    ("AKIASHORT", QUICKSTART_SECRET, "16 to 128"),
    ("A" * 129, QUICKSTART_SECRET, "16 to 128"),
    (None, "tooshort-secret", "has 15 characters"),
    (None, "with a space in the secret", "without spaces"),
    (None, "s" * 129, "has 129 characters"),
]


def test_malformed_keys_are_refused_without_echoing_the_secret(server: Server) -> None:
    """Each malformed pair is refused by the check (in this process: the CLI's start-up would
    dominate); the CLI says why with exit code 2, and the secret appears nowhere."""
    from graveler.client import Graveler
    from graveler.core.errors import InvalidArgument
    from graveler.server.credentials import Credentials, server_key

    home, tried = server.served.home, []
    with Graveler(home) as gv:
        creds = Credentials(gv.access_keys, server_key(home, gv.database_url))
        for key_id, secret, message in MALFORMED:
            key_id = key_id or new_id()
            tried.append(key_id)
            with pytest.raises(InvalidArgument) as refused:
                creds.import_key(key_id, secret, admin=True)
            assert message in str(refused.value) and secret not in str(refused.value)
    key_id, secret, message = MALFORMED[0]
    done = graveler(
        server, "credentials", "create", "--access-key-id", key_id, "--secret-access-key", secret
    )
    assert done.returncode == 2 and message in done.stderr
    assert secret not in done.stdout + done.stderr
    listing = graveler(server, "--json", "credentials", "list").stdout
    assert not [k for k in tried if f'"{k}"' in listing]


@pytest.mark.parametrize("given", ["--access-key-id", "--secret-access-key"])
def test_the_id_and_the_secret_go_together(server: Server, given: str) -> None:
    value = new_id() if given == "--access-key-id" else QUICKSTART_SECRET
    done = graveler(server, "credentials", "create", given, value)
    assert done.returncode == 2
    assert "--access-key-id and --secret-access-key go together" in done.stderr
