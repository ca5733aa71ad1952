"""Pages: the repositories, a repository's branches, and finding a pipeline run."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from itertools import islice

from fastapi import APIRouter, Query, Request
from starlette.responses import RedirectResponse, Response

from graveler.core.errors import InvalidArgument
from graveler.core.model import Branch, Commit
from graveler.repository import Repository
from graveler.server.ui.context import links_for, ui_of
from graveler.server.ui.runinfo import RunMarker, branch_run

router = APIRouter()
#: How many first-parent commits of each default branch a run search reads.
RUN_SEARCH_DEPTH = 500


@dataclass(frozen=True)
class BranchRow:
    branch: Branch
    head: Commit
    staged: int
    run: RunMarker | None
    default: bool


@router.get("/")
def repositories(request: Request) -> Response:
    ui = ui_of(request)
    repos = sorted(ui.client.list_repositories(), key=lambda r: r.name)
    return ui.render(request, "repos.html", repos=repos)


@router.get("/repos/{repo}")
def branches(request: Request, repo: str, after: str = "", deleted: str = "") -> Response:
    """The branches sorted by name, a page at a time (past the branch ``after``)."""
    ui = ui_of(request)
    r = ui.repository(repo)
    names = sorted((b for b in r.list_branches() if b.name > after), key=lambda b: b.name)
    page = names[: ui.options.page_size]
    rows = [_row(r, b) for b in page]
    next_after = page[-1].name if len(names) > len(page) else None
    return ui.render(
        request, "branches.html", repo=r, rows=rows, next_after=next_after, deleted=deleted
    )


def _row(repo: Repository, b: Branch) -> BranchRow:
    head = repo.get_commit(b.commit_id)
    tokens = b.tokens
    staged = sum(repo.staging.count_staged(t) for t in tokens)
    default = b.name == repo.info.default_branch
    return BranchRow(b, head, staged, branch_run(b.name, head), default)


@router.get("/runs/find")
def find_run(
    request: Request,
    branch: str = "",
    meta: list[str] = Query(default=[]),  # noqa: B008 (FastAPI's idiom)
) -> Response:
    """A pipeline run's branch (if it still exists) or else the commit whose metadata holds
    every ``key=value`` of ``meta``, in any repository; a list when several match."""
    wanted = dict(_pair(m) for m in meta)
    if not branch and not wanted:
        raise InvalidArgument("name a branch or metadata to look for")
    ui = ui_of(request)
    links = links_for(request)
    found: list[tuple[str, str, str]] = []
    for info in ui.client.list_repositories():
        repo = ui.repository(info.name)
        hit = _find_in(repo, branch, wanted)
        if hit is not None:
            found.append((repo.name, *hit))
    if len(found) == 1:
        name, kind, ref = found[0]
        target = links.log(name, ref) if kind == "branch" else links.commit(name, ref)
        return RedirectResponse(target, status_code=303)
    return ui.render(request, "runs.html", found=found, branch=branch, wanted=wanted)


def _pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise InvalidArgument(f"meta expects KEY=VALUE, got {text!r}")
    return key, value


def _find_in(repo: Repository, branch: str, wanted: dict[str, str]) -> tuple[str, str] | None:
    """("branch", name) or ("commit", id) of the run in ``repo``, or None."""
    if branch:
        with contextlib.suppress(InvalidArgument):  # a name no branch can have
            if repo.branch_exists(branch):
                return "branch", branch
    if not wanted:
        return None
    history = repo.log(repo.info.default_branch, first_parent=True)
    for commit in islice(history, RUN_SEARCH_DEPTH):
        if all(commit.metadata.get(k) == v for k, v in wanted.items()):
            return "commit", commit.id
    return None
