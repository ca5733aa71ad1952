"""Small JSON documents a repository keeps for this API, in its own storage namespace (under
``_graveler/lakefs/``, which garbage collection and fsck leave alone): its metadata. Stored
with the repository, so every worker and replica sees the same, and a deleted repository
takes nothing along. (The first version of this API kept branch protection patterns and
import statuses here too; both live in the refs database now, and patterns found here move
there when first read.)

Writes replace the whole document (last writer wins); the documents are small and change
rarely.
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


def delete(repo: Repository, name: str) -> None:
    """Remove the document ``name`` of ``repo`` (no error when there is none)."""
    repo.store.delete(PREFIX + name + ".json")
