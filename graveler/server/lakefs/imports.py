"""Import: lakeFS's asynchronous import over graveler's ``Repository.import_data`` (objects
outside the namespace committed by reference, one commit).

``POST .../import`` runs the import before it answers (202 with the import's ID), so a
client's status poll finds it completed; what went wrong before anything was committed
(a bad source, a branch with uncommitted changes, a protected branch) is answered at once
with lakeFS's status codes. The status is kept with the repository (:mod:`.settings`), so
any worker answers ``GET .../import``. An import that has completed cannot be canceled
(409, as in lakeFS); since every import here completes before its ID is known, a cancel
always finds it completed.

One path per import, of type ``common_prefix`` (a directory or a key prefix, which is what
``import_data`` imports); several paths or single objects are a 400. Sources are ``s3://``
(read with the server's S3 credentials) or, for admin keys only, local directories
(``local:///abs/dir`` as lakeFS spells them, or ``file:///abs/dir``).
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from typing import Any

from graveler.server.lakefs import encode, settings
from graveler.server.lakefs.errors import ApiError, bad_request, not_found
from graveler.server.lakefs.http import Call, Reply, json_reply, no_content
from graveler.server.lakefs.routing import Access, Body, Route, route

_ID = re.compile(r"[0-9a-f]{20}")


def start_import(call: Call) -> Reply:
    doc = call.json()
    source, destination = _single_path(doc.get("paths"))
    source = _source(call, source)
    commit = doc.get("commit")
    if not isinstance(commit, dict):
        raise bad_request("commit is required: {'message': ...}")
    message = commit.get("message")
    if message is not None and not isinstance(message, str):
        raise bad_request("commit.message must be a string")
    repo = call.repository()
    branch = call.params["branch"]
    result = repo.import_data(
        branch,
        source,
        destination,
        message=message or None,
        metadata=encode.metadata_of(commit.get("metadata"), "commit.metadata"),
        committer=call.committer,
    )
    import_id = os.urandom(10).hex()
    status = {
        "branch": branch,
        "completed": True,
        "update_time": encode.rfc3339(datetime.now(UTC)),
        "ingested_objects": result.objects,
        "metarange_id": result.commit.metarange_id,
        "commit": encode.commit(result.commit),
    }
    settings.write(repo, _key(import_id), status)
    return json_reply({"id": import_id}, 202)


def _single_path(paths: object) -> tuple[str, str]:
    if not isinstance(paths, list) or not paths:
        raise bad_request("paths is required: [{'type', 'path', 'destination'}]")
    if len(paths) > 1:
        raise bad_request("graveler imports one path per import: start one import per path")
    item = paths[0]
    if not isinstance(item, dict):
        raise bad_request("a path is {'type', 'path', 'destination'}")
    kind, path, destination = item.get("type"), item.get("path"), item.get("destination")
    if kind != "common_prefix":
        raise bad_request("graveler imports directories and prefixes (type common_prefix) only")
    if not isinstance(path, str) or not path or not isinstance(destination, str):
        raise bad_request("path and destination are required strings")
    return path, destination


def _source(call: Call, given: str) -> str:
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
    status = _status(call)
    status.pop("branch", None)
    return json_reply(status)


def cancel_import(call: Call) -> Reply:
    status = _status(call)
    if status.get("completed"):
        raise ApiError(409, "the import has already completed")
    return no_content()


def _status(call: Call) -> dict[str, Any]:
    import_id = call.required("id")
    if not _ID.fullmatch(import_id):
        raise not_found(f"no import {import_id[:40]!r}")
    status = settings.read(call.repository(), _key(import_id))
    if status is None or status.get("branch") != call.params["branch"]:
        raise not_found(f"no import {import_id!r} on branch {call.params['branch']!r}")
    return status


def _key(import_id: str) -> str:
    return f"imports/{import_id}"


_I = "/repositories/{repository}/branches/{branch}/import"
ROUTES: list[Route] = [
    route("POST", _I, start_import, Access.WRITE, Body.JSON),
    route("GET", _I, import_status),
    route("DELETE", _I, cancel_import, Access.WRITE),
]
