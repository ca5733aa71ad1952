"""Hard reset: move a branch's head to any commit and drop its uncommitted changes (lakeFS's
``ResetHard``).

The ref is resolved inside the branch update, as lakeFS does: a hard reset to ``main~1``
racing a commit to ``main`` then means "one commit back" from whichever head the reset sees,
never a head that no serial order of the two could produce. Protected branches are refused.
Every staged change is dropped, sealed tokens included (lakeFS refuses a branch with sealed
tokens instead): a commit racing the reset then finds nothing left to commit and raises
NoChanges, as if it had run after the reset.
"""

from __future__ import annotations

from dataclasses import replace

from graveler.context import RepoContext
from graveler.errors import ProtectedBranch
from graveler.model import Branch, Commit
from graveler.operations import update_branch
from graveler.resolve import resolve_commit
from graveler.staging import new_staging_token


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
