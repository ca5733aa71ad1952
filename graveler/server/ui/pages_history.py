"""Pages: the log of a ref drawn as a graph of merges, and one commit with its changes."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from graveler.server.ui.changes import page_of
from graveler.server.ui.context import is_htmx, links_for, ui_of
from graveler.server.ui.graph import graph_page
from graveler.server.ui.runinfo import commit_run

router = APIRouter()


@router.get("/repos/{repo}/log")
def log(request: Request, repo: str, ref: str = "", after: str = "") -> Response:
    """``ref``'s history (default: the default branch), a page of first-parent commits at a
    time; ``after`` is the commit the page starts at."""
    ui = ui_of(request)
    r = ui.repository(repo)
    ref = ref or r.info.default_branch
    page = graph_page(r, after or ref, ui.options.log_page_size, continued=bool(after))
    runs = {row.commit.id: commit_run(row.commit) for row in page.rows}
    template = "_log_rows.html" if is_htmx(request) and after else "log.html"
    return ui.render(request, template, repo=r, ref=ref, page=page, runs=runs)


@router.get("/repos/{repo}/commits/{ref}")
def commit(request: Request, repo: str, ref: str, after: str = "") -> Response:
    """The commit ``ref`` resolves to: metadata (``[url:ui]`` values as links), parents and
    the changes relative to its first parent (paged past the path ``after``)."""
    ui = ui_of(request)
    r = ui.repository(repo)
    c = r.resolve(ref).commit
    parents = [r.get_commit(p) for p in c.parents]
    base = parents[0].id if parents else None
    changes = page_of(r.diff(base, c.id, after=after), ui.options.page_size) if base else None
    more = None
    if changes is not None and changes.next_after is not None:
        more = links_for(request).commit(r.name, c.id, after=changes.next_after)
    common: dict[str, Any] = {
        "repo": r,
        "left": base,
        "right": c.id,
        "page": changes,
        "more_url": more,
        "after": after,
    }
    if changes is not None and is_htmx(request) and after:
        return ui.render(request, "_change_rows.html", **common)
    summary = changes.summary("") if changes is not None and not after else None
    writable = ui.writes_allowed(request)
    branches = [b.name for b in r.list_branches() if not b.protected] if writable else []
    return ui.render(
        request,
        "commit.html",
        **common,
        commit=c,
        parents=parents,
        summary=summary,
        run=commit_run(c),
        revert_branches=sorted(branches),
        prefix_link=lambda p: links_for(request).compare(r.name, base or "", c.id, p),
    )
