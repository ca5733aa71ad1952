"""Conformance of ``ObjectStore.open_writer`` (the push-style writer), on every backend: memory,
local directory and S3 via moto, through the ``store`` fixture."""

from __future__ import annotations

import hashlib
import os

import pytest

from graveler.core.errors import InvalidKey
from graveler.storage.objectstore import ObjectInfo, ObjectStore

MiB = 1 << 20


def _keys(store: ObjectStore) -> list[str]:
    return [info.key for info in store.list()]


def test_written_pieces_are_committed_with_size_and_sha256(store: ObjectStore) -> None:
    pieces = [b"hello ", bytearray(b"wide "), memoryview(b"world")]
    writer = store.open_writer("data/ab/one")
    assert [writer.write(p) for p in pieces] == [6, 5, 5]
    assert writer.size == 16
    assert writer.sha256() == hashlib.sha256(b"hello wide world").hexdigest()
    info = writer.commit()
    assert info == ObjectInfo("data/ab/one", 16, info.mtime)
    assert store.get("data/ab/one") == b"hello wide world"
    assert writer.commit() == info  # committing again is answered, not repeated


def test_nothing_is_visible_before_commit(store: ObjectStore) -> None:
    store.put("k", b"old")
    writer = store.open_writer("k")
    writer.write(b"new bytes")
    assert store.get("k") == b"old"
    fresh_key = store.open_writer("never-seen")
    fresh_key.write(b"x")
    assert not store.exists("never-seen")
    assert _keys(store) == ["k"]
    writer.commit()
    fresh_key.commit()
    assert store.get("k") == b"new bytes"
    assert _keys(store) == ["k", "never-seen"]


def test_abort_discards_and_keeps_the_old_object(store: ObjectStore) -> None:
    store.put("k", b"old")
    writer = store.open_writer("k")
    writer.write(b"replacement")
    writer.abort()
    writer.abort()  # a second abort is a no-op
    other = store.open_writer("gone")
    other.write(b"bytes")
    other.abort()
    assert store.get("k") == b"old"
    assert _keys(store) == ["k"]
    with pytest.raises(ValueError, match="aborted"):
        writer.commit()
    with pytest.raises(ValueError):
        writer.write(b"more")


def test_with_block_commits_on_success_and_aborts_on_error(store: ObjectStore) -> None:
    with store.open_writer("ok") as writer:
        writer.write(b"kept")
    assert store.get("ok") == b"kept"
    with pytest.raises(RuntimeError), store.open_writer("failed") as failing:
        failing.write(b"half")
        raise RuntimeError("the producer broke")
    assert not store.exists("failed")
    assert _keys(store) == ["ok"]


def test_closing_an_uncommitted_writer_discards_it(store: ObjectStore) -> None:
    writer = store.open_writer("closed")
    writer.write(b"bytes")
    writer.close()
    assert writer.closed
    assert not store.exists("closed")
    committed = store.open_writer("committed")
    committed.write(b"bytes")
    committed.commit()
    committed.close()  # closing after commit keeps the object
    committed.abort()
    assert store.get("committed") == b"bytes"


def test_large_object_streams_in_parts(store: ObjectStore) -> None:
    data = os.urandom(17 * MiB + 5)
    with store.open_writer("big/object") as writer:
        for start in range(0, len(data), 3 * MiB):
            writer.write(data[start : start + 3 * MiB])
    assert writer.sha256() == hashlib.sha256(data).hexdigest()
    assert store.stat("big/object").size == len(data)
    assert store.get("big/object") == data


def test_aborted_large_object_leaves_nothing(store: ObjectStore) -> None:
    writer = store.open_writer("big/aborted")
    writer.write(os.urandom(9 * MiB))
    writer.abort()
    assert _keys(store) == []


def test_empty_object(store: ObjectStore) -> None:
    info = store.open_writer("empty").commit()
    assert info.size == 0
    assert store.get("empty") == b""


def test_fresh_writer_commits_and_aborts(store: ObjectStore) -> None:
    with store.open_writer("data/0f/fresh", fresh=True) as writer:
        writer.write(b"in place")
    assert store.get("data/0f/fresh") == b"in place"
    dropped = store.open_writer("data/0f/dropped", fresh=True)
    dropped.write(b"partial")
    dropped.abort()
    assert _keys(store) == ["data/0f/fresh"]


def test_invalid_keys_are_refused(store: ObjectStore) -> None:
    for bad in ("", "/abs", "a/../b", "a//b", "nul\x00"):
        with pytest.raises(InvalidKey):
            store.open_writer(bad)


def test_relaxed_writers_publish_at_commit_and_sync_later(store: ObjectStore) -> None:
    keys = [f"data/{i % 3:02x}/obj-{i}" for i in range(7)]
    for key in keys:
        with store.open_writer(key, fresh=True, durable=False) as writer:
            writer.write(key.encode())
    assert [store.get(k) for k in keys] == [k.encode() for k in keys]  # visible at commit
    store.sync(keys)  # and durable now; syncing again, or nothing, is fine
    store.sync(keys[:1])
    store.sync([])
    assert sorted(_keys(store)) == sorted(keys)
    with store.open_writer("plain", durable=False) as writer:
        writer.write(b"atomic too")
    store.sync(["plain"])
    assert store.get("plain") == b"atomic too"
