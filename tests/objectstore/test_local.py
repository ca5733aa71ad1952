"""Local-directory backend: atomic writes, temp-file hygiene, confinement to the root."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from graveler.core.errors import InvalidArgument, InvalidKey, ObjectNotFound, StorageError
from graveler.storage.objectstore import open_object_store
from graveler.storage.objectstore.local import TMP_PREFIX, LocalObjectStore
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


@pytest.fixture
def flushes(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Records every fsync of a directory, of a file by path, and every syncfs."""
    from graveler.storage.objectstore import local, local_writer

    seen: dict[str, list[str]] = {"dirs": [], "files": [], "syncfs": []}
    real_dir, real_file = local_writer.fsync_directory, local_writer._fsync_file

    def fsync_directory(path: str) -> None:
        seen["dirs"].append(path)
        real_dir(path)

    monkeypatch.setattr(local_writer, "fsync_directory", fsync_directory)
    monkeypatch.setattr(local, "fsync_directory", fsync_directory)
    monkeypatch.setattr(
        local_writer, "_fsync_file", lambda p: (seen["files"].append(p), real_file(p))
    )
    monkeypatch.setattr(local_writer, "syncfs", lambda p: (seen["syncfs"].append(p), True)[1])
    return seen


@pytest.mark.parametrize("covered", [False, True], ids=["posix", "entry-with-file"])
def test_a_durable_fresh_writer_fsyncs_its_directory_unless_the_filesystem_covers_it(
    store: LocalObjectStore,
    root: Path,
    flushes: dict[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    covered: bool,
) -> None:
    """POSIX: file and directory. On ext4 / XFS / btrfs the file's fsync commits a new
    file's entry (graveler.storage.objectstore.durability), so the directory is not fsynced again;
    a replacing writer (rename) always fsyncs the directory."""
    from graveler.storage.objectstore import local_writer

    monkeypatch.setattr(local_writer, "fsync_covers_new_entry", lambda dev: covered)
    store.put("a/seed", b"")  # creates a/ (fsyncs of new directories are not counted below)
    flushes["dirs"].clear()
    with store.open_writer("a/durable", fresh=True) as w:
        w.write(b"x")
    assert flushes["dirs"] == ([] if covered else [str(root / "a")])
    flushes["dirs"].clear()
    store.put("a/seed", b"replaced")
    assert flushes["dirs"] == [str(root / "a")]


@pytest.mark.parametrize("covered", [False, True])
def test_a_small_relaxed_batch_is_flushed_file_by_file_at_sync(
    store: LocalObjectStore,
    root: Path,
    flushes: dict[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    covered: bool,
) -> None:
    """Relaxed writers flush nothing; ``sync`` of a few keys fsyncs each file, the parents
    of the directories created for them, and each directory holding them unless the
    filesystem commits a new file's entry with its fsync."""
    from graveler.storage.objectstore import local

    monkeypatch.setattr(local, "fsync_covers_new_entry", lambda dev: covered)
    keys = ["a/1", "a/2", "b/1"]
    root.mkdir()
    for key in keys:
        with store.open_writer(key, fresh=True, durable=False) as w:
            w.write(b"x")
    assert flushes == {"dirs": [], "files": [], "syncfs": []}
    store.sync(keys)
    assert sorted(flushes["files"]) == [str(root / k) for k in keys]
    holding = [] if covered else [str(root / "a"), str(root / "b")]
    assert sorted(flushes["dirs"]) == [str(root), *holding]
    assert flushes["syncfs"] == []
    flushes["dirs"].clear()
    store.sync(keys[:1])  # the new directories' entries were flushed once: not again
    assert flushes["dirs"] == [str(root / "a")]


def test_a_large_relaxed_batch_is_flushed_with_one_syncfs(
    store: LocalObjectStore, root: Path, flushes: dict[str, list[str]]
) -> None:
    from graveler.storage.objectstore.local_writer import SYNCFS_MIN_FILES

    keys = [f"data/{i % 4:02x}/{i}" for i in range(SYNCFS_MIN_FILES)]
    store.put_fresh_batch([(k, k.encode()) for k in keys])
    store.sync(keys)
    assert flushes == {"dirs": [], "files": [], "syncfs": [store.root]}


def test_without_syncfs_a_large_batch_is_flushed_file_by_file(
    store: LocalObjectStore, root: Path, flushes: dict[str, list[str]], monkeypatch
) -> None:
    from graveler.storage.objectstore import local, local_writer

    monkeypatch.setattr(local_writer, "syncfs", lambda p: False)  # not Linux
    monkeypatch.setattr(local, "fsync_covers_new_entry", lambda dev: False)  # nor ext4
    keys = [f"data/{i % 4:02x}/{i}" for i in range(40)]
    store.put_fresh_batch([(k, b"x") for k in keys])
    store.sync(keys)
    assert len(flushes["files"]) == 40
    assert set(flushes["dirs"]) >= {str(root / "data" / f"{i:02x}") for i in range(4)}


def test_a_durable_write_flushes_directories_a_relaxed_one_created(
    store: LocalObjectStore, root: Path, flushes: dict[str, list[str]]
) -> None:
    """A directory made for a relaxed writer has its entry left unflushed; the next durable
    object needs it on disk too, so its writer flushes it first."""
    root.mkdir()
    with store.open_writer("new/dir/relaxed", fresh=True, durable=False) as w:
        w.write(b"x")
    assert flushes["dirs"] == []
    store.put("new/dir/durable", b"y")
    assert {str(root), str(root / "new")} <= set(flushes["dirs"])


def test_put_fresh_batch_writes_all_or_nothing(store: LocalObjectStore, root: Path) -> None:
    infos = store.put_fresh_batch([("data/aa/1", b"one"), ("data/bb/2", b"two")])
    assert [(i.key, i.size) for i in infos] == [("data/aa/1", 3), ("data/bb/2", 3)]
    assert store.get("data/bb/2") == b"two"
    with pytest.raises(StorageError):  # an existing key is never overwritten
        store.put_fresh_batch([("data/cc/3", b"three"), ("data/aa/1", b"clobber")])
    assert store.get("data/aa/1") == b"one"
    assert not store.exists("data/cc/3")  # what the failed call created is gone
    with pytest.raises(InvalidKey):
        store.put_fresh_batch([("data/dd/4", b"4"), ("../escape", b"x")])
    assert not store.exists("data/dd/4")
    os.rmdir(root / "data" / "cc")  # a directory removed behind the store's back
    store.put_fresh_batch([("data/cc/5", b"five")])
    assert store.get("data/cc/5") == b"five"


def test_put_fresh_batch_refuses_a_symlinked_directory(
    store: LocalObjectStore, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "data").mkdir(parents=True)
    (root / "data" / "ee").symlink_to(outside)
    with pytest.raises(InvalidKey, match="outside"):
        store.put_fresh_batch([("data/ee/x", b"x")])
    assert list(outside.iterdir()) == []


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


def test_a_directory_swapped_for_a_link_after_a_write_is_refused(
    store: LocalObjectStore, root: Path, tmp_path: Path
) -> None:
    """The check of a fresh key's directory is remembered by the directory's identity, so
    replacing it with a symbolic link later is still caught."""
    store.put_fresh_batch([("data/ab/1", b"x")])
    with store.open_writer("data/ab/2", fresh=True) as w:
        w.write(b"y")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.rename(root / "data" / "ab", tmp_path / "moved")
    (root / "data" / "ab").symlink_to(outside)
    with pytest.raises(InvalidKey, match="outside"):
        store.put_fresh_batch([("data/ab/3", b"z")])
    with pytest.raises(InvalidKey, match="outside"):
        store.open_writer("data/ab/4", fresh=True)
    assert list(outside.iterdir()) == []


def test_a_directory_swapped_for_a_link_after_a_read_is_refused(
    store: LocalObjectStore, root: Path, tmp_path: Path
) -> None:
    """Reads remember a checked directory by its identity too: a directory replaced by a
    symbolic link to the outside after a read is resolved again, and refused."""
    store.put("data/cd/1", b"inside")
    assert store.get("data/cd/1") == b"inside"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "1").write_bytes(b"outside")
    os.rename(root / "data" / "cd", tmp_path / "moved")
    (root / "data" / "cd").symlink_to(outside)
    for call in (lambda: store.get("data/cd/1"), lambda: store.stat("data/cd/1")):
        with pytest.raises(InvalidKey, match="outside"):
            call()


@pytest.mark.parametrize("covered", [False, True])
def test_sync_flushes_only_what_is_not_flushed_yet(
    store: LocalObjectStore,
    root: Path,
    flushes: dict[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    covered: bool,
) -> None:
    """A replacing relaxed writer (temp file, rename) fsyncs its file before the rename, so
    ``sync`` only flushes its directory; a fresh relaxed one is flushed at ``sync`` (its
    directory too, unless the file's fsync commits its entry); a key synced (or deleted)
    is not flushed again."""
    from graveler.storage.objectstore import local

    monkeypatch.setattr(local, "fsync_covers_new_entry", lambda dev: covered)
    root.mkdir()
    store.put("t/seed", b"")
    store.put("n/seed", b"")
    flushes["dirs"].clear()
    with store.open_writer("t/tree-file", durable=False) as w:
        w.write(b"sst")
    with store.open_writer("n/new", fresh=True, durable=False) as w:
        w.write(b"x")
    store.sync(["t/tree-file", "n/new"])
    assert flushes["files"] == [str(root / "n" / "new")]
    fresh_dir = [] if covered else [str(root / "n")]
    assert sorted(flushes["dirs"]) == [*fresh_dir, str(root / "t")]
    flushes["files"].clear()
    store.sync(["n/new"])
    assert flushes["files"] == []


def test_an_aborted_fresh_writer_leaves_a_file_that_took_its_name(
    store: LocalObjectStore, root: Path
) -> None:
    """A fresh writer removes its file when it fails, but not a file that replaced it under
    the same name meanwhile (a tree file another writer stored whole)."""
    writer = store.open_writer("_graveler/tree", fresh=True, durable=False)
    writer.write(b"partial")
    store.put("_graveler/tree", b"the complete copy")
    with pytest.raises(RuntimeError), writer:
        raise RuntimeError("the first writer fails")
    assert store.get("_graveler/tree") == b"the complete copy"
    with pytest.raises(RuntimeError), store.open_writer("alone", fresh=True) as w:
        w.write(b"x")
        raise RuntimeError("its own file goes")
    assert not store.exists("alone")
