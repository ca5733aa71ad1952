"""What garbage collection expired: the record fsck reads to tell deleted-by-design from lost.

Before it deletes anything, a collection run writes the IDs of the commits its retention rules
expired (those not recorded by an earlier run) to ``_graveler/gc/expired/<time>-<8 hex>``, one
per line. Commit metadata is never collected, so the IDs stay meaningful. A commit once
expired stays expired for fsck even if later rules would retain it: its objects may be gone.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

from graveler.storage.committed.files import TREE_PREFIX
from graveler.storage.objectstore.port import ObjectStore

EXPIRED_PREFIX = TREE_PREFIX + "gc/expired/"
_COMMIT_ID = re.compile(rb"[0-9a-f]{64}")


def expired_commits(store: ObjectStore) -> set[str]:
    """IDs of every commit a collection run of this namespace expired."""
    found: set[str] = set()
    for info in store.list(EXPIRED_PREFIX):
        for line in store.get(info.key).splitlines():
            if _COMMIT_ID.fullmatch(line.strip()):
                found.add(line.strip().decode())
    return found


def record_expired(store: ObjectStore, expired: frozenset[str]) -> int:
    """Record the commits among ``expired`` not recorded yet; returns how many were new.
    Called before a run deletes anything, so every deleted object's commits are on record."""
    new = sorted(expired - expired_commits(store))
    if new:
        name = f"{datetime.now(UTC):%Y%m%dT%H%M%S%f}Z-{uuid.uuid4().hex[:8]}"
        store.put(EXPIRED_PREFIX + name, "".join(f"{cid}\n" for cid in new).encode())
    return len(new)
