"""Staging a few entries on SQLite through the driver itself: the path of a single ``put``.

A ``stage`` call of a handful of entries is dominated by fixed costs: SQLAlchemy's statement
set-up and a separate read of the branch row. Here each entry is one statement that reads the
branch's current staging token, checks that the branch is not protected and upserts the
entry, all inside ``BEGIN IMMEDIATE ... COMMIT`` on the calling thread's own connection
(``db.direct_transaction``: no pool round trip), with the same
``synchronous=NORMAL`` as every staging write (see :meth:`graveler.storage.refs.db.Database.write`).
When the statement writes nothing, the branch is missing or protected: the transaction is
rolled back and the row is read to say which. The contract is
:meth:`graveler.storage.refs.port.StagingStore.stage`'s.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from graveler.core.errors import BranchNotFound, WriteToProtectedBranch
from graveler.core.model import StagedEntry
from graveler.storage.refs.sqlite_conn import DirectSqlite as Database
from graveler.storage.refs.stage_input import FEW_ENTRIES

#: Calls with at most this many entries take this path.
MAX_ENTRIES = FEW_ENTRIES
#: ``INSERT ... RETURNING`` needs SQLite 3.35; older libraries take the general path.
AVAILABLE = sqlite3.sqlite_version_info >= (3, 35, 0)

_UPSERT = (
    "INSERT INTO graveler_staged_entries (token, key, identity, value) "
    "SELECT staging_token, ?, ?, ? FROM graveler_branches "
    "WHERE repo = ? AND name = ? AND NOT protected "
    "ON CONFLICT (token, key) DO UPDATE SET identity = excluded.identity, value = excluded.value "
    "RETURNING token"
)
_BRANCH = "SELECT staging_token, protected FROM graveler_branches WHERE repo = ? AND name = ?"


def stage_few(
    db: Database,
    repo: str,
    branch: str,
    entries: Sequence[StagedEntry],
    before_commit: Callable[[], object] | None = None,
    check: Callable[[], object] | None = None,
) -> str:
    """Stage ``entries`` (already checked; one or more, at most :data:`MAX_ENTRIES`) in one
    transaction on the thread's direct connection, calling ``check`` first (the write lock
    is held from the start) and ``before_commit`` last inside it; return the token. Raises
    BranchNotFound, ProtectedBranch or StorageError (or what ``check`` or ``before_commit``
    raised, after rolling back)."""
    with db.direct_transaction(f"stage on branch {branch!r} of {repo!r}") as conn:
        if check is not None:
            check()
        token = None
        for entry in entries:
            row = (entry.key, entry.identity, entry.value, repo, branch)
            written = conn.execute(_UPSERT, row).fetchone()
            if written is None:
                raise _refusal(conn, repo, branch)
            token = written[0]
        if before_commit is not None:
            before_commit()
    return str(token)


def _refusal(conn: sqlite3.Connection, repo: str, branch: str) -> Exception:
    """Why the upsert wrote nothing: the branch is missing or protected."""
    if conn.execute(_BRANCH, (repo, branch)).fetchone() is None:
        return BranchNotFound(f"branch {branch!r} not found in repository {repo!r}")
    return WriteToProtectedBranch(
        f"branch {branch!r} is protected: write to another branch and merge into it"
    )
