"""Local-directory backend: atomic writes, temp-file hygiene, confinement to the root."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from graveler.errors import InvalidArgument, InvalidKey, ObjectNotFound, StorageError
from graveler.objectstore import open_object_store
from graveler.objectstore.local import TMP_PREFIX, LocalObjectStore
from tests.objectstore.helpers import CountingReader, ReaderBroke

MiB = 1 << 20


def _all_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def store(root: Path) -> LocalObjectStore:
    return LocalObjectStore(str(root))


def test_writers_leave_no_temp_files(store: LocalObjectStore, root: Path) -> None:
    store.put("d/obj", b"old")
    writer = store.open_writer("d/obj")
    writer.write(b"new")
    assert any(name.startswith(TMP_PREFIX) for name in os.listdir(root / "d"))
    assert [i.key for i in store.list()] == ["d/obj"]  # the temporary file is not an object
    writer.abort()
    fresh = store.open_writer("d/fresh", fresh=True)
    fresh.write(b"partial")
    fresh.abort()
    assert _all_files(root) == ["d/obj"]
    with store.open_writer("d/obj") as w:
        w.write(b"newer")
    with store.open_writer("d/fresh", fresh=True) as w:
        w.write(b"in place")
    assert _all_files(root) == ["d/fresh", "d/obj"]
    assert (root / "d" / "obj").read_bytes() == b"newer"


def test_fresh_writer_refuses_an_existing_key(store: LocalObjectStore) -> None:
    store.put("d/taken", b"old")
    with pytest.raises(StorageError):
        store.open_writer("d/taken", fresh=True)
    assert store.get("d/taken") == b"old"


def test_failed_put_leaves_old_object_and_no_temp_files(store: LocalObjectStore, root: Path):
    store.put("d/obj", b"old")
    broken = CountingReader(os.urandom(8 * MiB), fail_after=3)
    with pytest.raises(ReaderBroke):
        store.put("d/obj", broken.as_binary())
    assert (root / "d" / "obj").read_bytes() == b"old"
    assert _all_files(root) == ["d/obj"]
    with pytest.raises(ReaderBroke):
        store.put("d/new", CountingReader(b"x" * (4 * MiB), fail_after=2).as_binary())
    assert _all_files(root) == ["d/obj"]


def test_stream_put_copies_in_1mib_chunks(store: LocalObjectStore) -> None:
    reader = CountingReader(os.urandom(5 * MiB + 1), max_chunk=4 * MiB)
    store.put("s", reader.as_binary())
    assert reader.sizes == [MiB] * 7  # 5 full chunks, a 1-byte chunk, then EOF


def test_open_returns_a_real_file(store: LocalObjectStore) -> None:
    store.put("f", b"abc")
    with store.open("f") as f:
        assert f.fileno() >= 0
        assert f.read() == b"abc"


def test_written_files_are_readable_and_final(store: LocalObjectStore, root: Path) -> None:
    store.put("x/y/z", b"1")
    assert os.stat(root / "x" / "y" / "z").st_mode & 0o777 == 0o644
    assert store.local_path("x/y/z") == str(root / "x" / "y" / "z")


def test_symlinked_directory_cannot_escape_the_root(
    store: LocalObjectStore, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"secret")
    root.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    for call in (
        lambda: store.put("link/x", b"evil"),
        lambda: store.get("link/secret"),
        lambda: store.stat("link/secret"),
        lambda: store.exists("link/secret"),
        lambda: store.delete("link/secret"),
        lambda: store.local_path("link/x"),
    ):
        with pytest.raises(InvalidKey, match="outside the store root"):
            call()
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]
    assert [info.key for info in store.list()] == []


def test_symlinked_file_cannot_escape_the_root(
    store: LocalObjectStore, root: Path, tmp_path: Path
) -> None:
    (tmp_path / "secret").write_bytes(b"secret")
    root.mkdir()
    (root / "leak").symlink_to(tmp_path / "secret")
    with pytest.raises(InvalidKey):
        store.get("leak")
    with pytest.raises(InvalidKey):
        store.put("leak", b"overwrite")
    assert (tmp_path / "secret").read_bytes() == b"secret"
    assert list(store.list()) == []


def test_symlinks_inside_the_root_are_followed(store: LocalObjectStore, root: Path) -> None:
    store.put("real/file", b"inside")
    (root / "alias").symlink_to(root / "real" / "file")
    assert store.get("alias") == b"inside"
    assert [info.key for info in store.list()] == ["alias", "real/file"]


def test_list_skips_temp_files_and_temp_names_are_reserved(
    store: LocalObjectStore, root: Path
) -> None:
    store.put("d/keep", b"1")
    (root / "d" / f"{TMP_PREFIX}abandoned").write_bytes(b"partial")
    assert [info.key for info in store.list()] == ["d/keep"]
    with pytest.raises(InvalidKey, match="reserved"):
        store.put(f"d/{TMP_PREFIX}x", b"1")


def test_a_key_cannot_be_both_object_and_directory(store: LocalObjectStore) -> None:
    store.put("a", b"file")
    with pytest.raises(StorageError, match="'a'"):
        store.put("a/b", b"child")
    store.put("d/e", b"child")
    with pytest.raises(StorageError):
        store.put("d", b"file over a directory")
    with pytest.raises(ObjectNotFound):
        store.get("d")
    with pytest.raises(ObjectNotFound):
        store.stat("d")
    assert not store.exists("d")
    store.delete("d")
    assert store.get("d/e") == b"child"


def test_relative_root_is_refused() -> None:
    with pytest.raises(InvalidArgument):
        LocalObjectStore("relative/dir")


def test_uri_round_trips_paths_with_special_characters(tmp_path: Path) -> None:
    store = LocalObjectStore(str(tmp_path / "with space" / "%25 and é"))
    store.put("k", b"v")
    assert store.uri.startswith("file:///")
    assert " " not in store.uri
    again = open_object_store(store.uri)
    assert isinstance(again, LocalObjectStore)
    assert again.root == store.root
    assert again.get("k") == b"v"
    plain = open_object_store(store.root)
    assert plain.get("k") == b"v"


def test_missing_root_lists_nothing(tmp_path: Path) -> None:
    store = LocalObjectStore(str(tmp_path / "not" / "yet"))
    assert list(store.list()) == []
    assert not store.exists("k")
    store.put("k", b"v")
    assert [i.key for i in store.list()] == ["k"]


def test_directory_fsyncs_of_relaxed_writers_wait_for_sync(
    store: LocalObjectStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Durable writers fsync their directory before commit returns; relaxed ones leave it to
    ``sync``, which fsyncs each directory once."""
    from graveler.objectstore import local_writer

    synced: list[str] = []
    real = local_writer.fsync_directory
    monkeypatch.setattr(local_writer, "fsync_directory", lambda p: (synced.append(p), real(p)))
    store.put("a/seed", b"")  # creates a/ (fsyncs of new directories are not counted below)
    store.put("b/seed", b"")
    synced.clear()
    with store.open_writer("a/durable", fresh=True) as w:
        w.write(b"x")
    assert synced == [str(root / "a")]
    synced.clear()
    keys = ["a/1", "a/2", "b/1"]
    for key in keys:
        with store.open_writer(key, fresh=True, durable=False) as w:
            w.write(b"x")
    assert synced == []
    store.sync(keys)
    assert sorted(synced) == [str(root / "a"), str(root / "b")]


def test_put_if_absent_writes_like_put(store: LocalObjectStore, root: Path) -> None:
    """One write path: the claimed file has the mode every object has, and neither a win nor
    a loss leaves a temporary file."""
    store.put("d/plain", b"x")
    assert store.put_if_absent("d/claimed", b"first") is True
    assert store.put_if_absent("d/claimed", b"second") is False
    assert (root / "d" / "claimed").read_bytes() == b"first"
    mode = stat.S_IMODE((root / "d" / "claimed").stat().st_mode)
    assert mode == stat.S_IMODE((root / "d" / "plain").stat().st_mode) == 0o644
    assert _all_files(root) == ["d/claimed", "d/plain"]
