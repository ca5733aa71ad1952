"""The ObjectStore conformance suite: every contract of ``graveler.storage.objectstore.port``, run
against every backend (memory, local directory, S3 via moto) through the ``store`` fixture."""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graveler.core.errors import InvalidArgument, InvalidKey, ObjectNotFound
from graveler.storage.objectstore import ObjectInfo, ObjectStore, open_object_store
from tests.objectstore.helpers import CountingReader, ReaderBroke

MiB = 1 << 20


def _keys(store: ObjectStore, prefix: str = "") -> list[str]:
    return [info.key for info in store.list(prefix)]


def test_satisfies_the_protocol(store: ObjectStore) -> None:
    assert isinstance(store, ObjectStore)
    assert store.uri.split("://", 1)[0] in ("mem", "file", "s3")


def test_put_get_bytes_round_trip(store: ObjectStore) -> None:
    info = store.put("data/ab/cd", b"hello world")
    assert info == ObjectInfo("data/ab/cd", 11, info.mtime)
    assert store.get("data/ab/cd") == b"hello world"


def test_put_empty_object(store: ObjectStore) -> None:
    assert store.put("empty", b"").size == 0
    assert store.get("empty") == b""
    assert store.stat("empty").size == 0
    assert store.read_range("empty", 0, 10) == b""
    with store.open("empty") as f:
        assert f.read() == b""


def test_put_stream_is_read_in_chunks(store: ObjectStore) -> None:
    data = os.urandom(12 * MiB + 123)
    reader = CountingReader(data)
    info = store.put("big/streamed", reader.as_binary())
    assert info.size == len(data)
    assert store.get("big/streamed") == data
    # every read asked for a bounded amount: the stream was never slurped with read()/read(-1)
    assert all(size is not None and 0 < size <= 16 * MiB for size in reader.sizes)
    assert len(reader.sizes) > 2


def test_put_large_bytes(store: ObjectStore) -> None:
    data = os.urandom(12 * MiB)
    assert store.put("big/bytes", data).size == len(data)
    assert store.stat("big/bytes").size == len(data)
    assert store.get("big/bytes") == data
    assert store.read_range("big/bytes", 9 * MiB - 5, 10) == data[9 * MiB - 5 : 9 * MiB + 5]


def test_overwrite_replaces_the_object(store: ObjectStore) -> None:
    store.put("k", b"first version, longer")
    store.put("k", b"second")
    assert store.get("k") == b"second"
    assert store.stat("k").size == 6
    assert _keys(store) == ["k"]


def test_failed_stream_put_keeps_the_old_object(store: ObjectStore) -> None:
    store.put("victim", b"old contents")
    broken = CountingReader(os.urandom(20 * MiB), fail_after=10)
    with pytest.raises(ReaderBroke):
        store.put("victim", broken.as_binary())
    assert store.get("victim") == b"old contents"
    with pytest.raises(ReaderBroke):
        store.put("never", CountingReader(b"x" * (3 * MiB), fail_after=1).as_binary())
    assert not store.exists("never")
    assert _keys(store) == ["victim"]


def test_open_streams_the_object(store: ObjectStore) -> None:
    data = os.urandom(3 * MiB + 7)
    store.put("s", data)
    pieces = []
    with store.open("s") as f:
        while piece := f.read(256 * 1024):
            pieces.append(piece)
    assert b"".join(pieces) == data
    assert len(pieces) > 1


@pytest.mark.parametrize(
    ("offset", "length", "expected"),
    [
        (0, 5, b"01234"),
        (3, 4, b"3456"),
        (7, 100, b"789"),  # shorter at end of object
        (9, 1, b"9"),
        (10, 5, b""),  # exactly at the end
        (50, 5, b""),  # past the end
        (4, 0, b""),
    ],
)
def test_read_range(store: ObjectStore, offset: int, length: int, expected: bytes) -> None:
    store.put("r", b"0123456789")
    assert store.read_range("r", offset, length) == expected


def test_read_range_rejects_negative_numbers(store: ObjectStore) -> None:
    store.put("r", b"0123456789")
    with pytest.raises(InvalidArgument):
        store.read_range("r", -1, 3)
    with pytest.raises(InvalidArgument):
        store.read_range("r", 0, -3)


def test_range_reader_seeks_and_reads_like_a_file(store: ObjectStore) -> None:
    import io

    from graveler.storage.objectstore import RangeReader

    data = bytes(range(256)) * 40
    store.put("rr", data)
    raw = RangeReader(store, "rr", len(data))
    assert raw.seek(-8, io.SEEK_END) == len(data) - 8 and raw.read() == data[-8:]
    assert raw.read(4) == b""  # at the end
    raw.seek(100)
    assert raw.read(10) == data[100:110] and raw.tell() == 110
    assert raw.seek(5, io.SEEK_CUR) == 115
    buffered = io.BufferedReader(RangeReader(store, "rr", len(data)), buffer_size=64)
    assert buffered.read() == data


def test_stat_reports_size_and_aware_utc_mtime(store: ObjectStore) -> None:
    before = datetime.now(UTC)
    put_info = store.put("dir/s", b"x" * 1234)
    info = store.stat("dir/s")
    assert (info.key, info.size) == ("dir/s", 1234)
    for mtime in (info.mtime, put_info.mtime):
        assert mtime.tzinfo is not None
        assert mtime.utcoffset() == timedelta(0)
        assert abs(mtime - before) < timedelta(minutes=5)


def test_exists(store: ObjectStore) -> None:
    assert not store.exists("a/b")
    store.put("a/b", b"1")
    assert store.exists("a/b")
    assert not store.exists("a")  # a "directory" is not an object
    assert not store.exists("a/b/c")


def test_delete_is_idempotent(store: ObjectStore) -> None:
    store.put("gone/soon", b"1")
    store.delete("gone/soon")
    assert not store.exists("gone/soon")
    store.delete("gone/soon")
    store.delete("never/was")
    with pytest.raises(ObjectNotFound):
        store.get("gone/soon")


# No key is also a "directory" of another key: a local store cannot hold both "a" and "a/b"
# (see test_local.py). '-' < '/' < '0' checks that nested keys sort as flat strings.
LIST_KEYS = [
    *("a!", "a-c", "a/b", "a/c/d", "a0", "ab", "b/x"),
    *("data/2f/ab12", "data/2f/ac", "data/30"),
]


def test_list_is_sorted_recursive_and_prefix_is_a_plain_string(store: ObjectStore) -> None:
    for i, key in enumerate(reversed(LIST_KEYS)):
        store.put(key, b"v" * i)
    assert _keys(store) == sorted(LIST_KEYS) == LIST_KEYS
    assert _keys(store, "a/") == ["a/b", "a/c/d"]
    assert _keys(store, "a") == ["a!", "a-c", "a/b", "a/c/d", "a0", "ab"]
    assert _keys(store, "a/c") == ["a/c/d"]
    assert _keys(store, "data/2f/a") == ["data/2f/ab12", "data/2f/ac"]
    assert _keys(store, "data/") == ["data/2f/ab12", "data/2f/ac", "data/30"]
    assert _keys(store, "data/2") == ["data/2f/ab12", "data/2f/ac"]
    assert _keys(store, "zzz") == []
    assert _keys(store, "a/c/d") == ["a/c/d"]
    assert _keys(store, "a/c/d/") == []
    sizes = {info.key: info.size for info in store.list()}
    assert sizes == {key: i for i, key in enumerate(reversed(LIST_KEYS))}
    assert all(info.mtime.tzinfo is not None for info in store.list())


def test_list_of_an_empty_store(store: ObjectStore) -> None:
    assert _keys(store) == []
    assert _keys(store, "nothing/") == []


@pytest.mark.parametrize("prefix", ["../", "/abs", "a//", "a/./", "x\x00"])
def test_list_refuses_impossible_prefixes_at_call_time(store: ObjectStore, prefix: str) -> None:
    with pytest.raises(InvalidKey):
        store.list(prefix)


def test_missing_key_raises_object_not_found(store: ObjectStore) -> None:
    store.put("present", b"1")
    for call in (
        lambda: store.get("missing"),
        lambda: store.open("missing"),
        lambda: store.read_range("missing", 0, 10),
        lambda: store.read_range("missing", 0, 0),
        lambda: store.stat("missing"),
        lambda: store.get("present/child"),
        lambda: store.stat("nested/missing/key"),
    ):
        with pytest.raises(ObjectNotFound):
            call()
    assert store.exists("missing") is False


BAD_KEYS = ["../x", "/abs", "a//b", "", "a\x00b", "a/./b", "a/..", "..", "x/", "é" * 600]


@pytest.mark.parametrize("key", BAD_KEYS, ids=repr)
def test_invalid_keys_are_refused_and_nothing_is_written(store: ObjectStore, key: str) -> None:
    calls: list[Any] = [
        lambda: store.put(key, b"data"),
        lambda: store.put(key, CountingReader(b"data").as_binary()),
        lambda: store.get(key),
        lambda: store.open(key),
        lambda: store.read_range(key, 0, 1),
        lambda: store.stat(key),
        lambda: store.exists(key),
        lambda: store.delete(key),
        lambda: store.local_path(key),
    ]
    for call in calls:
        with pytest.raises(InvalidKey):
            call()
    assert _keys(store) == []


def test_unicode_keys_round_trip_in_code_point_order(store: ObjectStore) -> None:
    keys = ["u/z", "u/é", "u/日本", "u/\U0001f600", "u/A b+c=d"]
    for key in keys:
        store.put(key, key.encode())
    assert _keys(store, "u/") == sorted(keys)
    assert all(store.get(key) == key.encode() for key in keys)


def test_local_path_is_a_real_file_or_none(store: ObjectStore) -> None:
    store.put("lp/file", b"on disk?")
    path = store.local_path("lp/file")
    if store.uri.startswith("file://"):
        assert path is not None
        with open(path, "rb") as f:
            assert f.read() == b"on disk?"
    else:
        assert path is None


def test_reopening_by_uri_sees_the_same_objects(
    store: ObjectStore, reopen_options: dict[str, Any]
) -> None:
    store.put("shared/key", b"same")
    again = open_object_store(store.uri, **reopen_options)
    assert again.uri == store.uri
    assert again.get("shared/key") == b"same"
    assert _keys(again) == ["shared/key"]


def test_concurrent_readers_never_see_a_torn_object(store: ObjectStore) -> None:
    versions = [b"a" * MiB, b"b" * (MiB + 17)]
    store.put("hot", versions[0])
    seen: set[bytes] = set()
    failures: list[BaseException] = []
    done = threading.Event()

    def read_loop() -> None:
        try:
            while not done.is_set():
                value = store.get("hot")
                assert value in versions, f"torn read of {len(value)} bytes"
                seen.add(value[:1])
        except BaseException as exc:
            failures.append(exc)

    readers = [threading.Thread(target=read_loop) for _ in range(3)]
    for t in readers:
        t.start()
    try:
        for i in range(12):
            store.put("hot", versions[i % 2])
    finally:
        done.set()
        for t in readers:
            t.join(30)
    assert not failures
    assert seen <= {b"a", b"b"}


def test_put_if_absent_creates_only_once(store: ObjectStore) -> None:
    assert store.put_if_absent("_graveler/marker", b"first") is True
    assert store.put_if_absent("_graveler/marker", b"second") is False
    assert store.get("_graveler/marker") == b"first"
    store.put("plain", b"x")
    assert store.put_if_absent("plain", b"y") is False
    assert store.get("plain") == b"x"
    assert _keys(store) == ["_graveler/marker", "plain"]  # no temporary files left behind


def test_put_if_absent_has_exactly_one_winner(store: ObjectStore) -> None:
    barrier = threading.Barrier(6)
    results: dict[int, bool] = {}

    def claim(i: int) -> None:
        barrier.wait()
        results[i] = store.put_if_absent("claim", f"writer-{i}".encode())

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [i for i, won in results.items() if won]
    assert len(results) == 6 and len(winners) == 1
    assert store.get("claim") == f"writer-{winners[0]}".encode()


def test_put_if_absent_refuses_bad_keys(store: ObjectStore) -> None:
    for key in ("", "/abs", "a/../b", "a//b"):
        with pytest.raises(InvalidKey):
            store.put_if_absent(key, b"x")
