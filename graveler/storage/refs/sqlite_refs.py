"""RefStore on the embedded SQLite database through the standard library (see
:class:`graveler.storage.refs.port.RefStore` for the contracts;
:mod:`graveler.storage.refs.sql_refs` is the same over SQLAlchemy, and the conformance suite runs
both).

Every method is one transaction (or one statement). Writers take the database write lock
first (``BEGIN IMMEDIATE``), so the checks they make (the repository exists, the branch row is
the expected one) hold until they commit. Branch reads, swaps and moves are the statements of
:mod:`graveler.storage.refs.sqlite_branch`, shared with the SQLAlchemy store.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence

from graveler.core.errors import (
    BranchNotFound,
    CommitNotFound,
    InvalidArgument,
    RepositoryNotFound,
    TagNotFound,
)
from graveler.core.keyspace import successor, text_successor
from graveler.core.model import Branch, Commit, Repository, Tag
from graveler.storage.refs import rows, sqlite_branch
from graveler.storage.refs.sqlite_conn import format_time
from graveler.storage.refs.sqlite_db import SqliteDatabase, marks, records

_REPO_COLUMNS = (
    "name",
    "storage_namespace",
    "default_branch",
    "creation_date",
    "range_min_size",
    "range_max_size",
    "range_raggedness",
)
_BRANCH_COLUMNS = ("repo", "name", "commit_id", "staging_token", "sealed_tokens", "protected")
_REPOSITORIES = f"SELECT {', '.join(_REPO_COLUMNS)} FROM graveler_repositories"
_BRANCHES = "SELECT name, commit_id, staging_token, sealed_tokens, protected FROM graveler_branches"
_COMMITS = f"SELECT {', '.join(sqlite_branch.COMMIT_COLUMNS)} FROM graveler_commits"
_INSERT_BRANCH = (
    f"INSERT INTO graveler_branches ({', '.join(_BRANCH_COLUMNS)}, version) "
    f"VALUES ({marks(_BRANCH_COLUMNS)}, 1)"
)
_INSERT_COMMIT = (
    f"INSERT INTO graveler_commits ({', '.join(sqlite_branch.COMMIT_COLUMNS)}) "
    f"VALUES ({marks(sqlite_branch.COMMIT_COLUMNS)})"
)
_INSERT_TAG = "INSERT INTO graveler_tags (repo, name, commit_id) VALUES (?, ?, ?)"
_IN_CHUNK = 500  # tokens per IN (...) list


class SqliteRefStore:
    """Repositories, branches, tags and commits in the ``graveler_*`` tables."""

    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db

    # repositories ------------------------------------------------------------------------------

    def create_repository(self, repo: Repository, initial_commit: Commit, branch: Branch) -> None:
        """Insert the repository, its initial commit and default branch in one transaction.
        Raises AlreadyExists if the name is taken (nothing is written then)."""
        what = f"create repository {repo.name!r}"
        with self._db.write(what, duplicate=f"repository {repo.name!r} already exists") as conn:
            _insert_repository(conn, repo)
            conn.execute(_INSERT_COMMIT, sqlite_branch.commit_params(repo.name, initial_commit))
            conn.execute(_INSERT_BRANCH, _branch_params(repo.name, branch))

    def get_repository(self, name: str) -> Repository:
        """Raises RepositoryNotFound."""
        with self._db.statement(f"get repository {name!r}") as conn:
            found = records(conn.execute(f"{_REPOSITORIES} WHERE name = ?", (name,)))
        if not found:
            raise RepositoryNotFound(f"repository {name!r} not found")
        return rows.to_repository(found[0])

    def list_repositories(self) -> list[Repository]:
        """All repositories sorted by name (code point order)."""
        with self._db.statement("list repositories") as conn:
            found = records(conn.execute(f"{_REPOSITORIES} ORDER BY name"))
        return [rows.to_repository(r) for r in found]

    def delete_repository(self, name: str) -> None:
        """Delete the repository, its branches, tags, commits, hook runs and the staged
        entries of every token its branches reference. Raises RepositoryNotFound."""
        with self._db.write(f"delete repository {name!r}") as conn:
            _check_repository(conn, name)
            tokens: list[str] = []
            for branch in _branches(conn, name):
                tokens.extend(branch.tokens)
            delete_tokens(conn, tokens)
            for table in ("hook_runs", "tags", "commits", "branches"):
                conn.execute(f"DELETE FROM graveler_{table} WHERE repo = ?", (name,))
            conn.execute("DELETE FROM graveler_repositories WHERE name = ?", (name,))

    def restore_repository(
        self,
        repo: Repository,
        all_commits: Sequence[Commit],
        all_branches: Sequence[Branch],
        all_tags: Sequence[Tag],
    ) -> None:
        """Insert a repository with all its commits, branches and tags in one transaction
        (refs restore). Raises AlreadyExists if the name is taken; nothing is written then."""
        what = f"restore repository {repo.name!r}"
        with self._db.write(what, duplicate=f"repository {repo.name!r} already exists") as conn:
            _insert_repository(conn, repo)
            params = (sqlite_branch.commit_params(repo.name, c) for c in all_commits)
            conn.executemany(_INSERT_COMMIT, params)
            conn.executemany(_INSERT_BRANCH, [_branch_params(repo.name, b) for b in all_branches])
            conn.executemany(_INSERT_TAG, [(repo.name, t.name, t.commit_id) for t in all_tags])

    # branches ----------------------------------------------------------------------------------

    def create_branch(self, repo: str, branch: Branch) -> None:
        """Raises AlreadyExists (name taken), RepositoryNotFound."""
        duplicate = f"branch {branch.name!r} already exists in repository {repo!r}"
        with self._db.write(f"create branch {branch.name!r}", duplicate=duplicate) as conn:
            _check_repository(conn, repo)
            conn.execute(_INSERT_BRANCH, _branch_params(repo, branch))

    def get_branch(self, repo: str, name: str) -> Branch:
        """Raises BranchNotFound (also when the repository does not exist)."""
        return sqlite_branch.get_branch(self._db, repo, name)

    def list_branches(self, repo: str) -> list[Branch]:
        """Branches sorted by name. Raises RepositoryNotFound."""
        with self._db.read(f"list branches of {repo!r}") as conn:
            _check_repository(conn, repo)
            return _branches(conn, repo)

    def update_branch(
        self, repo: str, expected: Branch, new: Branch, *, durable: bool = True
    ) -> None:
        """Compare-and-swap the whole branch row from ``expected`` to ``new`` (same name);
        ``durable=False`` commits like a staging write. Raises BranchMoved, BranchNotFound,
        or InvalidArgument when the names differ."""
        _same_name(expected, new)
        sqlite_branch.swap_branch(self._db, repo, expected, new, durable=durable)

    def advance_branch(
        self, repo: str, expected: Branch, new: Branch, commit: Commit | None = None
    ) -> None:
        """Store ``commit`` (unless None; an existing ID is left as it is) and compare-and-swap
        the branch from ``expected`` to ``new``, in one durable transaction. Raises
        BranchMoved, BranchNotFound, RepositoryNotFound, InvalidArgument (names differ)."""
        _same_name(expected, new)
        sqlite_branch.advance_branch(self._db, repo, expected, new, commit)

    def delete_branch(self, repo: str, name: str) -> Branch:
        """Delete and return the branch row (its tokens are for the caller to drop).
        Raises BranchNotFound."""
        with self._db.write(f"delete branch {name!r}") as conn:
            found = _branches(conn, repo, name)
            if not found:
                raise BranchNotFound(f"branch {name!r} not found in repository {repo!r}")
            conn.execute("DELETE FROM graveler_branches WHERE repo = ? AND name = ?", (repo, name))
        return found[0]

    # tags --------------------------------------------------------------------------------------

    def create_tag(self, repo: str, tag: Tag) -> None:
        """Raises AlreadyExists, RepositoryNotFound."""
        duplicate = f"tag {tag.name!r} already exists in repository {repo!r}"
        with self._db.write(f"create tag {tag.name!r}", duplicate=duplicate) as conn:
            _check_repository(conn, repo)
            conn.execute(_INSERT_TAG, (repo, tag.name, tag.commit_id))

    def get_tag(self, repo: str, name: str) -> Tag:
        """Raises TagNotFound."""
        query = "SELECT commit_id FROM graveler_tags WHERE repo = ? AND name = ?"
        with self._db.statement(f"get tag {name!r}") as conn:
            row = conn.execute(query, (repo, name)).fetchone()
        if row is None:
            raise TagNotFound(f"tag {name!r} not found in repository {repo!r}")
        return Tag(name, row[0])

    def list_tags(self, repo: str) -> list[Tag]:
        """Tags sorted by name. Raises RepositoryNotFound."""
        query = "SELECT name, commit_id FROM graveler_tags WHERE repo = ? ORDER BY name"
        with self._db.read(f"list tags of {repo!r}") as conn:
            _check_repository(conn, repo)
            return [Tag(name, commit_id) for name, commit_id in conn.execute(query, (repo,))]

    def delete_tag(self, repo: str, name: str) -> None:
        """Raises TagNotFound."""
        with self._db.write(f"delete tag {name!r}") as conn:
            deleted = conn.execute(
                "DELETE FROM graveler_tags WHERE repo = ? AND name = ?", (repo, name)
            ).rowcount
            if deleted == 0:
                raise TagNotFound(f"tag {name!r} not found in repository {repo!r}")

    # commits -----------------------------------------------------------------------------------

    def add_commit(self, repo: str, commit: Commit) -> None:
        """Insert a commit; an existing ID is left as it is (IDs are content hashes).
        Raises RepositoryNotFound."""
        with self._db.write(f"add commit {commit.id!r}") as conn:
            _check_repository(conn, repo)
            conn.execute(sqlite_branch.ADD_COMMIT, sqlite_branch.commit_params(repo, commit))

    def get_commit(self, repo: str, commit_id: str) -> Commit:
        """Raises CommitNotFound."""
        with self._db.statement(f"get commit {commit_id!r}") as conn:
            found = records(
                conn.execute(f"{_COMMITS} WHERE repo = ? AND id = ?", (repo, commit_id))
            )
        if not found:
            raise CommitNotFound(f"commit {commit_id!r} not found in repository {repo!r}")
        return rows.to_commit(found[0])

    def commits_with_prefix(self, repo: str, prefix: str, limit: int = 2) -> list[str]:
        """Up to ``limit`` commit IDs starting with ``prefix``, smallest first: a range scan
        ``prefix <= id < successor(prefix)`` on the (repo, id) primary key."""
        query, params = "SELECT id FROM graveler_commits WHERE repo = ? AND id >= ?", [repo, prefix]
        upper = text_successor(prefix)
        if upper is not None:
            query, params = query + " AND id < ?", [*params, upper]
        with self._db.statement(f"find commits with prefix {prefix!r}") as conn:
            found = conn.execute(query + " ORDER BY id LIMIT ?", (*params, limit)).fetchall()
        return [commit_id for (commit_id,) in found if commit_id.startswith(prefix)]

    def iter_commits(self, repo: str) -> Iterator[Commit]:
        """Every commit of the repository, in ID order, read in pages of
        :data:`graveler.storage.refs.rows.ITER_BATCH` (each page its own statement, so commits added
        meanwhile may or may not appear)."""
        after = ""
        while True:
            batch = rows.ITER_BATCH
            query = f"{_COMMITS} WHERE repo = ? AND id > ? ORDER BY id LIMIT ?"
            with self._db.statement(f"list commits of {repo!r}") as conn:
                page = records(conn.execute(query, (repo, after, batch)))
            yield from map(rows.to_commit, page)
            if len(page) < batch:
                return
            after = page[-1].id


def _insert_repository(conn: sqlite3.Connection, repo: Repository) -> None:
    values = rows.repository_row(repo)
    values["creation_date"] = format_time(values["creation_date"])
    query = f"INSERT INTO graveler_repositories ({', '.join(_REPO_COLUMNS)}) VALUES "
    conn.execute(query + f"({marks(_REPO_COLUMNS)})", [values[c] for c in _REPO_COLUMNS])


def _branch_params(repo: str, branch: Branch) -> tuple[object, ...]:
    values = rows.branch_values(branch)
    return (repo, branch.name, *(values[c] for c in _BRANCH_COLUMNS[2:]))


def _branches(conn: sqlite3.Connection, repo: str, name: str | None = None) -> list[Branch]:
    """The repository's branches sorted by name (or the one named ``name``)."""
    if name is None:
        found = conn.execute(f"{_BRANCHES} WHERE repo = ? ORDER BY name", (repo,))
    else:
        found = conn.execute(f"{_BRANCHES} WHERE repo = ? AND name = ?", (repo, name))
    return [rows.to_branch(r) for r in records(found)]


def _check_repository(conn: sqlite3.Connection, name: str) -> None:
    """Raises RepositoryNotFound (inside a write transaction, the answer holds until it
    commits: no other writer runs meanwhile)."""
    query = "SELECT 1 FROM graveler_repositories WHERE name = ?"
    if conn.execute(query, (name,)).fetchone() is None:
        raise RepositoryNotFound(f"repository {name!r} not found")


def _same_name(expected: Branch, new: Branch) -> None:
    if new.name != expected.name:
        raise InvalidArgument(f"cannot rename branch {expected.name!r} to {new.name!r}")


def delete_tokens(conn: sqlite3.Connection, tokens: Sequence[str], prefix: bytes = b"") -> None:
    """Delete the staged entries of ``tokens`` (only keys starting with ``prefix``) inside
    ``conn``'s transaction."""
    upper = successor(prefix)
    for start in range(0, len(tokens), _IN_CHUNK):
        chunk = list(tokens[start : start + _IN_CHUNK])
        query = f"DELETE FROM graveler_staged_entries WHERE token IN ({marks(chunk)})"
        params: list[object] = list(chunk)
        if prefix:
            query, params = query + " AND key >= ?", [*params, prefix]
        if upper is not None:
            query, params = query + " AND key < ?", [*params, upper]
        conn.execute(query, params)
