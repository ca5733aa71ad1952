"""Branch views read through SQLAlchemy (the view, its winner rule and the cache are in
:mod:`graveler.storage.refs.branch_views`, shared with the embedded SQLite store)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from sqlalchemy import exists, select

from graveler.core.errors import BranchNotFound
from graveler.core.model import StagedEntry
from graveler.storage.refs import rows, sqlite_branch
from graveler.storage.refs.branch_views import StagedView, ViewCache, loaded_view, winners
from graveler.storage.refs.db import Database
from graveler.storage.refs.port import IterStaged
from graveler.storage.refs.schema import branches, staged_entries


def read_view(
    db: Database, iter_staged: IterStaged, repo: str, name: str, eager: int
) -> StagedView:
    """Read a branch view in one transaction, loading up to ``eager`` staged entries into
    memory when that is all of them. Raises BranchNotFound."""
    lookup = partial(_lookup, db)
    if not eager and db.direct_connection() is not None:
        branch, has_entries = sqlite_branch.get_branch_and_dirt(db, repo, name)
        clean = not has_entries and not branch.sealed_tokens
        return StagedView(branch, lookup, iter_staged, None, clean=clean)
    dirty = exists().where(staged_entries.c.token == branches.c.staging_token)
    query = select(branches, dirty.label("dirty")).where(
        branches.c.repo == repo, branches.c.name == name
    )
    with db.read(f"read branch {name!r}") as conn:
        row = conn.execute(query).first()
        if row is None:
            raise BranchNotFound(f"branch {name!r} not found in repository {repo!r}")
        branch = rows.to_branch(row)
        if not row.dirty and not branch.sealed_tokens:
            return StagedView(branch, lookup, iter_staged, None, clean=True)
        if not eager:
            return StagedView(branch, lookup, iter_staged, None, clean=False)
        tokens = branch.tokens
        found = conn.execute(
            select(
                staged_entries.c.token,
                staged_entries.c.key,
                staged_entries.c.identity,
                staged_entries.c.value,
            )
            .where(staged_entries.c.token.in_(tokens))
            .limit(eager + 1)
        ).all()
    return loaded_view(branch, lookup, iter_staged, [tuple(r) for r in found], eager)


def view_cache(db: Database, iter_staged: IterStaged) -> ViewCache:
    """A :class:`~graveler.storage.refs.branch_views.ViewCache` reading through SQLAlchemy."""
    return ViewCache(db, partial(read_view, db, iter_staged))


def _lookup(db: Database, tokens: Sequence[str], key: bytes) -> StagedEntry | None:
    """The winning entry staged for ``key`` under ``tokens``, read now."""
    query = select(staged_entries.c.token, staged_entries.c.identity, staged_entries.c.value).where(
        staged_entries.c.token.in_(tokens), staged_entries.c.key == key
    )
    with db.read("look up a staged entry") as conn:
        found = conn.execute(query).all()
    return winners(tokens, [(t, key, i, v) for t, i, v in found]).get(key)
