"""``graveler serve`` started the documented way, as a separate process, for tests that drive
it through real clients (S3 SDKs, the aws CLI, Spark, pyiceberg...).

    with Served(home, database_url) as server:
        key = server.credentials()                      # graveler credentials create --json
        boto3.client("s3", endpoint_url=server.url, **key.boto)

The server listens on a free port (``--port 0``); its first line of output (``--json``) gives
the URLs. Its stderr (the access log, when on) goes to a file, :attr:`Served.stderr_path`.
Stopping it sends SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

GRAVELER = [sys.executable, "-m", "graveler.cli"]

#: Variables that would send a client past loopback (proxies) or to the user's own AWS set-up
#: or graveler deployment.
ESCAPES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "AWS_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "GRAVELER_HOME",
    "GRAVELER_DATABASE_URL",
)
#: lakeFS clients' own settings (lakectl, the lakefs SDK), which would point them elsewhere.
LAKEFS_CLIENT_SETTINGS = (
    "LAKECTL_SERVER_ENDPOINT_URL",
    "LAKECTL_CREDENTIALS_ACCESS_KEY_ID",
    "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY",
    "LAKEFS_ENDPOINT",
    "LAKEFS_ACCESS_KEY_ID",
    "LAKEFS_SECRET_ACCESS_KEY",
)
#: AWS clients on loopback only: no proxy for it, no instance metadata, no user files.
LOOPBACK_AWS = {
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": "/nonexistent/graveler-test-aws-config",
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/graveler-test-aws-creds",
}


@contextmanager
def isolated_env(
    unset: Iterable[str] = (), setting: Mapping[str, str] | None = None
) -> Iterator[None]:
    """The environment without :data:`ESCAPES` (and ``unset``), with :data:`LOOPBACK_AWS` (and
    ``setting``), for as long as the block runs."""
    with pytest.MonkeyPatch.context() as mp:
        for name in (*ESCAPES, *unset):
            mp.delenv(name, raising=False)
        for name, value in {**LOOPBACK_AWS, **(setting or {})}.items():
            mp.setenv(name, value)
        yield


@dataclass(frozen=True)
class Key:
    access_key_id: str
    secret_access_key: str

    @property
    def boto(self) -> dict[str, str]:
        return {
            "aws_access_key_id": self.access_key_id,
            "aws_secret_access_key": self.secret_access_key,
            "region_name": "us-east-1",
        }


#: Hadoop's provider for a fixed access key and secret.
SIMPLE_CREDENTIALS = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"


def s3a_settings(url: str, key: Key, bucket: str = "lake") -> dict[str, str]:
    """Hadoop settings that point ``s3a://BUCKET/...`` at the gateway at ``url`` with ``key``
    (per-bucket keys, path-style addressing, plain HTTP), as docs/s3-gateway.md gives them;
    few retries, so a refused call fails a test quickly."""
    prefix = f"fs.s3a.bucket.{bucket}."
    return {
        prefix + "endpoint": url,
        prefix + "endpoint.region": "us-east-1",
        prefix + "path.style.access": "true",
        prefix + "connection.ssl.enabled": "false",
        prefix + "access.key": key.access_key_id,
        prefix + "secret.key": key.secret_access_key,
        prefix + "aws.credentials.provider": SIMPLE_CREDENTIALS,
        "fs.s3a.impl.disable.cache": "true",
        "fs.s3a.attempts.maximum": "2",
        "fs.s3a.retry.limit": "2",
    }


class Served:
    """A ``graveler serve`` process over ``home`` (and ``database_url``, default SQLite in the
    home). Extra arguments go to ``graveler serve``."""

    def __init__(
        self,
        home: Path,
        database_url: str | None = None,
        *args: str,
        env: dict[str, str] | None = None,
    ) -> None:
        self.home = Path(home)
        self.database_url = database_url
        self.args = list(args)
        self.env = {**os.environ, **(env or {})}
        self.env.pop("GRAVELER_DATABASE_URL", None)
        self.process: subprocess.Popen[str] | None = None
        self.urls: dict[str, Any] = {}
        self.stderr_path = self.home.parent / f"serve-{os.getpid()}-{id(self)}.stderr"

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``graveler --home ... [--database-url ...] ARGS`` against the same state."""
        return subprocess.run(
            [*GRAVELER, *self._global(), *args],
            env=self.env,
            capture_output=True,
            text=True,
            check=check,
            timeout=120,
        )

    def credentials(self, *args: str) -> Key:
        """A new access key (``graveler credentials create --json ARGS``)."""
        doc = json.loads(self.cli("--json", "credentials", "create", *args).stdout)
        return Key(doc["access_key_id"], doc["secret_access_key"])

    def key(
        self,
        *,
        repositories: tuple[str, ...] | None = None,
        read_only: bool = False,
        admin: bool = False,
    ) -> Key:
        """A new access key made in this process (what ``credentials create`` does, without
        the CLI's start-up), for fixtures that need several."""
        from graveler.client import Graveler
        from graveler.server.credentials import Credentials, server_key

        with Graveler(self.home, self.database_url) as gv:
            creds = Credentials(gv.access_keys, server_key(self.home, gv.database_url))
            new = creds.create(repositories=repositories, read_only=read_only, admin=admin)
        return Key(new.access_key_id, new.secret_access_key)

    def repository(self, name: str, namespace: str) -> None:
        """Create repository ``name`` at ``namespace``, in this process."""
        from graveler.client import Graveler

        with Graveler(self.home, self.database_url) as gv:
            gv.create_repository(name, namespace)

    @property
    def url(self) -> str:
        return str(self.urls["s3"])

    def __enter__(self) -> Served:
        self.home.mkdir(parents=True, exist_ok=True)
        command = [*GRAVELER, *self._global(), "--json", "serve", "--port", "0", *self.args]
        with self.stderr_path.open("w") as stderr:  # a file: a pipe nobody reads would fill
            self.process = subprocess.Popen(
                command, env=self.env, stdout=subprocess.PIPE, stderr=stderr, text=True
            )
        self.urls = self._first_document()
        self._wait_ready()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)

    def _first_document(self) -> dict[str, Any]:
        """The JSON document ``serve --json`` prints before serving."""
        assert self.process is not None and self.process.stdout is not None
        text = ""
        while True:
            line = self.process.stdout.readline()
            if not line:
                self.process.wait(timeout=30)
                pytest.fail(f"graveler serve did not start: {self.stderr()[-2000:]}")
            text += line
            try:
                doc: dict[str, Any] = json.loads(text)
                return doc
            except json.JSONDecodeError:
                continue

    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""

    def _global(self) -> list[str]:
        args = ["--home", str(self.home)]
        if self.database_url:
            args += ["--database-url", self.database_url]
        return args

    def _wait_ready(self, timeout: float = 30.0) -> None:
        import urllib.error
        import urllib.request

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(self.urls["ui"], timeout=2).close()
                return
            except urllib.error.HTTPError:
                return  # it answers
            except OSError:
                time.sleep(0.05)
        pytest.fail("graveler serve did not answer in time")
