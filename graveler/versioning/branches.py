"""Branches and tags of one repository: create, look up, protect, delete.

Names are checked when a branch or tag is created; a branch and a tag may not share a name.
The default branch cannot be deleted. Deleting a branch drops its staged changes.
"""

from __future__ import annotations

from dataclasses import replace

from graveler.core import validate
from graveler.core.errors import (
    AlreadyExists,
    BranchNotFound,
    InvalidArgument,
    InvalidRef,
    WriteToProtectedBranch,
)
from graveler.core.hookevents import EventRecord, HookEvent
from graveler.core.model import Branch, Tag
from graveler.versioning.commit import update_branch
from graveler.views.context import RepoContext, hooked
from graveler.views.layers import new_staging_token


def create_branch(repo: RepoContext, name: str, source: str | None = None) -> Branch:
    """Create branch ``name`` at the commit ``source`` resolves to (default: the default
    branch's head; its staged changes are not carried over). Raises AlreadyExists."""
    validate.branch_name(name)
    origin = source or repo.info.default_branch
    commit = repo.resolve(origin).commit
    branch = Branch(name, commit.id, new_staging_token(repo.name, name))
    event = EventRecord(HookEvent.PRE_CREATE_BRANCH, commit, branch=name, source_ref=origin)
    with hooked(repo, event):
        repo.refs.create_branch(repo.name, branch)
    return branch


def get_branch(repo: RepoContext, name: str) -> Branch:
    """The branch row; raises BranchNotFound."""
    return repo.refs.get_branch(repo.name, name)


def branch_exists(repo: RepoContext, name: str) -> bool:
    """Whether branch ``name`` exists (one lookup, no exception to catch)."""
    try:
        repo.refs.get_branch(repo.name, name)
    except BranchNotFound:
        return False
    return True


def writable_branch(repo: RepoContext, name: str) -> Branch:
    """The branch row, when writes may go to it: raises BranchNotFound, or ProtectedBranch
    for a protected branch. For work that should refuse before it starts (a Spark job, a bulk
    upload); the write itself checks again, in its staging transaction."""
    b = repo.refs.get_branch(repo.name, name)
    if b.protected:
        raise WriteToProtectedBranch(
            f"branch {name!r} is protected: write to another branch and merge into it"
        )
    return b


def list_branches(repo: RepoContext) -> list[Branch]:
    return repo.refs.list_branches(repo.name)


def delete_branch(repo: RepoContext, name: str) -> None:
    """Delete a branch and its staged changes; raises BranchNotFound, or InvalidArgument for
    the default branch."""
    if name == repo.info.default_branch:
        raise InvalidArgument(
            f"branch {name!r} is the default branch of {repo.name!r} and cannot be deleted"
        )
    head = repo.get_commit(repo.refs.get_branch(repo.name, name).commit_id)
    event = EventRecord(HookEvent.PRE_DELETE_BRANCH, head, branch=name, source_ref=name)
    with hooked(repo, event):
        removed = repo.refs.delete_branch(repo.name, name)
        repo.staging.drop_tokens(removed.tokens)


def protect_branch(repo: RepoContext, name: str, protected: bool = True) -> Branch:
    """Set (or clear) the branch's protection: a protected branch takes merges only."""

    def change(b: Branch) -> Branch:
        return replace(b, protected=protected)

    return update_branch(repo, name, change)


def create_tag(repo: RepoContext, name: str, ref: str) -> Tag:
    """Tag the commit ``ref`` resolves to; raises AlreadyExists when ``name`` is taken by a
    tag or a branch, InvalidRef when ``ref`` names a branch's uncommitted changes
    (``main$``: a tag names a commit, as lakeFS insists), RefNotFound when it names nothing."""
    validate.tag_name(name)
    if branch_exists(repo, name):
        raise AlreadyExists(f"{name!r} is already a branch of {repo.name!r}")
    resolved = repo.resolve(ref)
    if resolved.view == "$":
        branch = resolved.branch.name if resolved.branch else ref
        raise InvalidRef(
            f"cannot tag {ref!r}: it names the uncommitted changes of branch {branch!r} and a "
            f"tag names a commit; commit them first, or tag {branch!r} (its head commit)"
        )
    commit = resolved.commit
    tag = Tag(name, commit.id)
    event = EventRecord(HookEvent.PRE_CREATE_TAG, commit, tag=name, source_ref=ref)
    with hooked(repo, event):
        repo.refs.create_tag(repo.name, tag)
    return tag


def get_tag(repo: RepoContext, name: str) -> Tag:
    """The tag; raises TagNotFound."""
    return repo.refs.get_tag(repo.name, name)


def list_tags(repo: RepoContext) -> list[Tag]:
    return repo.refs.list_tags(repo.name)


def delete_tag(repo: RepoContext, name: str) -> None:
    """Delete tag ``name``; raises TagNotFound."""
    commit = repo.get_commit(repo.refs.get_tag(repo.name, name).commit_id)
    event = EventRecord(HookEvent.PRE_DELETE_TAG, commit, tag=name, source_ref=name)
    with hooked(repo, event):
        repo.refs.delete_tag(repo.name, name)
