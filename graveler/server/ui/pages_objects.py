"""Pages: the object browser (a ref's objects by prefix), one object with its preview, and
its raw bytes.

Listings are pages of ``Repository.list`` (a delimiter collapses each folder into one row;
the scan seeks past it), so no page reads more than it shows. Raw bytes are streamed, never
read whole; they are served as a download unless they are a raster image, always with
``nosniff`` and a sandboxing Content-Security-Policy so an object can never run script in
the UI's origin.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from starlette.responses import Response, StreamingResponse

from graveler.repository import Repository
from graveler.server.ui.context import is_htmx, links_for, ui_of
from graveler.server.ui.preview import image_type, kind_of, preview
from graveler.storage.entry import ObjectEntry

router = APIRouter()
CHUNK = 256 * 1024
RAW_CSP = "sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'"


@router.get("/repos/{repo}/tree")
def tree(request: Request, repo: str, ref: str = "", prefix: str = "", after: str = "") -> Response:
    """The folders and objects directly under ``prefix`` at ``ref`` (default: the default
    branch, staged changes included), a page past ``after``."""
    ui = ui_of(request)
    r = ui.repository(repo)
    ref = ref or r.info.default_branch
    page = r.list(ref, prefix, delimiter="/", after=after, amount=ui.options.page_size)
    links = links_for(request)
    more = links.tree(r.name, ref, prefix, page.next_after) if page.next_after else None
    common: dict[str, Any] = {"repo": r, "ref": ref, "prefix": prefix, "page": page}
    common["more_url"] = more
    if is_htmx(request) and after:
        return ui.render(request, "_tree_rows.html", **common)
    resolved = r.resolve(ref)  # the full page names the commit; more rows need no lookup
    return ui.render(request, "tree.html", **common, resolved=resolved, crumbs=_crumbs(prefix))


def _crumbs(prefix: str) -> list[tuple[str, str]]:
    """(label, prefix) for each folder of ``prefix``: ``a/b/`` -> [(a/, a/), (b/, a/b/)]."""
    parts = prefix.split("/")[:-1]
    return [(f"{p}/", "/".join(parts[: i + 1]) + "/") for i, p in enumerate(parts)]


@router.get("/repos/{repo}/object")
def object_page(request: Request, repo: str, ref: str, path: str) -> Response:
    """An object's metadata; its preview loads separately (it may read the object)."""
    ui = ui_of(request)
    r = ui.repository(repo)
    entry = r.stat(ref, path)
    folder = path[: path.rfind("/") + 1]
    return ui.render(
        request,
        "object.html",
        repo=r,
        ref=ref,
        entry=entry,
        kind=kind_of(entry),
        crumbs=_crumbs(folder),
    )


@router.get("/repos/{repo}/object/preview")
def object_preview(request: Request, repo: str, ref: str, path: str) -> Response:
    ui = ui_of(request)
    r = ui.repository(repo)
    entry = r.stat(ref, path)
    found = preview(r, entry)
    return ui.render(request, "_preview.html", repo=r, ref=ref, entry=entry, preview=found)


@router.get("/repos/{repo}/object/raw")
def object_raw(request: Request, repo: str, ref: str, path: str, download: int = 0) -> Response:
    """The object's bytes, streamed (verified against its size and checksum as they go)."""
    ui = ui_of(request)
    r = ui.repository(repo)
    entry = r.stat(ref, path)
    inline = image_type(entry) if not download else None
    name = path.rsplit("/", 1)[-1] or "object"
    headers = {
        "Content-Length": str(entry.size),
        "Content-Security-Policy": RAW_CSP,
        "Content-Disposition": _disposition(name, attachment=inline is None),
    }
    media = inline or "application/octet-stream"
    return StreamingResponse(_chunks(r, entry), media_type=media, headers=headers)


def _chunks(repo: Repository, entry: ObjectEntry) -> Iterator[bytes]:
    with repo.open_entry(entry) as stream:
        while chunk := stream.read(CHUNK):
            yield chunk


def _disposition(name: str, attachment: bool) -> str:
    """A Content-Disposition naming the file (RFC 6266: ASCII fallback plus UTF-8)."""
    ascii_name = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "_" for c in name)
    kind = "attachment" if attachment else "inline"
    return f"{kind}; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}"
