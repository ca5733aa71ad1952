"""``Repository.upload_many``: parallel writes, one staging transaction, all or nothing."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from graveler.core.errors import InvalidArgument, InvalidKey, ProtectedBranch
from graveler.repository import Repository


def _objects(repo: Repository) -> list[str]:
    return sorted(i.key for i in repo.store.list("data/"))


def test_uploads_from_bytes_files_and_paths_in_one_staging(repo: Repository, tmp_path: Path):
    local = tmp_path / "local.csv"
    local.write_bytes(b"a,b\n1,2\n")
    seen: list[str] = []
    entries = repo.upload_many(
        "main",
        [("x/bytes", b"raw"), ("x/stream", io.BytesIO(b"streamed")), ("x/local.csv", local)],
        metadata={"batch": "1"},
        workers=2,
        progress=lambda e: seen.append(e.path),
    )
    assert [e.path for e in entries] == ["x/bytes", "x/stream", "x/local.csv"]
    assert sorted(seen) == ["x/bytes", "x/local.csv", "x/stream"]
    assert repo.get("main", "x/local.csv") == b"a,b\n1,2\n"
    assert repo.stat("main", "x/stream").metadata == {"batch": "1"}
    assert repo.stat("main", "x/local.csv").content_type == "text/csv"
    assert [d.path for d in repo.diff_uncommitted("main")] == ["x/bytes", "x/local.csv", "x/stream"]
    assert len(_objects(repo)) == 3


def test_many_objects_and_a_path_given_twice(repo: Repository):
    items = [(f"d/{i:04d}", f"v{i}".encode()) for i in range(300)] + [("d/0007", b"later")]
    repo.upload_many("main", iter(items), workers=8)
    commit = repo.commit("main", "bulk")
    assert repo.get(commit.id, "d/0007") == b"later"
    assert repo.get(commit.id, "d/0299") == b"v299"
    assert len(list(repo.iter_objects("main", "d/"))) == 300


class _Broken(io.RawIOBase):
    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        raise OSError("the disk went away")


def test_a_failed_read_stages_nothing_and_keeps_no_bytes(repo: Repository):
    items = [(f"ok/{i}", b"fine") for i in range(20)] + [("bad", _Broken())]
    with pytest.raises(OSError, match="went away"):
        repo.upload_many("main", items, workers=4)
    assert list(repo.diff_uncommitted("main")) == []
    assert _objects(repo) == []


def test_bad_input_is_refused_with_typed_errors(repo: Repository):
    with pytest.raises(InvalidKey):
        repo.upload_many("main", [("ok", b"x"), ("", b"y")])
    with pytest.raises(InvalidArgument, match="source"):
        repo.upload_many("main", [("k", "text is not bytes")])  # type: ignore[list-item]
    with pytest.raises(InvalidArgument, match="workers"):
        repo.upload_many("main", [("k", b"x")], workers=0)
    repo.protect_branch("main")
    with pytest.raises(ProtectedBranch):
        repo.upload_many("main", [("k", b"x")])
    assert list(repo.diff_uncommitted("main")) == []
    assert _objects(repo) == []


def test_a_failed_flush_stages_nothing_and_keeps_no_bytes(repo: Repository, monkeypatch):
    """The staging transaction commits only after the store's flush returned; a flush that
    fails rolls it back and the written objects are deleted."""
    from graveler.core.errors import StorageError

    calls: list[int] = []

    def failing_sync(keys):  # type: ignore[no-untyped-def]
        calls.append(len(list(keys)))
        raise StorageError("the disk reported a write error")

    monkeypatch.setattr(repo.store, "sync", failing_sync)
    items = [(f"big/{i:03d}", b"payload") for i in range(100)]
    with pytest.raises(StorageError, match="write error"):
        repo.upload_many("main", items)
    assert calls == [100]
    assert list(repo.diff_uncommitted("main")) == []
    assert _objects(repo) == []


def test_large_local_sources_stream_beside_the_small_batch(
    repo: Repository, tmp_path: Path, monkeypatch
):
    """Sources above SMALL_FILE are streamed through a writer; the rest of the batch goes
    through the store's put_fresh_batch; the entries keep the input order."""
    from graveler.versioning import bulk_writes as uploads

    monkeypatch.setattr(uploads, "SMALL_FILE", 10)
    big, small = tmp_path / "big.bin", tmp_path / "small.txt"
    big.write_bytes(b"b" * 100)
    small.write_bytes(b"tiny")
    entries = repo.upload_many("main", [("b", big), ("s", small), ("m", b"mem" * 50)])
    assert [(e.path, e.size) for e in entries] == [("b", 100), ("s", 4), ("m", 150)]
    assert repo.get("main", "b") == b"b" * 100
    assert repo.get("main", "s") == b"tiny"
    assert repo.stat("main", "s").checksum == hashlib.sha256(b"tiny").hexdigest()
