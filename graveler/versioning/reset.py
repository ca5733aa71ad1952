"""Resets: drop a branch's uncommitted changes (all of them, or those under a prefix), or
move its head to any commit and drop them all (a hard reset, lakeFS's ``ResetHard``).

The ref of a hard reset is resolved inside the branch update, as lakeFS does: a hard reset to
``main~1`` racing a commit to ``main`` then means "one commit back" from whichever head the
reset sees, never a head that no serial order of the two could produce. Protected branches
are refused. Every staged change is dropped, sealed tokens included (lakeFS refuses a branch
with sealed tokens instead): a commit racing the reset then finds nothing left to commit and
raises NoChanges, as if it had run after the reset.
"""

from __future__ import annotations

from dataclasses import replace

from graveler.core.errors import ProtectedBranch
from graveler.core.model import Branch, Commit
from graveler.core.validate import prefix_key
from graveler.versioning.commit import update_branch
from graveler.views.context import RepoContext
from graveler.views.layers import new_staging_token
from graveler.views.resolve import resolve_commit


def reset(repo: RepoContext, branch: str, prefix: str | None = None) -> None:
    """Drop uncommitted changes: all of them, or only those under ``prefix``."""
    if prefix:
        b = repo.refs.get_branch(repo.name, branch)
        repo.staging.drop_tokens(b.tokens, prefix_key(prefix))
        return
    old: list[Branch] = []

    def fresh(b: Branch) -> Branch:
        old[:] = [b]
        return replace(b, staging_token=new_staging_token(repo.name, b.name), sealed_tokens=())

    update_branch(repo, branch, fresh)
    repo.staging.drop_tokens(old[0].tokens)


def reset_hard(repo: RepoContext, branch: str, ref: str) -> Commit:
    """Point ``branch`` at the commit ``ref`` names and drop every staged change; returns
    the new head. Raises ProtectedBranch, InvalidRef (``branch$``, a malformed ref),
    RefNotFound, BranchNotFound."""
    before: list[Branch] = []
    target: list[Commit] = []

    def change(b: Branch) -> Branch:
        if b.protected:
            raise ProtectedBranch(f"branch {branch!r} is protected: it cannot be reset")
        commit = resolve_commit(repo, ref)
        before[:], target[:] = [b], [commit]
        token = new_staging_token(repo.name, b.name)
        return replace(b, commit_id=commit.id, staging_token=token, sealed_tokens=())

    update_branch(repo, branch, change)
    repo.staging.drop_tokens(before[0].tokens)
    return target[0]
