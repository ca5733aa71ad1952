"""The branch-row statements of a commit on SQLite, through the driver itself.

A commit of a few staged entries is dominated by fixed costs, and on SQLite most of them were
SQLAlchemy's: building, caching and executing a statement cost about ten times what SQLite
takes to run it (a branch read was 0.47 ms through SQLAlchemy, 0.03 ms through ``sqlite3``).
The statements a commit runs (read the branch with whether its staging token holds entries,
compare-and-swap the row, record the commit and move the branch, drop the sealed tokens) are
therefore run here on the calling thread's own connection (``db.direct_transaction`` of the
SQLAlchemy store's :class:`graveler.storage.refs.db.Database`, or of the embedded store's
:class:`graveler.storage.refs.sqlite_db.SqliteDatabase`), with the same transaction discipline as
their SQLAlchemy forms in :mod:`graveler.storage.refs.sql_refs` and
:mod:`graveler.storage.refs.sql_staging`, whose contracts they keep: ``BEGIN IMMEDIATE``,
``synchronous=FULL`` for a durable write and ``NORMAL`` for a staging one. PostgreSQL and in-memory
SQLite keep the SQLAlchemy forms.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from graveler.core.errors import BranchMoved, BranchNotFound, RepositoryNotFound
from graveler.core.model import Branch, Commit
from graveler.storage.refs.rows import branch_values, commit_row
from graveler.storage.refs.sqlite_conn import DirectSqlite as Database
from graveler.storage.refs.sqlite_conn import format_time

_BRANCH = (
    "SELECT commit_id, staging_token, sealed_tokens, protected, version FROM graveler_branches "
    "WHERE repo = ? AND name = ?"
)
_BRANCH_AND_DIRT = (
    "SELECT commit_id, staging_token, sealed_tokens, protected, version, EXISTS ("
    "SELECT 1 FROM graveler_staged_entries WHERE token = staging_token) "
    "FROM graveler_branches WHERE repo = ? AND name = ?"
)
_SWAP = (
    "UPDATE graveler_branches SET commit_id = ?, staging_token = ?, sealed_tokens = ?, "
    "protected = ?, version = ? WHERE repo = ? AND name = ? AND version = ?"
)
_REPOSITORY = "SELECT 1 FROM graveler_repositories WHERE name = ?"
COMMIT_COLUMNS = (
    "repo",
    "id",
    "parents",
    "metarange_id",
    "message",
    "committer",
    "creation_date",
    "metadata",
    "generation",
)
ADD_COMMIT = (
    f"INSERT INTO graveler_commits ({', '.join(COMMIT_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(COMMIT_COLUMNS))}) ON CONFLICT (repo, id) DO NOTHING"
)


#: Tokens per ``DELETE ... IN`` (SQLite allows 32,766 parameters; far fewer keep it cheap).
_IN_CHUNK = 500


def get_branch(db: Database, repo: str, name: str) -> Branch:
    """The branch row, read outside any transaction (one statement sees one snapshot).
    Raises BranchNotFound."""
    with db.direct_transaction(f"get branch {name!r}", write=False) as conn:
        row = conn.execute(_BRANCH, (repo, name)).fetchone()
    if row is None:
        raise BranchNotFound(f"branch {name!r} not found in repository {repo!r}")
    return _branch(name, row)


def get_branch_and_dirt(db: Database, repo: str, name: str) -> tuple[Branch, bool]:
    """The branch row and whether its staging token holds entries, in one statement.
    Raises BranchNotFound."""
    with db.direct_transaction(f"read branch {name!r}", write=False) as conn:
        return branch_and_dirt(conn, repo, name)


def branch_and_dirt(conn: sqlite3.Connection, repo: str, name: str) -> tuple[Branch, bool]:
    """:func:`get_branch_and_dirt` on ``conn`` (inside the caller's transaction)."""
    row = conn.execute(_BRANCH_AND_DIRT, (repo, name)).fetchone()
    if row is None:
        raise BranchNotFound(f"branch {name!r} not found in repository {repo!r}")
    return _branch(name, row), bool(row[5])


def swap_branch(db: Database, repo: str, expected: Branch, new: Branch, *, durable: bool) -> None:
    """:meth:`graveler.storage.refs.sql_refs.SqlRefStore.update_branch` (names already checked)."""
    with db.direct_transaction(f"update branch {expected.name!r}", durable=durable) as conn:
        _swap(conn, repo, expected, new)


def advance_branch(
    db: Database, repo: str, expected: Branch, new: Branch, commit: Commit | None
) -> None:
    """:meth:`graveler.storage.refs.sql_refs.SqlRefStore.advance_branch` (names already checked):
    the commit recorded and the branch moved in one durable transaction."""
    with db.direct_transaction(f"move branch {expected.name!r}", durable=True) as conn:
        if commit is not None:
            if conn.execute(_REPOSITORY, (repo,)).fetchone() is None:
                raise RepositoryNotFound(f"repository {repo!r} not found")
            conn.execute(ADD_COMMIT, commit_params(repo, commit))
        _swap(conn, repo, expected, new)


def drop_tokens(db: Database, tokens: Sequence[str]) -> None:
    """Delete every staged entry of ``tokens`` in one staging transaction."""
    with db.direct_transaction("drop staging tokens", durable=False) as conn:
        for start in range(0, len(tokens), _IN_CHUNK):
            chunk = tokens[start : start + _IN_CHUNK]
            marks = ", ".join("?" * len(chunk))
            conn.execute(f"DELETE FROM graveler_staged_entries WHERE token IN ({marks})", chunk)


def _swap(conn: sqlite3.Connection, repo: str, expected: Branch, new: Branch) -> None:
    row = conn.execute(_BRANCH, (repo, expected.name)).fetchone()
    if row is None:
        raise BranchNotFound(f"branch {expected.name!r} not found in repository {repo!r}")
    if _branch(expected.name, row) != expected:
        raise BranchMoved(f"branch {expected.name!r} moved: expected {expected}")
    values = branch_values(new)
    changed = conn.execute(
        _SWAP,
        (
            values["commit_id"],
            values["staging_token"],
            values["sealed_tokens"],
            values["protected"],
            row[4] + 1,
            repo,
            expected.name,
            row[4],
        ),
    ).rowcount
    if changed != 1:
        raise BranchMoved(f"branch {expected.name!r} moved during the update")


def _branch(name: str, row: tuple[object, ...]) -> Branch:
    commit_id, token, sealed, protected = row[0], row[1], row[2], row[3]
    return Branch(
        name=name,
        commit_id=str(commit_id),
        staging_token=str(token),
        sealed_tokens=tuple(json.loads(str(sealed))),
        protected=bool(protected),
    )


def commit_params(repo: str, commit: Commit) -> tuple[object, ...]:
    """The commit row as SQLAlchemy binds it on SQLite (:func:`format_time`: naive UTC text
    with microseconds; a naive time raises InvalidArgument), in :data:`COMMIT_COLUMNS`
    order."""
    values = commit_row(repo, commit)
    values["creation_date"] = format_time(values["creation_date"])
    return tuple(values[column] for column in COMMIT_COLUMNS)
