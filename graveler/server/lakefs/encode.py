"""graveler's model types as lakeFS's API schemas: one place for every shape.

Times are Unix seconds (lakeFS's ``creation_date`` and ``mtime``) or RFC 3339 (hook runs).
An object's ``checksum`` is its S3 ETag (the MD5 of its bytes when graveler recorded one),
which is what lakeFS reports and what clients compare with a local MD5. Pages carry lakeFS's
``pagination``: ``has_more``, ``next_offset`` (what to pass as ``after``), ``results`` (how
many came) and ``max_per_page`` (1000).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from graveler.core.hookevents import HookResult, HookRun
from graveler.core.model import Commit
from graveler.core.model import Repository as RepositoryInfo
from graveler.server.lakefs.errors import bad_request
from graveler.server.lakefs.http import MAX_AMOUNT
from graveler.server.lakefs.storage import Storage
from graveler.storage.entry import ObjectEntry, etag_of

OBJECT = "object"
COMMON_PREFIX = "common_prefix"


def seconds(when: datetime) -> int:
    return int(when.timestamp())


def rfc3339(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def pagination(results: int, next_offset: str | None) -> dict[str, Any]:
    """lakeFS's ``Pagination``: ``next_offset`` None when there is no further page."""
    return {
        "has_more": next_offset is not None,
        "next_offset": next_offset or "",
        "results": results,
        "max_per_page": MAX_AMOUNT,
    }


def page(results: Sequence[Any], next_offset: str | None) -> dict[str, Any]:
    return {"pagination": pagination(len(results), next_offset), "results": list(results)}


def repository(info: RepositoryInfo, storage: Storage) -> dict[str, Any]:
    return {
        "id": info.name,
        "creation_date": seconds(info.creation_date),
        "default_branch": info.default_branch,
        "storage_id": storage.storage_id(info.storage_namespace),
        "storage_namespace": storage.external(info.storage_namespace),
        "read_only": False,
    }


def ref(name: str, commit_id: str) -> dict[str, str]:
    return {"id": name, "commit_id": commit_id}


def commit(c: Commit) -> dict[str, Any]:
    return {
        "id": c.id,
        "parents": list(c.parents),
        "committer": c.committer,
        "message": c.message,
        "creation_date": seconds(c.creation_date),
        "meta_range_id": c.metarange_id,
        "metadata": dict(c.metadata),
        "generation": c.generation,
        "version": 1,
    }


def object_stats(
    entry: ObjectEntry,
    physical_address: str,
    *,
    metadata: bool = True,
    expiry: int | None = None,
) -> dict[str, Any]:
    """lakeFS's ``ObjectStats`` of an object; ``physical_address`` as the caller shows it
    (a URI, or a presigned URL with its ``expiry``)."""
    doc: dict[str, Any] = {
        "path": entry.path,
        "path_type": OBJECT,
        "physical_address": physical_address,
        "checksum": etag_of(entry),
        "size_bytes": entry.size,
        "mtime": seconds(entry.mtime),
        "content_type": entry.content_type,
        "metadata": dict(entry.metadata) if metadata else {},
    }
    if expiry is not None:
        doc["physical_address_expiry"] = expiry
    return doc


def common_prefix(path: str) -> dict[str, Any]:
    """A common prefix in an object listing (lakeFS fills the object fields with zeros)."""
    return {
        "path": path,
        "path_type": COMMON_PREFIX,
        "physical_address": "",
        "checksum": "",
        "mtime": 0,
    }


def diff(kind: str, path: str, entry: ObjectEntry | None, *, right: bool) -> dict[str, Any]:
    """lakeFS's ``Diff`` of one object (``entry``: the side whose size is reported; with
    ``right`` its stats too)."""
    doc: dict[str, Any] = {"type": kind, "path": path, "path_type": OBJECT}
    if entry is not None:
        doc["size_bytes"] = entry.size
        if right:
            doc["right"] = {
                "checksum": etag_of(entry),
                "content_type": entry.content_type,
                "mtime": seconds(entry.mtime),
                "metadata": dict(entry.metadata),
            }
    return doc


def prefix_diff(path: str) -> dict[str, Any]:
    """A common prefix under which something changed (a diff with a delimiter)."""
    return {"type": "prefix_changed", "path": path, "path_type": COMMON_PREFIX}


def action_run(run: HookRun) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "branch": run.branch or "",
        "start_time": rfc3339(run.started),
        "end_time": rfc3339(run.ended),
        "event_type": run.event.value,
        "status": "completed" if run.passed else "failed",
        "commit_id": run.commit_id,
    }


def hook_run(hook_run_id: str, result: HookResult) -> dict[str, Any]:
    return {
        "hook_run_id": hook_run_id,
        "action": result.action or "",
        "hook_id": result.hook_id,
        "start_time": rfc3339(result.started),
        "end_time": rfc3339(result.ended),
        "status": "completed" if result.status.value == "passed" else "failed",
    }


def metadata_of(value: object, what: str) -> dict[str, str]:
    """A JSON object of strings from a request (user metadata, commit metadata)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise bad_request(f"{what} must be an object of strings")
    return dict(value)
