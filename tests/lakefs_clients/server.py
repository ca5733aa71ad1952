"""``graveler serve`` for lakeFS's clients: started the documented way (tests/serving.py), with
an admin key made by ``graveler credentials create --admin``, behind a :class:`ContractTap`
so that every answer a client gets is checked against lakeFS's OpenAPI document.

Clients are given :attr:`LakeFS.url` (the tap) and never the server's own port.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from tests.lakefs_clients.contract import PREFIX, contract
from tests.lakefs_clients.tap import ContractTap
from tests.serving import Key, Served


@dataclass
class LakeFS:
    """A running server, the tap in front of it and an admin key."""

    served: Served
    tap: ContractTap
    key: Key

    @property
    def url(self) -> str:
        """What a lakeFS client calls the server's address (no ``/api/v1``)."""
        return self.tap.url

    @property
    def api(self) -> str:
        """The API's base URL, as lakefs-sdk's ``host`` and Hadoop's endpoint take it."""
        return self.tap.url + PREFIX


def unique(prefix: str) -> str:
    """A repository or branch name no other test uses."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@contextlib.contextmanager
def lakefs_server(
    home: Path,
    *serve_args: str,
    env: dict[str, str] | None = None,
    database_url: str | None = None,
) -> Iterator[LakeFS]:
    """``graveler serve SERVE_ARGS`` over ``home`` (and ``database_url``: SQLite in ``home``
    when None), its tap and an admin key."""
    checker = contract()
    with Served(home, database_url, *serve_args, env=env) as served:
        key = served.credentials("--admin")
        base = urlsplit(served.url)
        assert base.hostname is not None and base.port is not None
        tap = ContractTap((base.hostname, base.port), checker)
        try:
            yield LakeFS(served, tap, key)
        finally:
            tap.close()
