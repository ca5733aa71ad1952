"""Repositories: list, create (with lakeFS's sample data), get, delete, metadata, and their
branch protection rules.

A key limited to some repositories lists only those, and any call naming another one is a
403 (whether or not it exists). Creating and deleting repositories take an admin key, as
creating a bucket does in the S3 gateway.

Branch protection: graveler protects single branches (a protected branch takes merges
only, as lakeFS's rules block staging writes and commits). lakeFS's rules are ``fnmatch``
patterns; here they are kept with the repository (:mod:`.settings`) and applied to its
branches when set, and to every branch created through this API. The rules read back are
the patterns, plus the name of each branch protected otherwise (``graveler branch protect``).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from typing import Any

from graveler.core.errors import NamespaceInUse, RepositoryNotFound
from graveler.repository import Repository
from graveler.server.lakefs import encode, settings
from graveler.server.lakefs.errors import ApiError, bad_request, not_implemented
from graveler.server.lakefs.http import Call, Reply, json_reply, no_content
from graveler.server.lakefs.routing import Access, Body, Route, route

PROTECTION = "branch_protection"
METADATA = "metadata"


# --- repositories ------------------------------------------------------------------------------


def list_repositories(call: Call) -> Reply:
    principal = call.who
    prefix, after = call.arg("prefix", "") or "", call.arg("after", "") or ""
    search = call.arg("search", "") or ""
    amount = call.amount()
    infos = sorted(call.service.client.list_repositories(), key=lambda i: i.name)
    chosen = [
        i
        for i in infos
        if i.name.startswith(prefix)
        and i.name > after
        and search in i.name
        and principal.may_read(i.name)
    ]
    results = [encode.repository(i, call.service.storage) for i in chosen[:amount]]
    more = chosen[amount - 1].name if len(chosen) > amount else None
    return json_reply(encode.page(results, more))


def create_repository(call: Call) -> Reply:
    doc = call.json()
    if call.flag("bare"):
        raise not_implemented("bare repositories (graveler makes each with its first commit)")
    name = _text(doc, "name", required=True)
    given = _text(doc, "storage_namespace", required=True)
    branch = _text(doc, "default_branch") or "main"
    if doc.get("read_only"):
        raise bad_request("read-only repositories are not supported")
    client, service = call.service.client, call.service
    namespace = service.storage.internal(given)
    if doc.get("storage_id") not in (None, "", service.storage.storage_id(namespace)):
        raise bad_request(f"storage_id {doc['storage_id']!r:.60} does not match {given!r:.200}")
    try:
        client.repository(name)
    except RepositoryNotFound:
        pass
    else:
        raise ApiError(409, f"error creating repository: {name!r} already exists")
    try:
        repo = client.create_repository(name, namespace, default_branch=branch)
    except NamespaceInUse as exc:
        raise bad_request(f"failed to create repository: {exc}") from None
    service.remember(repo)
    if doc.get("sample_data") or call.flag("include_samples"):
        from graveler.server.lakefs.sample import populate

        populate(repo, call.committer)
        set_protection(repo, [repo.info.default_branch])
    return json_reply(encode.repository(repo.info, service.storage), 201)


def get_repository(call: Call) -> Reply:
    return json_reply(encode.repository(call.repository().info, call.service.storage))


def delete_repository(call: Call) -> Reply:
    name = call.params["repository"]
    call.service.client.delete_repository(name)
    call.service.forget(name)
    return no_content()


def _text(doc: dict[str, Any], key: str, *, required: bool = False) -> str:
    value = doc.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise bad_request(f"{key} must be a non-empty string")
    return value


# --- metadata ----------------------------------------------------------------------------------


def get_metadata(call: Call) -> Reply:
    return json_reply(settings.read(call.repository(), METADATA) or {})


def set_metadata(call: Call) -> Reply:
    repo = call.repository()
    given = call.json().get("metadata")
    if given is None:
        raise bad_request("metadata is required: an object of strings")
    values = encode.metadata_of(given, "metadata")
    settings.write(repo, METADATA, {**(settings.read(repo, METADATA) or {}), **values})
    return no_content()


def delete_metadata(call: Call) -> Reply:
    repo = call.repository()
    keys = call.json().get("keys")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise bad_request("keys must be a list of strings")
    current = settings.read(repo, METADATA) or {}
    settings.write(repo, METADATA, {k: v for k, v in current.items() if k not in keys})
    return no_content()


# --- branch protection -------------------------------------------------------------------------


def protection_rules(repo: Repository) -> list[str]:
    """The patterns in force: the stored ones, and each protected branch none of them
    matches."""
    patterns = list((settings.read(repo, PROTECTION) or {}).get("patterns", []))
    for b in repo.list_branches():
        if b.protected and not _matches(b.name, patterns):
            patterns.append(b.name)
    return sorted(set(patterns))


def set_protection(repo: Repository, patterns: list[str]) -> None:
    """Store ``patterns`` and protect exactly the branches they match."""
    settings.write(repo, PROTECTION, {"patterns": sorted(set(patterns))})
    for b in repo.list_branches():
        wanted = _matches(b.name, patterns)
        if b.protected != wanted:
            repo.protect_branch(b.name, wanted)


def protect_new_branch(repo: Repository, name: str) -> None:
    """Protect a branch just created when a stored pattern matches it."""
    patterns = (settings.read(repo, PROTECTION) or {}).get("patterns", [])
    if _matches(name, patterns):
        repo.protect_branch(name, True)


def _matches(name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _etag(patterns: list[str]) -> str:
    return '"' + hashlib.sha256(json.dumps(patterns).encode()).hexdigest()[:32] + '"'


def get_branch_protection(call: Call) -> Reply:
    patterns = protection_rules(call.repository())
    rules = [{"pattern": p} for p in patterns]
    return json_reply(rules, headers=[("ETag", _etag(patterns))])


def set_branch_protection(call: Call) -> Reply:
    repo = call.repository()
    patterns = [_pattern(rule) for rule in call.json_list()]
    expected = call.header("if-match")
    if expected is not None and expected != _etag(protection_rules(repo)):
        raise ApiError(412, "branch protection rules changed since they were read (If-Match)")
    set_protection(repo, patterns)
    return no_content()


def add_protection_rule(call: Call) -> Reply:
    repo = call.repository()
    pattern = _pattern(call.json())
    current = protection_rules(repo)
    if pattern in current:
        raise ApiError(409, f"a branch protection rule for {pattern!r} already exists")
    set_protection(repo, [*current, pattern])
    return no_content()


def delete_protection_rule(call: Call) -> Reply:
    repo = call.repository()
    pattern = _pattern(call.json())
    current = protection_rules(repo)
    if pattern not in current:
        raise ApiError(404, f"no branch protection rule for {pattern!r}")
    set_protection(repo, [p for p in current if p != pattern])
    return no_content()


def _pattern(rule: object) -> str:
    pattern = rule.get("pattern") if isinstance(rule, dict) else None
    if not isinstance(pattern, str) or not pattern:
        raise bad_request("a branch protection rule is {'pattern': 'NON-EMPTY PATTERN'}")
    return pattern


def gc_rules(call: Call) -> Reply:
    call.repository()
    raise not_implemented(
        "per-repository GC rules: graveler's garbage collection takes its retention rules "
        "when it runs (graveler gc --rules FILE)"
    )


def refs_dump(call: Call) -> Reply:
    call.repository()
    raise not_implemented("refs dump and restore through the API (use graveler refs dump)")


ROUTES: list[Route] = [
    route("GET", "/repositories", list_repositories, Access.USER),
    route("POST", "/repositories", create_repository, Access.ADMIN, Body.JSON),
    route("GET", "/repositories/{repository}", get_repository),
    route("DELETE", "/repositories/{repository}", delete_repository, Access.ADMIN),
    route("GET", "/repositories/{repository}/metadata", get_metadata),
    route("POST", "/repositories/{repository}/metadata", set_metadata, Access.WRITE, Body.JSON),
    route(
        "DELETE", "/repositories/{repository}/metadata", delete_metadata, Access.WRITE, Body.JSON
    ),
    route("GET", "/repositories/{repository}/settings/branch_protection", get_branch_protection),
    route(
        "PUT",
        "/repositories/{repository}/settings/branch_protection",
        set_branch_protection,
        Access.WRITE,
        Body.JSON,
    ),
    route("GET", "/repositories/{repository}/branch_protection", get_branch_protection),
    route(
        "POST",
        "/repositories/{repository}/branch_protection",
        add_protection_rule,
        Access.WRITE,
        Body.JSON,
    ),
    route(
        "DELETE",
        "/repositories/{repository}/branch_protection",
        delete_protection_rule,
        Access.WRITE,
        Body.JSON,
    ),
    route("GET", "/repositories/{repository}/settings/gc_rules", gc_rules),
    route("PUT", "/repositories/{repository}/settings/gc_rules", gc_rules, Access.WRITE, Body.JSON),
    route("DELETE", "/repositories/{repository}/settings/gc_rules", gc_rules, Access.WRITE),
    route("GET", "/repositories/{repository}/gc/rules", gc_rules),
    route("POST", "/repositories/{repository}/dump", refs_dump, Access.WRITE),
    route("GET", "/repositories/{repository}/dump", refs_dump),
    route("POST", "/repositories/{repository}/restore", refs_dump, Access.WRITE, Body.JSON),
    route("GET", "/repositories/{repository}/restore", refs_dump),
]
