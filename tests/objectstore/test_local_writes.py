"""How the local store hands bytes to the disk: write-back started as a file grows, the
real ``sync_file_range`` hint, and the size of each ``write`` call."""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

import pytest

from graveler.storage.objectstore.local import LocalObjectStore


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def store(root: Path) -> LocalObjectStore:
    return LocalObjectStore(str(root))


@pytest.mark.parametrize(
    ("fresh", "durable", "flushed"),
    [(False, True, True), (True, True, True), (False, False, True), (True, False, False)],
)
def test_a_file_that_will_be_fsynced_is_handed_to_the_disk_as_it_grows(
    store: LocalObjectStore,
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    fresh: bool,
    durable: bool,
    flushed: bool,
) -> None:
    """Every stretch written goes to start_writeback once, in order, in steps of at least
    WRITEBACK_STEP, from the first byte; a fresh writer without durability (flushed by
    the store's sync later) starts none. The bytes are the ones written."""
    from graveler.storage.objectstore import local_writer

    ranges: list[tuple[int, int]] = []
    monkeypatch.setattr(local_writer, "WRITEBACK_STEP", 1 << 20)
    monkeypatch.setattr(local_writer, "start_writeback", lambda fd, o, n: ranges.append((o, n)))
    pieces = [os.urandom(n) for n in (300 << 10, 1 << 20, 5, 700 << 10, 2 << 20, 100 << 10)]
    with store.open_writer("big/object", fresh=fresh, durable=durable) as writer:
        for piece in pieces:
            writer.write(piece)
    writer.commit()
    assert (root / "big" / "object").read_bytes() == b"".join(pieces)
    if not flushed:
        assert ranges == []
        return
    assert ranges and ranges[0][0] == 0
    assert all(o + n == after for (o, n), (after, _) in itertools.pairwise(ranges))
    assert all(n >= 1 << 20 for _, n in ranges)
    assert sum(n for _, n in ranges) > sum(map(len, pieces)) - (1 << 20)


def test_writeback_is_a_hint_that_linux_takes_and_that_keeps_the_bytes(tmp_path: Path) -> None:
    """The real call on a real file: Linux's sync_file_range takes it (a wrong signature or
    flag is refused with EINVAL), a descriptor that is not open is refused, and the bytes
    are the ones written; elsewhere nothing is called."""
    from graveler.storage.objectstore.durability import start_writeback

    path = tmp_path / "f"
    data = os.urandom(3 << 20)
    linux = sys.platform.startswith("linux")
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        assert start_writeback(fh.fileno(), 0, len(data)) is linux
        os.fsync(fh.fileno())
        closed = os.dup(fh.fileno())
        os.close(closed)
        assert start_writeback(closed, 0, len(data)) is False
    assert path.read_bytes() == data


class _WriteRecorder:
    """``os`` for the writer module, with ``write`` recording each call's size and taking at
    most ``most`` bytes a call (as a short write may)."""

    def __init__(self, most: int) -> None:
        self.sizes: list[int] = []
        self._most = most

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def write(self, fd: int, data: memoryview) -> int:
        self.sizes.append(len(data))
        return os.write(fd, data[: self._most])


@pytest.mark.parametrize("most", [1 << 30, 100_000])
def test_large_writes_reach_the_file_at_most_1mib_a_call(
    store: LocalObjectStore, root: Path, monkeypatch: pytest.MonkeyPatch, most: int
) -> None:
    """One ``write`` call of several MiB fills a new ext4 file about five times slower than
    the same bytes in calls of 1 MiB (local_writer.WRITE_CALL): every path that writes a
    file hands it over in calls of at most that, short writes included, and the bytes are
    the ones given."""
    from graveler.storage.objectstore import local_writer

    recorder = _WriteRecorder(most)
    monkeypatch.setattr(local_writer, "os", recorder)
    big = os.urandom((5 << 20) + 123)
    with store.open_writer("w/streamed", fresh=True) as writer:
        writer.write(big)
    writer.commit()
    store.put("w/put", big)
    store.put_fresh_batch([("w/batch", big)])
    for name in ("streamed", "put", "batch"):
        assert (root / "w" / name).read_bytes() == big
    assert max(recorder.sizes) <= local_writer.WRITE_CALL == 1 << 20
    assert sum(recorder.sizes) >= 3 * len(big)
