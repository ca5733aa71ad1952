"""Import: lakeFS's asynchronous import over the engine's background imports
(:mod:`graveler.versioning.import_jobs`: objects outside the namespace committed by reference,
several sources in one commit).

``POST .../import`` checks the request and the branch (a bad source, a branch with
uncommitted changes or one a protection rule keeps from commits are answered at once, with
lakeFS's status codes), starts the import on a thread of this server and answers 202 with its
ID: no request waits for an import, however large. Its status lives in the refs database, so
any worker or replica answers ``GET .../import`` (``completed``, ``ingested_objects`` so far,
``update_time``, and the ``commit`` and ``metarange_id`` once done, or the ``error``) and
``DELETE .../import`` (cancel: 204; 409 once it completed). An import whose server died is
reported failed by the next status read, once its lease ran out.

Paths are lakeFS's: ``common_prefix`` (a key prefix or a directory, under the destination
prefix) and ``object`` (one object, at exactly the destination path), as many as a request
holds. Sources are ``s3://`` (read with the server's S3 credentials) or, for admin keys
only, local paths (``local:///abs/path`` as lakeFS spells them, or ``file:///abs/path``).
"""

from __future__ import annotations

from typing import Any

from graveler.core.model import ImportJob, ImportState
from graveler.server.lakefs import encode
from graveler.server.lakefs.errors import ApiError, bad_request, not_found
from graveler.server.lakefs.http import Call, Reply, json_reply, no_content
from graveler.server.lakefs.routing import Access, Body, Route, route
from graveler.versioning.import_sources import ImportKind, ImportSource

#: Paths one request may import.
MAX_PATHS = 10_000
#: The commit message of an import that names none, as lakeFS's API gives it.
DEFAULT_MESSAGE = "Import objects"


def start_import(call: Call) -> Reply:
    doc = call.json()
    sources = [_source(call, item) for item in _paths(doc.get("paths"))]
    commit = doc.get("commit")
    if not isinstance(commit, dict):
        raise bad_request("commit is required: {'message': ...}")
    message = commit.get("message")
    if message is not None and not isinstance(message, str):
        raise bad_request("commit.message must be a string")
    job = call.repository().imports.start(
        call.params["branch"],
        sources,
        message=message or DEFAULT_MESSAGE,
        metadata=encode.metadata_of(commit.get("metadata"), "commit.metadata"),
        committer=call.committer,
    )
    return json_reply({"id": job.id}, 202)


def _paths(paths: object) -> list[dict[str, Any]]:
    if not isinstance(paths, list) or not paths:
        raise bad_request("paths is required: [{'type', 'path', 'destination'}, ...]")
    if len(paths) > MAX_PATHS:
        raise bad_request(f"an import takes at most {MAX_PATHS} paths")
    if not all(isinstance(p, dict) for p in paths):
        raise bad_request("a path is {'type', 'path', 'destination'}")
    return paths


def _source(call: Call, item: dict[str, Any]) -> ImportSource:
    kind, path, destination = item.get("type"), item.get("path"), item.get("destination")
    if kind not in (ImportKind.PREFIX.value, ImportKind.OBJECT.value):
        raise bad_request("a path's type is common_prefix or object")
    if not isinstance(path, str) or not path or not isinstance(destination, str):
        raise bad_request("path and destination are required strings")
    return ImportSource(_uri(call, path), destination, ImportKind(kind))


def _uri(call: Call, given: str) -> str:
    """The engine's spelling of an import source; local sources need an admin key."""
    if given.startswith("s3://"):
        return given
    if given.startswith(("local://", "file://")):
        if not call.who.admin:
            raise ApiError(403, "importing from the server's local disk takes an admin key")
        rest = given.split("://", 1)[1]
        return "file://" + ("/" + rest.lstrip("/"))
    raise bad_request(f"unsupported import source {given[:80]!r}: use s3:// or local://")


def import_status(call: Call) -> Reply:
    job = _job(call)
    status: dict[str, Any] = {
        "completed": job.completed,
        "update_time": encode.rfc3339(job.updated),
        "ingested_objects": job.ingested,
    }
    if job.completed and job.commit_id:
        status["metarange_id"] = job.metarange_id
        status["commit"] = encode.commit(call.repository().get_commit(job.commit_id))
    if job.state in (ImportState.FAILED, ImportState.CANCELED):
        status["error"] = {"message": job.error or job.state.value}
    return json_reply(status)


def cancel_import(call: Call) -> Reply:
    call.repository().imports.cancel(_job(call).id)
    return no_content()


def _job(call: Call) -> ImportJob:
    """The import ``id`` of this branch as it stands; 404 for an unknown one or another
    branch's."""
    import_id, branch = call.required("id"), call.params["branch"]
    job = call.repository().imports.status(import_id)
    if job.branch != branch:
        raise not_found(f"no import {import_id!r} on branch {branch!r}")
    return job


_I = "/repositories/{repository}/branches/{branch}/import"
ROUTES: list[Route] = [
    route("POST", _I, start_import, Access.WRITE, Body.JSON),
    route("GET", _I, import_status),
    route("DELETE", _I, cancel_import, Access.WRITE),
]
