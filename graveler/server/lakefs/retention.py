"""Garbage-collection rules (``settings/gc_rules``, and the internal ``gc/rules`` operations
of older clients): the retention rules a repository keeps in the refs database, which
``graveler gc`` uses when it is given none (:func:`graveler.maintenance.gc.kept_rules`).

Rules are lakeFS's: ``default_retention_days`` and a list of ``branches``, each with its
``retention_days``, in whole days. A repository that keeps none answers 404, as lakeFS does.
Preparing and running a collection through the API stays outside (``graveler gc``).
"""

from __future__ import annotations

from graveler.core.errors import InvalidArgument
from graveler.maintenance.gc import RetentionRules, keep_rules, kept_rules
from graveler.server.lakefs.errors import bad_request, not_found
from graveler.server.lakefs.http import Call, Reply, json_reply, no_content
from graveler.server.lakefs.routing import Access, Body, Route, route


def get_rules(call: Call) -> Reply:
    repo = call.repository()
    kept = kept_rules(repo)
    if kept is None:
        raise not_found(f"repository {repo.name!r} keeps no garbage-collection rules")
    return json_reply(kept.to_dict())


def set_rules(call: Call) -> Reply:
    doc = call.json()
    days = [doc.get("default_retention_days")]
    branches = doc.get("branches")
    if not isinstance(branches, list) or not all(isinstance(b, dict) for b in branches):
        raise bad_request("branches must be a list of {'branch_id', 'retention_days'}")
    days += [b.get("retention_days") for b in branches]
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in days):
        raise bad_request("retention days are whole numbers")
    try:
        rules = RetentionRules.from_dict(doc)
    except InvalidArgument as exc:
        raise bad_request(str(exc)) from None
    keep_rules(call.repository(), rules)
    return no_content()


def delete_rules(call: Call) -> Reply:
    keep_rules(call.repository(), None)
    return no_content()


def set_allowed(call: Call) -> Reply:
    """lakeFS's preflight: may this caller set the rules (the route checks write access)."""
    call.repository()
    return no_content()


_S = "/repositories/{repository}/settings/gc_rules"
_G = "/repositories/{repository}/gc/rules"
ROUTES: list[Route] = [
    route("GET", _S, get_rules),
    route("PUT", _S, set_rules, Access.WRITE, Body.JSON),
    route("DELETE", _S, delete_rules, Access.WRITE),
    route("GET", _G, get_rules),
    route("POST", _G, set_rules, Access.WRITE, Body.JSON),
    route("DELETE", _G, delete_rules, Access.WRITE),
    route("GET", _G + "/set_allowed", set_allowed, Access.WRITE),
]
