"""The sentinel secrets of the secret-leak tests, the URLs that carry them into every error
path the suite knows, and the check that they never come out."""

from __future__ import annotations

import os
import socket
import traceback
from collections.abc import Iterable

import pytest

PASSWORD = "Sentinel7PW"  # letters and digits only: it is the same string percent-encoded
S3_SECRET = "S3secretSentinel9"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bad_urls() -> dict[str, str]:
    """Database URLs with the sentinel password that fail in different places."""
    port = closed_port()
    urls = {
        "unreachable server": f"postgresql+psycopg://user:{PASSWORD}@127.0.0.1:{port}/db",
        "malformed port": f"postgresql+psycopg://user:{PASSWORD}@127.0.0.1:notaport/db",
        "unencoded @ in the password": f"postgresql+psycopg://user:{PASSWORD}@x@127.0.0.1:{port}/db",
        "password as a query value": f"postgresql+psycopg://127.0.0.1:{port}/db?password={PASSWORD}",
        "unsupported database": f"mysql://user:{PASSWORD}@127.0.0.1/db",
        "driver not installed": f"postgresql+pg8000://user:{PASSWORD}@127.0.0.1:{port}/db",
    }
    pg = os.environ.get("GRAVELER_TEST_POSTGRES_URL")
    if pg:  # the real server, refusing a wrong password
        from sqlalchemy.engine import make_url

        wrong = make_url(pg).set(password=PASSWORD)
        urls["wrong password"] = wrong.render_as_string(hide_password=False)
    return urls


def shown(exc: BaseException) -> str:
    """Everything a person could see of ``exc``: its text, repr and full traceback with the
    exceptions it was raised from."""
    return f"{exc}\n{exc!r}\n" + "".join(traceback.format_exception(exc))


def assert_hidden(*texts: str | Iterable[str]) -> None:
    for text in texts:
        joined = text if isinstance(text, str) else "\n".join(text)
        assert PASSWORD not in joined, f"the database password leaked: {joined[-2000:]}"
        assert S3_SECRET not in joined, f"the S3 secret leaked: {joined[-2000:]}"


URLS = bad_urls()
each_url = pytest.mark.parametrize("url", URLS.values(), ids=URLS.keys())
