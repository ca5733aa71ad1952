"""RefStore over SQL (see :class:`graveler.storage.refs.port.RefStore` for the contracts).

Every method runs in one transaction. Writers lock the rows they depend on: ``FOR UPDATE`` /
``FOR KEY SHARE`` on PostgreSQL, while on SQLite the ``BEGIN IMMEDIATE`` write lock already
excludes every other writer (SQLAlchemy renders no ``FOR ...`` clause there).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from sqlalchemy import ColumnElement, Connection, delete, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from graveler.core.errors import (
    BranchMoved,
    BranchNotFound,
    CommitNotFound,
    InvalidArgument,
    RepositoryNotFound,
    TagNotFound,
)
from graveler.core.keyspace import text_successor
from graveler.core.model import Branch, Commit, Repository, Tag
from graveler.storage.refs import rows, sqlite_branch
from graveler.storage.refs.db import Database
from graveler.storage.refs.schema import branches, commits, hook_runs, repositories, tags
from graveler.storage.refs.sql_staging import delete_tokens


class SqlRefStore:
    """Repositories, branches, tags and commits in the ``graveler_*`` tables."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # repositories ------------------------------------------------------------------------------

    def create_repository(self, repo: Repository, initial_commit: Commit, branch: Branch) -> None:
        """Insert the repository, its initial commit and default branch in one transaction.
        Raises AlreadyExists if the name is taken (nothing is written then)."""
        what = f"create repository {repo.name!r}"
        with self._db.write(what, duplicate=f"repository {repo.name!r} already exists") as conn:
            conn.execute(insert(repositories).values(rows.repository_row(repo)))
            conn.execute(insert(commits).values(rows.commit_row(repo.name, initial_commit)))
            conn.execute(
                insert(branches).values(
                    repo=repo.name, name=branch.name, version=1, **rows.branch_values(branch)
                )
            )

    def get_repository(self, name: str) -> Repository:
        """Raises RepositoryNotFound."""
        with self._db.read(f"get repository {name!r}") as conn:
            row = conn.execute(select(repositories).where(repositories.c.name == name)).first()
        if row is None:
            raise RepositoryNotFound(f"repository {name!r} not found")
        return rows.to_repository(row)

    def list_repositories(self) -> list[Repository]:
        """All repositories sorted by name (code point order on both backends)."""
        with self._db.read("list repositories") as conn:
            result = conn.execute(select(repositories).order_by(repositories.c.name)).all()
        return [rows.to_repository(row) for row in result]

    def delete_repository(self, name: str) -> None:
        """Delete the repository, its branches, tags, commits and the staged entries of every
        token its branches reference (staging and sealed). Raises RepositoryNotFound.

        On PostgreSQL the repository and branch rows are locked first, so a concurrent
        ``stage`` either finishes before (its entries are deleted too) or fails with
        BranchNotFound; ``create_branch`` waits and then fails with RepositoryNotFound."""
        with self._db.write(f"delete repository {name!r}") as conn:
            _lock_repository(conn, name, exclusive=True)
            branch_rows = conn.execute(
                select(branches).where(branches.c.repo == name).with_for_update()
            ).all()
            tokens: list[str] = []
            for branch in map(rows.to_branch, branch_rows):
                tokens.append(branch.staging_token)
                tokens.extend(branch.sealed_tokens)
            delete_tokens(conn, tokens)
            for table in (hook_runs, tags, commits, branches):
                conn.execute(delete(table).where(table.c.repo == name))
            conn.execute(delete(repositories).where(repositories.c.name == name))

    def restore_repository(
        self,
        repo: Repository,
        all_commits: Sequence[Commit],
        all_branches: Sequence[Branch],
        all_tags: Sequence[Tag],
    ) -> None:
        """Insert a repository with all its commits, branches and tags in one transaction
        (refs restore). The caller has checked that the refs are consistent. Raises
        AlreadyExists if the name is taken; nothing is written then."""
        what = f"restore repository {repo.name!r}"
        with self._db.write(what, duplicate=f"repository {repo.name!r} already exists") as conn:
            conn.execute(insert(repositories).values(rows.repository_row(repo)))
            for start in range(0, len(all_commits), rows.ITER_BATCH):
                batch = all_commits[start : start + rows.ITER_BATCH]
                conn.execute(insert(commits), [rows.commit_row(repo.name, c) for c in batch])
            branch_rows = [
                {"repo": repo.name, "name": b.name, "version": 1, **rows.branch_values(b)}
                for b in all_branches
            ]
            conn.execute(insert(branches), branch_rows)
            tag_rows = [
                {"repo": repo.name, "name": t.name, "commit_id": t.commit_id} for t in all_tags
            ]
            if tag_rows:
                conn.execute(insert(tags), tag_rows)

    # branches ----------------------------------------------------------------------------------

    def create_branch(self, repo: str, branch: Branch) -> None:
        """Raises AlreadyExists (name taken), RepositoryNotFound."""
        duplicate = f"branch {branch.name!r} already exists in repository {repo!r}"
        with self._db.write(f"create branch {branch.name!r}", duplicate=duplicate) as conn:
            _lock_repository(conn, repo, exclusive=False)
            conn.execute(
                insert(branches).values(
                    repo=repo, name=branch.name, version=1, **rows.branch_values(branch)
                )
            )

    def get_branch(self, repo: str, name: str) -> Branch:
        """Raises BranchNotFound (also when the repository does not exist)."""
        if self._db.direct_connection() is not None:
            return sqlite_branch.get_branch(self._db, repo, name)
        with self._db.read(f"get branch {name!r}") as conn:
            row = conn.execute(select(branches).where(*_branch_key(repo, name))).first()
        if row is None:
            raise BranchNotFound(f"branch {name!r} not found in repository {repo!r}")
        return rows.to_branch(row)

    def list_branches(self, repo: str) -> list[Branch]:
        """Branches sorted by name. Raises RepositoryNotFound."""
        with self._db.read(f"list branches of {repo!r}") as conn:
            _lock_repository(conn, repo, exclusive=None)
            query = select(branches).where(branches.c.repo == repo).order_by(branches.c.name)
            result = conn.execute(query).all()
        return [rows.to_branch(row) for row in result]

    def update_branch(
        self, repo: str, expected: Branch, new: Branch, *, durable: bool = True
    ) -> None:
        """Compare-and-swap the whole branch row from ``expected`` to ``new`` (same name).

        The row is read ``FOR UPDATE`` (PostgreSQL; waits for in-flight ``stage`` calls, which
        hold it ``FOR SHARE``), compared with ``expected``, then updated where its version is
        unchanged; the row count is checked. ``durable=False`` (a commit's seal, made durable
        by the branch move that follows it) commits like a staging write on SQLite. Raises
        BranchMoved, BranchNotFound, or InvalidArgument when the names differ."""
        if new.name != expected.name:
            raise InvalidArgument(f"cannot rename branch {expected.name!r} to {new.name!r}")
        if self._db.direct_connection() is not None:
            sqlite_branch.swap_branch(self._db, repo, expected, new, durable=durable)
            return
        with self._db.write(f"update branch {expected.name!r}", durable=durable) as conn:
            _swap_branch(conn, repo, expected, new)

    def advance_branch(
        self, repo: str, expected: Branch, new: Branch, commit: Commit | None = None
    ) -> None:
        """Store ``commit`` (unless None; an existing ID is left as it is) and compare-and-swap
        the branch from ``expected`` to ``new``, in one transaction: the commit is recorded
        exactly when the branch moves to it. Raises BranchMoved, BranchNotFound,
        RepositoryNotFound, InvalidArgument (names differ)."""
        if new.name != expected.name:
            raise InvalidArgument(f"cannot rename branch {expected.name!r} to {new.name!r}")
        if self._db.direct_connection() is not None:
            sqlite_branch.advance_branch(self._db, repo, expected, new, commit)
            return
        with self._db.write(f"move branch {expected.name!r}") as conn:
            if commit is not None:
                _lock_repository(conn, repo, exclusive=False)
                dialect = postgresql if self._db.is_postgres else sqlite
                stmt = dialect.insert(commits).values(rows.commit_row(repo, commit))
                conn.execute(stmt.on_conflict_do_nothing(index_elements=["repo", "id"]))
            _swap_branch(conn, repo, expected, new)

    def delete_branch(self, repo: str, name: str) -> Branch:
        """Delete and return the branch row (its tokens are for the caller to drop).
        Raises BranchNotFound."""
        with self._db.write(f"delete branch {name!r}") as conn:
            row = conn.execute(
                select(branches).where(*_branch_key(repo, name)).with_for_update()
            ).first()
            if row is None:
                raise BranchNotFound(f"branch {name!r} not found in repository {repo!r}")
            conn.execute(delete(branches).where(*_branch_key(repo, name)))
        return rows.to_branch(row)

    # tags --------------------------------------------------------------------------------------

    def create_tag(self, repo: str, tag: Tag) -> None:
        """Raises AlreadyExists, RepositoryNotFound."""
        duplicate = f"tag {tag.name!r} already exists in repository {repo!r}"
        with self._db.write(f"create tag {tag.name!r}", duplicate=duplicate) as conn:
            _lock_repository(conn, repo, exclusive=False)
            conn.execute(insert(tags).values(repo=repo, name=tag.name, commit_id=tag.commit_id))

    def get_tag(self, repo: str, name: str) -> Tag:
        """Raises TagNotFound."""
        with self._db.read(f"get tag {name!r}") as conn:
            query = select(tags).where(tags.c.repo == repo, tags.c.name == name)
            row = conn.execute(query).first()
        if row is None:
            raise TagNotFound(f"tag {name!r} not found in repository {repo!r}")
        return rows.to_tag(row)

    def list_tags(self, repo: str) -> list[Tag]:
        """Tags sorted by name. Raises RepositoryNotFound."""
        with self._db.read(f"list tags of {repo!r}") as conn:
            _lock_repository(conn, repo, exclusive=None)
            query = select(tags).where(tags.c.repo == repo).order_by(tags.c.name)
            result = conn.execute(query).all()
        return [rows.to_tag(row) for row in result]

    def delete_tag(self, repo: str, name: str) -> None:
        """Raises TagNotFound."""
        with self._db.write(f"delete tag {name!r}") as conn:
            result = conn.execute(delete(tags).where(tags.c.repo == repo, tags.c.name == name))
            if result.rowcount == 0:
                raise TagNotFound(f"tag {name!r} not found in repository {repo!r}")

    # commits -----------------------------------------------------------------------------------

    def add_commit(self, repo: str, commit: Commit) -> None:
        """Insert a commit; an existing ID is left as it is (IDs are content hashes).
        Raises RepositoryNotFound."""
        dialect = postgresql if self._db.is_postgres else sqlite
        with self._db.write(f"add commit {commit.id!r}") as conn:
            _lock_repository(conn, repo, exclusive=False)
            stmt = dialect.insert(commits).values(rows.commit_row(repo, commit))
            conn.execute(stmt.on_conflict_do_nothing(index_elements=["repo", "id"]))

    def get_commit(self, repo: str, commit_id: str) -> Commit:
        """Raises CommitNotFound."""
        with self._db.read(f"get commit {commit_id!r}") as conn:
            query = select(commits).where(commits.c.repo == repo, commits.c.id == commit_id)
            row = conn.execute(query).first()
        if row is None:
            raise CommitNotFound(f"commit {commit_id!r} not found in repository {repo!r}")
        return rows.to_commit(row)

    def commits_with_prefix(self, repo: str, prefix: str, limit: int = 2) -> list[str]:
        """Up to ``limit`` commit IDs starting with ``prefix``, smallest first: a range scan
        ``prefix <= id < successor(prefix)`` on the (repo, id) primary key."""
        query = select(commits.c.id).where(commits.c.repo == repo, commits.c.id >= prefix)
        upper = text_successor(prefix)
        if upper is not None:
            query = query.where(commits.c.id < upper)
        query = query.order_by(commits.c.id).limit(limit)
        with self._db.read(f"find commits with prefix {prefix!r}") as conn:
            found = list(conn.execute(query).scalars())
        return [commit_id for commit_id in found if commit_id.startswith(prefix)]

    def iter_commits(self, repo: str) -> Iterator[Commit]:
        """Every commit of the repository, in ID order, read in pages of 1,000 (each page its
        own short transaction, so commits added meanwhile may or may not appear)."""
        after: str | None = None
        while True:
            query = select(commits).where(commits.c.repo == repo)
            if after is not None:
                query = query.where(commits.c.id > after)
            query = query.order_by(commits.c.id).limit(rows.ITER_BATCH)
            with self._db.read(f"list commits of {repo!r}") as conn:
                page = conn.execute(query).all()
            yield from map(rows.to_commit, page)
            if len(page) < rows.ITER_BATCH:
                return
            after = page[-1].id


def _branch_key(repo: str, name: str) -> tuple[ColumnElement[bool], ColumnElement[bool]]:
    return branches.c.repo == repo, branches.c.name == name


def _swap_branch(conn: Connection, repo: str, expected: Branch, new: Branch) -> None:
    """The compare-and-swap of :meth:`SqlRefStore.update_branch`, inside ``conn``'s
    transaction."""
    row = conn.execute(
        select(branches).where(*_branch_key(repo, expected.name)).with_for_update()
    ).first()
    if row is None:
        raise BranchNotFound(f"branch {expected.name!r} not found in repository {repo!r}")
    if rows.to_branch(row) != expected:
        raise BranchMoved(f"branch {expected.name!r} moved: expected {expected}")
    result = conn.execute(
        update(branches)
        .where(*_branch_key(repo, expected.name), branches.c.version == row.version)
        .values(version=row.version + 1, **rows.branch_values(new))
    )
    if result.rowcount != 1:
        raise BranchMoved(f"branch {expected.name!r} moved during the update")


def _lock_repository(conn: Connection, name: str, *, exclusive: bool | None) -> None:
    """Check that the repository exists, locking its row on PostgreSQL: ``FOR UPDATE`` when
    ``exclusive``, ``FOR KEY SHARE`` (what a foreign-key insert takes) when False, no lock when
    None. Raises RepositoryNotFound."""
    query = select(repositories.c.name).where(repositories.c.name == name)
    if exclusive is not None:
        query = query.with_for_update(read=not exclusive, key_share=not exclusive)
    if conn.execute(query).first() is None:
        raise RepositoryNotFound(f"repository {name!r} not found")
