"""The mark phase's building blocks: reading tree files straight from a storage namespace.

These functions bypass the tiered cache and use only :class:`graveler.storage.sstable.SstReader` and
the record decoders, so they work unchanged inside Spark executors (pure Python, no database).
Every file is verified: bytes that do not hash to the file's name raise
:class:`~graveler.core.errors.CorruptFile`, because marking from damaged metadata could delete
live data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from graveler.core.errors import ObjectNotFound
from graveler.core.model import EMPTY_METARANGE_ID
from graveler.storage.committed.files import TREE_PREFIX, decode_metarange_file, decode_range_file
from graveler.storage.entry import physical_address_of
from graveler.storage.objects import DATA_PREFIX
from graveler.storage.objectstore.port import ObjectStore
from graveler.storage.refs.port import StagingStore

_TREE_FILE = re.compile(r"_graveler/[0-9a-f]{64}")


def metarange_range_ids(store: ObjectStore, metarange_id: str) -> list[str]:
    """IDs of the ranges of one metarange (empty for the empty tree)."""
    if metarange_id == EMPTY_METARANGE_ID:
        return []
    data = _tree_file(store, metarange_id)
    return [r.id for r in decode_metarange_file(metarange_id, data).ranges]


def range_addresses(store: ObjectStore, range_id: str) -> list[str]:
    """Physical addresses (relative to the namespace) of every entry in one range."""
    data = _tree_file(store, range_id)
    records = decode_range_file(range_id, data).records
    return [physical_address_of(rec.key, rec.value) for rec in records]


def staged_addresses(staging: StagingStore, tokens: Iterable[str]) -> set[str]:
    """Addresses of every value staged under ``tokens`` (tombstones have none)."""
    found: set[str] = set()
    for token in tokens:
        for entry in staging.iter_staged(token):
            if entry.value is not None:
                found.add(physical_address_of(entry.key, entry.value))
    return found


def is_collectable(key: str) -> bool:
    """Whether GC may ever delete ``key``: data objects under ``data/`` and tree files named
    by their 64-hex content address under ``_graveler/``. Anything else in the namespace is
    not graveler's to delete."""
    return key.startswith(DATA_PREFIX) or _TREE_FILE.fullmatch(key) is not None


def tree_file_id(key: str) -> str | None:
    """The file ID of a tree-file key, else None."""
    return key[len(TREE_PREFIX) :] if _TREE_FILE.fullmatch(key) else None


def _tree_file(store: ObjectStore, file_id: str) -> bytes:
    try:
        return store.get(TREE_PREFIX + file_id)
    except ObjectNotFound as exc:
        raise ObjectNotFound(
            f"tree file {file_id} is missing from {store.uri}/{TREE_PREFIX}; garbage "
            "collection stops here because it cannot tell what that file references"
        ) from exc
