"""Small JSON documents a repository keeps for this API, in its own storage namespace (under
``_graveler/lakefs/``, which garbage collection and fsck leave alone): its branch protection
patterns, its metadata, the status of its imports. Stored with the repository, so every
worker and replica sees the same, and a deleted repository takes nothing along.

Writes replace the whole document (last writer wins); the documents are small and change
rarely, and branch protection guards a replace with its ETag (``If-Match``).
"""

from __future__ import annotations

import json
from typing import Any

from graveler.core.errors import CorruptFile, ObjectNotFound
from graveler.repository import Repository

PREFIX = "_graveler/lakefs/"


def read(repo: Repository, name: str) -> dict[str, Any] | None:
    """The document ``name`` of ``repo``, None when there is none."""
    try:
        data = repo.store.get(PREFIX + name + ".json")
    except ObjectNotFound:
        return None
    try:
        doc = json.loads(data)
    except ValueError:
        raise CorruptFile(f"{PREFIX}{name}.json of {repo.name!r} is not JSON") from None
    if not isinstance(doc, dict):
        raise CorruptFile(f"{PREFIX}{name}.json of {repo.name!r} is not a JSON object")
    return doc


def write(repo: Repository, name: str, doc: dict[str, Any]) -> None:
    """Replace the document ``name`` of ``repo``."""
    repo.store.put(PREFIX + name + ".json", json.dumps(doc, sort_keys=True).encode())
