"""Write actions: merge, revert and delete a branch. They exist only in an app started with
``allow_writes`` (``graveler ui --allow-writes``); otherwise every one answers 403.

Each is a POST from a form of the UI, checked for CSRF (:mod:`graveler.server.ui.csrf`), that
answers with a redirect to what it made (post/redirect/get). Protected branches keep their
rules: they take merges but no reverts (the engine refuses), and the UI refuses to delete
them. The default branch cannot be deleted either. Refusals are 4xx pages with the reason.
"""

from __future__ import annotations

from fastapi import APIRouter, Form, Request
from starlette.exceptions import HTTPException
from starlette.responses import RedirectResponse, Response

from graveler.core.errors import ProtectedBranch
from graveler.server.ui.context import UI, links_for, ui_of
from graveler.server.ui.csrf import FIELD

router = APIRouter()


def _writable(request: Request, token: str) -> UI:
    ui = ui_of(request)
    if not ui.options.allow_writes:
        raise HTTPException(
            403, "this UI is read-only: start it with --allow-writes to change data"
        )
    if not ui.writes_allowed(request):
        raise HTTPException(403, "sign in with an access key that may write this repository")
    ui.csrf.check(request, token)
    return ui


@router.post("/repos/{repo}/actions/merge")
def merge(
    request: Request,
    repo: str,
    source: str = Form(...),
    dest: str = Form(...),
    strategy: str = Form(""),
    csrf_token: str = Form("", alias=FIELD),
) -> Response:
    """Merge ``source`` into branch ``dest`` with a merge commit (never a fast-forward, so
    the log shows what was merged); shows that commit."""
    ui = _writable(request, csrf_token)
    r = ui.repository(repo)
    result = r.merge(source, dest, strategy=strategy or None, fast_forward=False)
    return RedirectResponse(links_for(request).commit(r.name, result.commit.id), status_code=303)


@router.post("/repos/{repo}/actions/revert")
def revert(
    request: Request,
    repo: str,
    commit: str = Form(...),
    branch: str = Form(...),
    csrf_token: str = Form("", alias=FIELD),
) -> Response:
    """Revert ``commit`` on ``branch`` (a merge commit against its first parent)."""
    ui = _writable(request, csrf_token)
    r = ui.repository(repo)
    target = r.resolve(commit).commit
    parent = 1 if len(target.parents) > 1 else None
    made = r.revert(branch, target.id, parent_number=parent)
    return RedirectResponse(links_for(request).commit(r.name, made.id), status_code=303)


@router.post("/repos/{repo}/actions/delete-branch")
def delete_branch(
    request: Request,
    repo: str,
    branch: str = Form(...),
    csrf_token: str = Form("", alias=FIELD),
) -> Response:
    """Delete ``branch`` and its staged changes, unless it is protected or the default."""
    ui = _writable(request, csrf_token)
    r = ui.repository(repo)
    if r.branch(branch).protected:
        raise ProtectedBranch(f"branch {branch!r} is protected: it cannot be deleted here")
    r.delete_branch(branch)
    return RedirectResponse(links_for(request).branches(r.name, deleted=branch), status_code=303)
