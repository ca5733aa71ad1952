"""Pages: comparing two refs, its counts by prefix, and a branch's uncommitted changes.

A comparison of ``left`` and ``right`` shows by default what ``right`` changed since it
and ``left`` parted: the changes from their merge base to ``right`` (git's and lakeFS's
three-dot diff, ``left...right``), what a merge of ``right`` into ``left`` brings. With
``diff=two-dot`` it shows the direct difference of the two heads (``left..right``), where
what ``left`` gained since shows as removed. A branch's uncommitted changes are on their own
page, linked from the comparison.

A comparison page lists one page of changes (a seek into both trees, so its cost follows the
page, not the repository) grouped by folder, with counts per prefix. When the first page
holds every change the counts come with it; otherwise the page fetches them from
``/compare/summary``, which counts in slices (see :mod:`graveler.server.ui.summary`).

Tables (Delta Lake...) whose metadata differs are shown as tables above the files: their
versions, operations, files, rows and column changes (:mod:`graveler.tables.diff`), and
their files are left out of the list; ``view=files`` lists them as files instead. Finding
the tables looks at the first ``TABLE_SCAN_LIMIT`` changes.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from graveler.core.errors import InvalidArgument
from graveler.core.model import Commit
from graveler.repository import Repository
from graveler.server.ui.changes import page_of
from graveler.server.ui.context import is_htmx, links_for, ui_of
from graveler.server.ui.summary import Summary
from graveler.tables.diff import table_diffs, tables_changed
from graveler.tables.port import TableDiff
from graveler.views.diff import Difference
from graveler.views.history import merge_base

router = APIRouter()
#: How long the uncommitted-changes page counts (staging changes, so counts are not kept).
UNCOMMITTED_COUNT_SECONDS = 1.0
#: How many changes the compare page looks through for tables.
TABLE_SCAN_LIMIT = 20_000
FILES_VIEW = "files"
#: The two comparisons: since the merge base (the default) and head to head.
THREE_DOT, TWO_DOT = "three-dot", "two-dot"


@dataclass(frozen=True)
class Comparison:
    """What a compare page diffs: from ``start`` (the merge base, or ``left``'s head) to
    ``right``'s head. ``mode`` is the diff shown (:data:`TWO_DOT` also when the refs share
    no history, ``base`` then None)."""

    left: Commit
    right: Commit
    base: Commit | None
    mode: str
    left_name: str = ""
    right_name: str = ""

    @property
    def start(self) -> Commit:
        return self.base if self.mode == THREE_DOT and self.base is not None else self.left

    @property
    def link_mode(self) -> str:
        """The ``diff`` parameter of links that keep this comparison ("": the default)."""
        return "" if self.mode == THREE_DOT else TWO_DOT


def comparison(repo: Repository, left: str, right: str, diff: str) -> Comparison:
    if diff not in ("", THREE_DOT, TWO_DOT):
        raise InvalidArgument(f"diff must be {THREE_DOT} or {TWO_DOT}, not {diff[:40]!r}")
    lc, rc = repo.resolve(left).commit, repo.resolve(right).commit
    base = merge_base(repo.get_commit, lc, rc) if diff != TWO_DOT else None
    mode = THREE_DOT if base is not None else TWO_DOT
    return Comparison(lc, rc, base, mode, left, right)


@router.get("/repos/{repo}/compare")
def compare(
    request: Request,
    repo: str,
    left: str = "",
    right: str = "",
    prefix: str = "",
    after: str = "",
    view: str = "",
    diff: str = "",
) -> Response:
    """The changes of ``right`` since its merge base with ``left`` (or, with ``diff`` set to
    ``two-dot``, from ``left`` to ``right``; their commits: staged changes are on the
    uncommitted-changes page) under ``prefix``, a page past the path ``after``; tables as
    tables unless ``view`` is ``files``."""
    ui = ui_of(request)
    r = ui.repository(repo)
    if not left or not right:
        names = sorted(b.name for b in r.list_branches())
        return ui.render(request, "compare_form.html", repo=r, left=left, right=right, names=names)
    c = comparison(r, left, right, diff)
    changes, tables = _tables_and_files(r, c.start.id, c.right.id, prefix, after, view)
    page = page_of(changes, ui.options.page_size)
    link = functools.partial(links_for(request).compare, r.name, left, right, diff=c.link_mode)
    more = link(prefix, page.next_after, view=view) if page.next_after else None
    common: dict[str, Any] = {
        "repo": r,
        "left": left,
        "right": right,
        "page": page,
        "more_url": more,
        "after": after,
    }
    if is_htmx(request) and after:
        return ui.render(request, "_change_rows.html", **common)
    return ui.render(
        request,
        "compare.html",
        **common,
        **_page_context(request, r, c, prefix, view, link),
        asked_two_dot=diff == TWO_DOT,
        summary=page.summary(prefix) if not after else None,
        tables=tables,
    )


def _page_context(
    request: Request, repo: Repository, c: Comparison, prefix: str, view: str, link: Any
) -> dict[str, Any]:
    """What the compare page shows besides its changes: the diff shown, the merge it
    offers, the uncommitted changes it links, and the links that keep the comparison."""
    right = c.right_name
    writes = ui_of(request).writes_allowed(request)
    return {
        "prefix": prefix,
        "comparison": c,
        "diff": c.link_mode,
        "view": view,
        "uncommitted": _has_uncommitted(repo, right),
        "merge_into": _merge_target(repo, c.left_name) if writes else None,
        "prefix_link": link,
        "files_link": link(prefix, view=FILES_VIEW),
        "tables_link": link(prefix),
    }


def _has_uncommitted(repo: Repository, ref: str) -> bool:
    """Whether ``ref`` is a branch with staged changes (shown on their own page)."""
    if not repo.branch_exists(ref):
        return False
    return next(iter(repo.diff_uncommitted(ref)), None) is not None


def _tables_and_files(
    repo: Repository, left: str, right: str, prefix: str, after: str, view: str
) -> tuple[Iterator[Difference], list[TableDiff]]:
    """The changes to list as files, and the tables to show as tables (on the first page):
    a table's files are left out of the list, unless ``view`` is ``files``."""
    changes = repo.diff(left, right, prefix=prefix, after=after)
    if view == FILES_VIEW:
        return changes, []
    found = tables_changed(repo, left, right, prefix=prefix, limit=TABLE_SCAN_LIMIT)
    if not found.roots:
        return changes, []
    covered = found.covers
    files = (d for d in changes if not covered(d.path))
    return files, [] if after else table_diffs(repo, left, right, found)


def _merge_target(repo: Repository, left: str) -> str | None:
    """``left`` when it names a branch (merging ``right`` into it is offered), else None."""
    return left if repo.branch_exists(left) else None


@router.get("/repos/{repo}/compare/summary")
def compare_summary(
    request: Request, repo: str, left: str, right: str, prefix: str = "", diff: str = ""
) -> Response:
    """The counts of a comparison by prefix: one more slice of counting per request; the
    fragment asks again until the count is complete."""
    ui = ui_of(request)
    r = ui.repository(repo)
    c = comparison(r, left, right, diff)
    start, end = c.start.id, c.right.id
    summary = ui.summaries.get((r.name, start, end, prefix), prefix)
    if not summary.complete and summary.lock.acquire(blocking=False):
        try:
            summary.count(
                r.diff(start, end, prefix=prefix, after=summary.resume),
                ui.options.count_seconds,
            )
        finally:
            summary.lock.release()
    links = links_for(request)
    mode = "" if c.mode == THREE_DOT else TWO_DOT
    return ui.render(
        request,
        "_summary.html",
        repo=r,
        summary=summary,
        poll=links.compare_summary(r.name, left, right, prefix, diff=mode),
        prefix_link=lambda p: links.compare(r.name, left, right, p, diff=mode),
    )


@router.get("/repos/{repo}/changes")
def uncommitted(
    request: Request, repo: str, branch: str = "", prefix: str = "", after: str = ""
) -> Response:
    """``branch``'s uncommitted changes under ``prefix``, a page past the path ``after``."""
    ui = ui_of(request)
    r = ui.repository(repo)
    if not branch:
        raise InvalidArgument("name the branch whose uncommitted changes to show (?branch=)")
    b = r.branch(branch)
    page = page_of(r.diff_uncommitted(b.name, prefix=prefix, after=after), ui.options.page_size)
    links = links_for(request)
    more = links.changes(r.name, b.name, prefix, page.next_after) if page.next_after else None
    common: dict[str, Any] = {
        "repo": r,
        "left": f"{b.name}@",
        "right": b.name,
        "page": page,
        "more_url": more,
        "after": after,
    }
    if is_htmx(request) and after:
        return ui.render(request, "_change_rows.html", **common)
    summary = page.summary(prefix) if not after else None
    if summary is None and not after:
        summary = Summary(prefix)
        summary.count(r.diff_uncommitted(b.name, prefix=prefix), UNCOMMITTED_COUNT_SECONDS)
    return ui.render(
        request,
        "changes.html",
        **common,
        branch=b,
        prefix=prefix,
        summary=summary,
        poll="",
        prefix_link=lambda p: links.changes(r.name, b.name, p),
    )
