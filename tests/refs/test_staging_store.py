"""StagingStore conformance (SQLite and PostgreSQL): tokens, tombstones, last-write-wins,
bytewise key order, iteration windows and batches, drops, atomicity of ``stage``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from graveler.core.errors import BranchNotFound, InvalidArgument
from graveler.core.model import StagedEntry
from graveler.storage.refs.store import MetadataStore
from tests.refs.conftest import OpenStore, new_repository

#: Bytewise order, including NUL, 0xFF, keys that prefix others, and non-ASCII UTF-8.
ORDERED_KEYS = [
    b"\x00",
    b"\x00\x00",
    b"\x01",
    b"A",
    b"Z",
    b"a",
    b"a\x00",
    b"a/b",
    b"a/b/c",
    b"ab",
    b"z",
    b"\x7f",
    b"\x80",
    "é".encode(),  # c3 a9
    "éa".encode(),
    "日本/データ".encode(),  # e6 97 a5
    "\U0001f600".encode(),  # f0 9f 98 80
    b"\xfe",
    b"\xff",
    b"\xff\x00",
    b"\xff\xff",
]


def value(key: bytes, n: int = 0) -> StagedEntry:
    return StagedEntry(key, b"id:" + key + bytes([n]), b"val:" + key + bytes([n]))


def tombstone(key: bytes) -> StagedEntry:
    return StagedEntry(key, None, None)


@pytest.fixture
def token(store: MetadataStore) -> str:
    """The staging token of ``repo``/``main``."""
    return new_repository(store).staging_token


def test_stage_returns_the_current_token_and_get_reads_back(
    store: MetadataStore, token: str
) -> None:
    assert store.stage("repo", "main", [value(b"k1"), tombstone(b"k2")]) == token
    assert store.get_staged(token, b"k1") == value(b"k1")
    got = store.get_staged(token, b"k2")
    assert got == tombstone(b"k2")
    assert got is not None and got.is_tombstone
    assert store.get_staged(token, b"k3") is None
    assert store.get_staged("other-token", b"k1") is None
    assert store.stage("repo", "main", []) == token


def test_last_write_wins_within_a_call_and_across_calls(store: MetadataStore, token: str) -> None:
    store.stage("repo", "main", [value(b"k", 1), tombstone(b"k"), value(b"k", 2)])
    assert store.get_staged(token, b"k") == value(b"k", 2)
    store.stage("repo", "main", [tombstone(b"k")])
    assert store.get_staged(token, b"k") == tombstone(b"k")
    store.stage("repo", "main", [value(b"k", 3)])
    assert store.get_staged(token, b"k") == value(b"k", 3)
    assert store.count_staged(token) == 1


def test_generator_input_crossing_chunk_boundaries(store_url: str, open_store: OpenStore) -> None:
    with open_store(store_url, stage_chunk_size=3) as store:
        token = new_repository(store).staging_token

        def entries() -> Iterator[StagedEntry]:
            for i in range(10):
                yield value(b"%02d" % i, 1)
            yield value(b"03", 2)  # overwrites a key written in an earlier chunk
            yield tombstone(b"08")
            yield value(b"99")

        store.stage("repo", "main", entries())
        staged = {e.key: e for e in store.iter_staged(token)}
    assert len(staged) == 11
    assert staged[b"03"] == value(b"03", 2)
    assert staged[b"08"] == tombstone(b"08")
    assert staged[b"00"] == value(b"00", 1)


def test_stage_is_one_transaction(store_url: str, open_store: OpenStore) -> None:
    with open_store(store_url, stage_chunk_size=2) as store:
        token = new_repository(store).staging_token

        def failing() -> Iterator[StagedEntry]:
            for i in range(7):
                yield value(b"%d" % i)
            raise RuntimeError("source failed")

        with pytest.raises(RuntimeError, match="source failed"):
            store.stage("repo", "main", failing())
        assert store.count_staged(token) == 0
        with pytest.raises(InvalidArgument, match="bytes"):
            store.stage("repo", "main", [value(b"a"), StagedEntry("b", None, None)])  # type: ignore[arg-type]
        with pytest.raises(InvalidArgument, match="identity"):
            store.stage("repo", "main", [value(b"a"), StagedEntry(b"b", "i", b"v")])  # type: ignore[arg-type]
        assert store.count_staged(token) == 0


def test_large_chunks_overwrite_and_tombstone(store_url: str, open_store: OpenStore) -> None:
    """Chunks big enough for PostgreSQL's COPY path, with overwrites across chunks and calls."""
    with open_store(store_url, stage_chunk_size=1_000) as store:
        token = new_repository(store).staging_token
        keys = [b"big/%05d" % i for i in range(2_500)]
        store.stage("repo", "main", (value(k, 1) for k in reversed(keys)))
        second = [tombstone(k) if i % 3 == 0 else value(k, 2) for i, k in enumerate(keys)]
        store.stage("repo", "main", [*second, value(keys[0], 3)])
        staged = list(store.iter_staged(token, batch_size=999))
    expected = {e.key: e for e in second} | {keys[0]: value(keys[0], 3)}
    assert staged == [expected[k] for k in keys]


def test_stage_on_missing_branch(store: MetadataStore) -> None:
    new_repository(store)
    with pytest.raises(BranchNotFound):
        store.stage("repo", "ghost", [value(b"k")])
    with pytest.raises(BranchNotFound):
        store.stage("nope", "main", [value(b"k")])


def test_tokens_are_independent(store: MetadataStore, token: str) -> None:
    dev = new_repository(store, "other").staging_token
    store.stage("repo", "main", [value(b"k", 1)])
    store.stage("other", "main", [value(b"k", 2), value(b"j")])
    assert store.get_staged(token, b"k") == value(b"k", 1)
    assert store.get_staged(dev, b"k") == value(b"k", 2)
    assert [e.key for e in store.iter_staged(token)] == [b"k"]
    assert store.count_staged(token) == 1
    assert store.count_staged(dev) == 2
    assert store.count_staged("unknown") == 0


def test_keys_iterate_in_bytewise_order(store: MetadataStore, token: str) -> None:
    assert sorted(ORDERED_KEYS) == ORDERED_KEYS
    store.stage("repo", "main", [value(k) for k in reversed(ORDERED_KEYS)])
    assert [e.key for e in store.iter_staged(token)] == ORDERED_KEYS
    assert [e.key for e in store.iter_staged(token, batch_size=2)] == ORDERED_KEYS
    for key in ORDERED_KEYS:
        assert store.get_staged(token, key) == value(key)


@pytest.mark.parametrize("batch_size", [1, 2, 3, 4, 5, 6, 7, 100])
def test_iter_staged_windows_at_every_batch_boundary(
    store: MetadataStore, token: str, batch_size: int
) -> None:
    keys = [b"a", b"a/1", b"a/2", b"a/3", b"b", b"b/1"]  # 6 keys: exact, +1, -1 batch sizes
    store.stage("repo", "main", [value(k) for k in keys] + [tombstone(b"a/2")])

    def listed(start: bytes = b"", prefix: bytes = b"") -> list[bytes]:
        found = store.iter_staged(token, start=start, prefix=prefix, batch_size=batch_size)
        return [e.key for e in found]

    assert listed() == keys
    assert listed(prefix=b"a/") == [b"a/1", b"a/2", b"a/3"]
    assert listed(prefix=b"a") == [b"a", b"a/1", b"a/2", b"a/3"]
    assert listed(start=b"a/2") == [b"a/2", b"a/3", b"b", b"b/1"]
    assert listed(start=b"a/25") == [b"a/3", b"b", b"b/1"]
    assert listed(start=b"a/2", prefix=b"a/") == [b"a/2", b"a/3"]
    assert listed(start=b"0", prefix=b"b") == [b"b", b"b/1"]  # start before the prefix
    assert listed(start=b"c", prefix=b"b") == []  # start after the prefix
    assert listed(start=b"zzz") == []
    assert listed(prefix=b"c") == []
    assert listed(prefix=b"b/1") == [b"b/1"]
    tomb = [e for e in store.iter_staged(token, prefix=b"a/2", batch_size=batch_size)]
    assert tomb == [tombstone(b"a/2")]


def test_prefixes_made_of_0xff(store: MetadataStore, token: str) -> None:
    keys = [b"\xfe\xff", b"\xff", b"\xff\x00", b"\xff\xff", b"\xff\xff\x01"]
    store.stage("repo", "main", [value(k) for k in keys])
    assert [e.key for e in store.iter_staged(token, prefix=b"\xff")] == keys[1:]
    assert [e.key for e in store.iter_staged(token, prefix=b"\xff\xff")] == keys[3:]
    assert [e.key for e in store.iter_staged(token, prefix=b"\xfe")] == keys[:1]
    store.drop_tokens([token], prefix=b"\xff\xff")
    assert [e.key for e in store.iter_staged(token)] == keys[:3]


def test_iter_staged_rejects_bad_batch_size_immediately(store: MetadataStore, token: str) -> None:
    with pytest.raises(InvalidArgument):
        store.iter_staged(token, batch_size=0)


def test_drop_tokens(store: MetadataStore, token: str) -> None:
    other = new_repository(store, "other").staging_token
    keys = [b"a", b"a/1", b"a/2", b"ab", b"b"]
    store.stage("repo", "main", [value(k) for k in keys])
    store.stage("other", "main", [value(k) for k in keys])

    store.drop_tokens([token], prefix=b"a/")
    assert [e.key for e in store.iter_staged(token)] == [b"a", b"ab", b"b"]
    assert store.count_staged(other) == 5

    store.drop_tokens([])
    store.drop_tokens(["unknown"])
    store.drop_tokens([token, other])
    assert store.count_staged(token) == 0
    assert store.count_staged(other) == 0


@pytest.mark.parametrize("count", [1, 3, 40], ids=["one", "few", "many"])
def test_a_missing_or_protected_branch_refuses_every_size_of_call(
    store: MetadataStore, token: str, count: int
) -> None:
    """SQLite stages calls of a few entries in one statement each
    (graveler.storage.refs.sqlite_stage), longer ones in chunks: both refuse alike and write
    nothing."""
    from graveler.core.errors import ProtectedBranch

    entries = [value(b"k%d" % i) for i in range(count)]
    with pytest.raises(BranchNotFound):
        store.stage("repo", "nope", entries)
    branch = store.get_branch("repo", "main")
    store.update_branch("repo", branch, dataclasses.replace(branch, protected=True))
    with pytest.raises(ProtectedBranch, match="protected"):
        store.stage("repo", "main", entries)
    assert store.count_staged(token) == 0
    store.update_branch("repo", store.get_branch("repo", "main"), branch)
    assert store.stage("repo", "main", entries) == token
    assert store.count_staged(token) == count


def test_a_failing_entry_source_rolls_the_whole_call_back(store: MetadataStore, token: str) -> None:
    """``entries`` is consumed inside the transaction: what iterating it raises undoes
    everything written before (what upload_many relies on to wait for its flush)."""

    def entries() -> Iterator[StagedEntry]:
        yield from (value(b"k%d" % i) for i in range(50))
        raise OSError("the flush failed")

    with pytest.raises(OSError, match="flush"):
        store.stage("repo", "main", entries())
    assert store.count_staged(token) == 0


@pytest.mark.parametrize("count", [1, 40], ids=["few", "many"])
def test_check_runs_inside_the_staging_transaction(
    store: MetadataStore, token: str, count: int
) -> None:
    """``stage(check=...)``: the check runs before anything is written, sees what earlier
    calls staged, and what it raises undoes the whole call (conditional writes)."""
    seen: list[int] = []

    def count_staged() -> None:
        seen.append(store.count_staged(token))

    first = [value(b"a%d" % i) for i in range(count)]
    store.stage("repo", "main", first, check=count_staged)
    store.stage("repo", "main", [value(b"b")], check=count_staged)
    assert seen == [0, count]

    def refuse() -> None:
        raise ValueError("precondition failed")

    with pytest.raises(ValueError, match="precondition"):
        store.stage("repo", "main", [value(b"c%d" % i) for i in range(count)], check=refuse)
    assert store.count_staged(token) == count + 1
