"""Resolving ref expressions (see :mod:`graveler.views.refexpr`) against one repository.

A base is tried as a full commit ID, then a branch, then a tag, then a unique commit-ID
prefix; ``~N`` and ``^N`` then walk parents. Only a plain branch name (or ``branch$``)
resolves with its branch, so that reads of it include staged changes; ``branch@`` is the
branch's head commit alone.
"""

from __future__ import annotations

from contextlib import suppress

from graveler.core.errors import (
    BranchNotFound,
    CommitNotFound,
    InvalidRef,
    RefNotFound,
    TagNotFound,
)
from graveler.core.model import Commit, ResolvedRef
from graveler.views.context import RepoContext
from graveler.views.refexpr import looks_like_commit_prefix, parse_ref


def resolve(repo: RepoContext, ref: str, *, branches: bool = True) -> ResolvedRef:
    """Resolve ``ref``; raises InvalidRef for a malformed expression (or ``@`` / ``$`` on
    something that is not a branch), RefNotFound otherwise. ``branches=False`` skips the
    branch lookup, for a caller that already knows the base is no branch."""
    expr = parse_ref(ref)
    resolved = resolve_base(repo, expr.base, branches)
    if expr.is_plain:
        return resolved
    view = expr.branch_view
    if view is not None:
        if resolved.branch is None:
            raise InvalidRef(f"ref {ref!r}: '{view}' applies to branches only")
        return ResolvedRef(resolved.commit, resolved.branch if view == "$" else None, view)
    commit = resolved.commit
    for op, n in expr.modifiers:
        commit = _walk(repo, commit, op, n, ref)
    return ResolvedRef(commit)


def resolve_commit(repo: RepoContext, ref: str) -> Commit:
    """The commit ``ref`` names, refusing ``branch$`` (lakeFS: a commit cannot be taken from
    uncommitted changes). A plain branch name means its head commit."""
    resolved = resolve(repo, ref)
    if resolved.view == "$":
        raise InvalidRef(f"ref {ref!r} names uncommitted changes, not a commit")
    return resolved.commit


def resolve_base(repo: RepoContext, base: str, branches: bool = True) -> ResolvedRef:
    """A ref expression's base: commit ID, branch (unless ``branches`` is False), tag or
    unique commit-ID prefix."""
    if len(base) == 64 and looks_like_commit_prefix(base):
        try:
            return ResolvedRef(repo.get_commit(base))
        except CommitNotFound:
            pass
    if branches:
        with suppress(BranchNotFound):
            branch = repo.refs.get_branch(repo.name, base)
            return ResolvedRef(repo.get_commit(branch.commit_id), branch)
    try:
        return ResolvedRef(repo.get_commit(repo.refs.get_tag(repo.name, base).commit_id))
    except TagNotFound:
        pass
    if looks_like_commit_prefix(base):
        found = repo.refs.commits_with_prefix(repo.name, base, limit=2)
        if len(found) == 1:
            return ResolvedRef(repo.get_commit(found[0]))
        if len(found) > 1:
            raise RefNotFound(f"commit prefix {base!r} is ambiguous in {repo.name}")
    raise RefNotFound(f"{base!r} is not a branch, tag or commit of repository {repo.name!r}")


def _walk(repo: RepoContext, commit: Commit, op: str, n: int, ref: str) -> Commit:
    if op == "~":
        for _ in range(n):
            if not commit.parents:
                raise RefNotFound(f"{ref!r} goes past the first commit")
            commit = repo.get_commit(commit.parents[0])
        return commit
    if n == 0:
        return commit
    if n > len(commit.parents):
        raise RefNotFound(f"{ref!r}: commit {commit.id[:12]} has no parent number {n}")
    return repo.get_commit(commit.parents[n - 1])
