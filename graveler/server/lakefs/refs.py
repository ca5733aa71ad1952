"""Commits and history: commit, get a commit, log, diff (between refs and uncommitted),
merge, merge base.

* A diff of type ``three_dot`` (lakeFS's default) lists what merging the right ref into the
  left one would change on the left, and as ``conflict`` the paths both changed differently
  since their merge base; ``two_dot`` the difference between the two trees.
  With a ``delimiter``, changed paths below the prefix collapse into their common prefixes
  (``prefix_changed``). Pages resume ``after`` a path or a common prefix.
* A log page resumes after the commit ID ``after``; ``objects`` and ``prefixes`` keep the
  commits that changed them, ``since`` and ``stop_at`` end the walk, ``limit`` makes the page
  the last one.
* A merge always makes a merge commit, as lakeFS's do (never a fast-forward), with two
  parents or, for ``squash_merge``, the destination's head alone. A conflict is a 409 whose
  body has both lakeFS's ``message`` and its (deprecated) empty ``reference``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from graveler.core.errors import MergeConflict, NoChanges
from graveler.core.model import Commit
from graveler.repository import Repository
from graveler.server.lakefs import encode
from graveler.server.lakefs.errors import bad_request, not_found, not_implemented
from graveler.server.lakefs.http import Call, Reply, json_reply
from graveler.server.lakefs.routing import Access, Body, Route, route
from graveler.views.history import merge_base

DIFF_TYPES = ("two_dot", "three_dot")


def commit(call: Call) -> Reply:
    doc = call.json()
    if call.arg("source_metarange"):
        raise not_implemented("committing a given metarange (source_metarange)")
    message = doc.get("message")
    if not isinstance(message, str):
        raise bad_request("message is required")
    date = doc.get("date")
    if date is not None and (not isinstance(date, int) or isinstance(date, bool)):
        raise bad_request("date must be Unix seconds")
    try:
        made = _commit(call, doc, message, date)
    except NoChanges:
        raise bad_request("commit: no changes") from None  # lakeFS's words
    return json_reply(encode.commit(made), 201)


def _commit(call: Call, doc: dict[str, Any], message: str, date: int | None) -> Commit:
    return call.repository().commit(
        call.params["branch"],
        message,
        metadata=encode.metadata_of(doc.get("metadata"), "metadata"),
        committer=call.committer,
        allow_empty=bool(doc.get("allow_empty", False)),
        date=None if date is None else _from_seconds(date),
        allow_empty_message=True,  # lakeFS takes any message (lakectl's --allow-empty-message)
    )


def _from_seconds(value: int) -> datetime:
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        raise bad_request(f"date {value} is out of range") from None


def get_commit(call: Call) -> Reply:
    found = call.repository().resolve(call.params["commitId"]).commit
    return json_reply(encode.commit(found))


# --- log ---------------------------------------------------------------------------------------


def log_commits(call: Call) -> Reply:
    repo = call.repository()
    amount = call.amount()
    given = call.arg("since")
    since = _time(given) if given else None
    commits = repo.log(
        call.params["ref"],
        first_parent=call.flag("first_parent"),
        since=since,
        stop_at=call.arg("stop_at") or None,
        objects=[p for p in call.args("objects") if p],
        prefixes=[p for p in call.args("prefixes") if p],
    )
    if since is not None:  # the walk starts at the ref's commit, however old (lakeFS skips it)
        commits = (c for c in commits if c.creation_date >= since)
    after = call.arg("after") or ""
    if after:
        commits = _past(commits, after)
    found = list(islice(commits, amount + 1))
    results = [encode.commit(c) for c in found[:amount]]
    more = found[amount - 1].id if len(found) > amount and not call.flag("limit") else None
    return json_reply(encode.page(results, more))


def _past(commits: Iterator[Commit], after: str) -> Iterator[Commit]:
    """The commits after the one whose ID is ``after`` (none when it is not listed)."""
    for c in commits:
        if c.id == after:
            return commits
    return iter(())


def _time(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise bad_request(f"since must be an RFC 3339 date-time, got {text[:40]!r}") from None
    if value.tzinfo is None:
        raise bad_request("since must carry a time zone (RFC 3339)")
    return value


# --- diff --------------------------------------------------------------------------------------


def diff_refs(call: Call) -> Reply:
    repo = call.repository()
    left, right = call.params["leftRef"], call.params["rightRef"]
    kind = call.arg("type") or "three_dot"
    if kind not in DIFF_TYPES:
        raise bad_request("type must be two_dot or three_dot")
    prefix, after = call.arg("prefix") or "", call.arg("after") or ""
    compare = repo.diff_three_dot if kind == "three_dot" else repo.diff
    changes = compare(left, right, prefix=prefix, after=after)
    return json_reply(_diff_page(call, changes, prefix, after, call.flag("include_right_stats")))


def diff_branch(call: Call) -> Reply:
    prefix, after = call.arg("prefix") or "", call.arg("after") or ""
    changes = call.repository().diff_uncommitted(call.params["branch"], prefix=prefix, after=after)
    return json_reply(_diff_page(call, changes, prefix, after, False))


def _diff_page(
    call: Call, changes: Iterator[Any], prefix: str, after: str, right_stats: bool
) -> dict[str, Any]:
    """One page of differences, common prefixes collapsed when there is a delimiter."""
    delimiter = call.arg("delimiter") or ""
    amount = call.amount()
    results: list[dict[str, Any]] = []
    seen_prefix = after if delimiter and after.endswith(delimiter) else None
    for d in changes:
        if seen_prefix is not None and d.path.startswith(seen_prefix):
            continue
        cut = d.path.find(delimiter, len(prefix)) if delimiter else -1
        if len(results) == amount:
            return encode.page(results, results[-1]["path"])
        if cut >= 0:
            seen_prefix = d.path[: cut + len(delimiter)]
            results.append(encode.prefix_diff(seen_prefix))
            continue
        entry = d.left if d.right is None else d.right
        stats = right_stats and d.right is not None
        results.append(encode.diff(d.type.value, d.path, entry, right=stats))
    return encode.page(results, None)


# --- merge -------------------------------------------------------------------------------------


def merge_into_branch(call: Call) -> Reply:
    doc = call.json(required=False)
    strategy = doc.get("strategy") or None
    message = doc.get("message") or None
    if strategy is not None and not isinstance(strategy, str):
        raise bad_request("strategy must be dest-wins or source-wins")
    if message is not None and not isinstance(message, str):
        raise bad_request("message must be a string")
    try:
        result = call.repository().merge(
            call.params["sourceRef"],
            call.params["destinationBranch"],
            strategy=strategy,
            message=message,
            metadata=encode.metadata_of(doc.get("metadata"), "metadata"),
            committer=call.committer,
            squash=bool(doc.get("squash_merge", False)),
            allow_empty=bool(doc.get("allow_empty", False)),
            fast_forward=False,  # lakeFS always records a merge commit
        )
    except MergeConflict as exc:
        return json_reply({"message": str(exc), "reference": ""}, 409)
    return json_reply({"reference": result.commit.id})


def find_merge_base(call: Call) -> Reply:
    repo = call.repository()
    source, dest = call.params["sourceRef"], call.params["destinationBranch"]
    source_commit = repo.resolve(source).commit
    dest_commit = repo.resolve(dest).commit
    base = _merge_base(repo, dest, source)
    return json_reply(
        {
            "source_commit_id": source_commit.id,
            "destination_commit_id": dest_commit.id,
            "base_commit_id": base.id,
        }
    )


def _merge_base(repo: Repository, left: str, right: str) -> Commit:
    lc, rc = repo.resolve(left).commit, repo.resolve(right).commit
    base = merge_base(repo.get_commit, lc, rc)
    if base is None:
        raise not_found(f"{left!r} and {right!r} have no common ancestor")
    return base


_R = "/repositories/{repository}"
ROUTES: list[Route] = [
    route("POST", _R + "/branches/{branch}/commits", commit, Access.WRITE, Body.JSON),
    route("GET", _R + "/commits/{commitId}", get_commit),
    route("GET", _R + "/refs/{ref}/commits", log_commits),
    route("GET", _R + "/refs/{leftRef}/diff/{rightRef}", diff_refs),
    route("GET", _R + "/branches/{branch}/diff", diff_branch),
    route(
        "POST",
        _R + "/refs/{sourceRef}/merge/{destinationBranch}",
        merge_into_branch,
        Access.WRITE,
        Body.JSON,
    ),
    route("GET", _R + "/refs/{sourceRef}/merge/{destinationBranch}", find_merge_base),
]
