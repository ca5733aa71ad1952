"""Branches and tags: list, create, get, delete; a branch's reset (its uncommitted changes,
one object or a prefix), hard reset, revert and cherry-pick.

Lists are sorted by name and paged by ``after`` (a name) and ``amount``; hidden branches
(created with ``hidden``) are listed with ``show_hidden`` only. Deleting the default branch is
a 403, as in lakeFS; so is anything a branch protection rule blocks (the engine's check).
"""

from __future__ import annotations

import contextlib
from typing import Any

from graveler.core.errors import MergeConflict, ObjectNotFound, TagNotFound
from graveler.repository import Repository
from graveler.server.lakefs import encode
from graveler.server.lakefs.errors import ApiError, bad_request
from graveler.server.lakefs.http import Call, Reply, json_reply, no_content
from graveler.server.lakefs.routing import Access, Body, Route, route


def refs_page(call: Call, refs: list[tuple[str, str]]) -> Reply:
    """A page of (name, commit ID) pairs by ``prefix``, ``after`` and ``amount``."""
    prefix, after = call.arg("prefix", "") or "", call.arg("after", "") or ""
    amount = call.amount()
    chosen = sorted((n, c) for n, c in refs if n.startswith(prefix) and n > after)
    results = [encode.ref(n, c) for n, c in chosen[:amount]]
    more = chosen[amount - 1][0] if len(chosen) > amount else None
    return json_reply(encode.page(results, more))


# --- branches ----------------------------------------------------------------------------------


def list_branches(call: Call) -> Reply:
    branches = call.repository().list_branches(show_hidden=call.flag("show_hidden"))
    return refs_page(call, [(b.name, b.commit_id) for b in branches])


def create_branch(call: Call) -> Reply:
    doc = call.json()
    name, source, hidden = doc.get("name"), doc.get("source"), doc.get("hidden", False)
    if not isinstance(name, str) or not isinstance(source, str) or not source:
        raise bad_request("name and source are required strings")
    if not isinstance(hidden, bool):
        raise bad_request("hidden must be a boolean")
    branch = call.repository().create_branch(name, source, hidden=hidden)
    return Reply(201, branch.commit_id.encode(), "text/html")


def get_branch(call: Call) -> Reply:
    b = call.repository().branch(call.params["branch"])
    return json_reply(encode.ref(b.name, b.commit_id))


def delete_branch(call: Call) -> Reply:
    repo = call.repository()
    name = call.params["branch"]
    if name == repo.info.default_branch:
        raise ApiError(403, f"cannot delete the default branch {name!r} of {repo.name!r}")
    repo.delete_branch(name)
    return no_content()


def reset_branch(call: Call) -> Reply:
    doc = call.json()
    kind, path = doc.get("type"), doc.get("path")
    repo = call.repository()
    name = call.params["branch"]
    repo.writable_branch(name)  # a protected branch refuses before anything is read
    if kind == "reset":
        repo.reset(name)
    elif kind == "common_prefix" and isinstance(path, str):
        repo.reset(name, prefix=path) if path else repo.reset(name)
    elif kind == "object" and isinstance(path, str) and path:
        _reset_object(repo, name, path)
    else:
        raise bad_request("type must be reset, common_prefix or object (with a path)")
    return no_content()


def _reset_object(repo: Repository, branch: str, path: str) -> None:
    """Drop the uncommitted change of one object. Its staged changes are dropped as a prefix
    when no other changed path starts with ``path`` (the usual case: the branch is then as
    clean as before the change); otherwise its committed entry (or its absence) is staged
    again, which leaves no change at ``path`` and the other paths as they are."""
    if all(d.path == path for d in repo.diff_uncommitted(branch, prefix=path)):
        repo.reset(branch, prefix=path)
        return
    try:
        committed = repo.stat(branch + "@", path)
    except ObjectNotFound:
        repo.delete_many(branch, [path])
        return
    repo.stage_entries(branch, [committed])


def hard_reset_branch(call: Call) -> Reply:
    call.repository().reset_hard(call.params["branch"], call.required("ref"))
    return no_content()


def revert_branch(call: Call) -> Reply:
    doc = call.json()
    ref = _ref_field(doc)
    parent = doc.get("parent_number")
    if not isinstance(parent, int) or isinstance(parent, bool) or parent < 0:
        raise bad_request("parent_number is required: 0, or the parent of a merge commit")
    message, metadata = _overrides(doc)
    call.repository().revert(
        call.params["branch"],
        ref,
        parent_number=parent or None,
        message=message,
        metadata=metadata,
        committer=call.committer,
        allow_empty=bool(doc.get("allow_empty", False)),
    )
    return no_content()


def cherry_pick(call: Call) -> Reply:
    doc = call.json()
    ref = _ref_field(doc)
    parent = doc.get("parent_number")
    if parent is not None and (not isinstance(parent, int) or isinstance(parent, bool)):
        raise bad_request("parent_number must be an integer")
    message, metadata = _overrides(doc)
    try:
        picked = call.repository().cherry_pick(
            call.params["branch"],
            ref,
            parent_number=parent or None,
            message=message,
            metadata=metadata,
            committer=call.committer,
        )
    except MergeConflict:
        raise ApiError(409, "update branch: conflict found") from None  # lakeFS's words
    return json_reply(encode.commit(picked), 201)


def _ref_field(doc: dict[str, Any]) -> str:
    ref = doc.get("ref")
    if not isinstance(ref, str) or not ref:
        raise bad_request("ref is required")
    return ref


def _overrides(doc: dict[str, Any]) -> tuple[str | None, dict[str, str] | None]:
    """``commit_overrides``: a message and metadata replacing the defaults."""
    overrides = doc.get("commit_overrides")
    if overrides is None:
        return None, None
    if not isinstance(overrides, dict):
        raise bad_request("commit_overrides must be an object")
    message = overrides.get("message")
    if message is not None and not isinstance(message, str):
        raise bad_request("commit_overrides.message must be a string")
    raw = overrides.get("metadata")
    metadata = None if raw is None else encode.metadata_of(raw, "commit_overrides.metadata")
    return message or None, metadata


# --- tags --------------------------------------------------------------------------------------


def list_tags(call: Call) -> Reply:
    tags = call.repository().list_tags()
    return refs_page(call, [(t.name, t.commit_id) for t in tags])


def create_tag(call: Call) -> Reply:
    doc = call.json()
    name, ref = doc.get("id"), doc.get("ref")
    if not isinstance(name, str) or not isinstance(ref, str) or not ref:
        raise bad_request("id and ref are required strings")
    repo = call.repository()
    if doc.get("force"):
        with contextlib.suppress(TagNotFound):
            repo.delete_tag(name)
    tag = repo.create_tag(name, ref)
    return json_reply(encode.ref(tag.name, tag.commit_id), 201)


def get_tag(call: Call) -> Reply:
    tag = call.repository().tag(call.params["tag"])
    return json_reply(encode.ref(tag.name, tag.commit_id))


def delete_tag(call: Call) -> Reply:
    call.repository().delete_tag(call.params["tag"])
    return no_content()


_B = "/repositories/{repository}/branches"
ROUTES: list[Route] = [
    route("GET", _B, list_branches),
    route("POST", _B, create_branch, Access.WRITE, Body.JSON),
    route("GET", _B + "/{branch}", get_branch),
    route("DELETE", _B + "/{branch}", delete_branch, Access.WRITE),
    route("PUT", _B + "/{branch}", reset_branch, Access.WRITE, Body.JSON),
    route("PUT", _B + "/{branch}/hard_reset", hard_reset_branch, Access.WRITE),
    route("POST", _B + "/{branch}/revert", revert_branch, Access.WRITE, Body.JSON),
    route("POST", _B + "/{branch}/cherry-pick", cherry_pick, Access.WRITE, Body.JSON),
    route("GET", "/repositories/{repository}/tags", list_tags),
    route("POST", "/repositories/{repository}/tags", create_tag, Access.WRITE, Body.JSON),
    route("GET", "/repositories/{repository}/tags/{tag}", get_tag),
    route("DELETE", "/repositories/{repository}/tags/{tag}", delete_tag, Access.WRITE),
]
