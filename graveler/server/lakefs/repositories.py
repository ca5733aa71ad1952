"""Repositories: list, create (with lakeFS's sample data), get, delete, metadata, and their
branch protection rules.

A key limited to some repositories lists only those, and any call naming another one is a
403 (whether or not it exists). Creating and deleting repositories take an admin key, as
creating a bucket does in the S3 gateway.

Branch protection rules are the engine's (:mod:`graveler.versioning.protection`): kept in
the refs database, applied to every branch that matches, whichever interface made it. lakeFS's
rules are a pattern each and block staging writes and commits; a refusal is a 403 naming the
rule. The ``ETag`` of the rules guards a replace (``If-Match``, 412 when they changed).
"""

from __future__ import annotations

from typing import Any

from graveler.core.errors import NamespaceInUse, RepositoryNotFound
from graveler.core.protection import ProtectionRule, rule
from graveler.core.protection import etag as repo_etag
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
        raise ApiError(409, "error creating repository: not unique")  # lakeFS's words
    try:
        repo = client.create_repository(name, namespace, default_branch=branch)
    except NamespaceInUse as exc:
        raise bad_request(f"failed to create repository: {exc}") from None
    service.remember(repo)
    if doc.get("sample_data") or call.flag("include_samples"):
        from graveler.server.lakefs.sample import populate

        populate(repo, call.committer)
        repo.add_protection_rule(repo.info.default_branch)
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


def protection_rules(repo: Repository) -> list[ProtectionRule]:
    """The repository's rules, with the patterns the first version of this API kept in the
    namespace (:mod:`.settings`) moved into the refs database first, once."""
    legacy = settings.read(repo, PROTECTION)
    if legacy is not None:
        current = repo.protection_rules()
        have = {r.pattern for r in current}
        added = [rule(p) for p in legacy.get("patterns", []) if isinstance(p, str) and p]
        repo.set_protection_rules([*current, *(r for r in added if r.pattern not in have)])
        settings.delete(repo, PROTECTION)
    return repo.protection_rules()


def get_branch_protection(call: Call) -> Reply:
    rules = protection_rules(call.repository())
    found = [{"pattern": r.pattern} for r in rules]
    return json_reply(found, headers=[("ETag", repo_etag(rules))])


def set_branch_protection(call: Call) -> Reply:
    """Replace the rules. A pattern that already has a rule keeps what it blocks (a rule
    made with ``graveler branch-protect`` may block other actions than lakeFS's two); a new
    one blocks staging writes and commits, as lakeFS's rules do."""
    repo = call.repository()
    patterns = [_pattern(r) for r in call.json_list()]
    current = {r.pattern: r for r in protection_rules(repo)}
    rules = [current.get(p) or rule(p) for p in dict.fromkeys(patterns)]
    repo.set_protection_rules(rules, if_match=call.header("if-match"))
    return no_content()


def add_protection_rule(call: Call) -> Reply:
    repo = call.repository()
    protection_rules(repo)
    repo.add_protection_rule(_pattern(call.json()))
    return no_content()


def delete_protection_rule(call: Call) -> Reply:
    repo = call.repository()
    protection_rules(repo)
    repo.delete_protection_rule(_pattern(call.json()))
    return no_content()


def _pattern(doc: object) -> str:
    pattern = doc.get("pattern") if isinstance(doc, dict) else None
    if not isinstance(pattern, str) or not pattern:
        raise bad_request("a branch protection rule is {'pattern': 'NON-EMPTY PATTERN'}")
    return rule(pattern).pattern


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
    route("POST", "/repositories/{repository}/dump", refs_dump, Access.WRITE),
    route("GET", "/repositories/{repository}/dump", refs_dump),
    route("POST", "/repositories/{repository}/restore", refs_dump, Access.WRITE, Body.JSON),
    route("GET", "/repositories/{repository}/restore", refs_dump),
]
