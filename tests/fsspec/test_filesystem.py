"""GravelerFileSystem on SQLite and PostgreSQL: navigation, reads, streamed writes, ref
expressions, read-only refs, copies, deletes, and listings that never go stale."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
from dataclasses import replace
from datetime import UTC, datetime

import fsspec
import pytest
from graveler_fsspec import GravelerFileSystem, PathNotFound, ReadOnlyBranch, ReadOnlyRef

from graveler.core.errors import (
    CorruptFile,
    GravelerError,
    InvalidArgument,
    InvalidURI,
    NotFound,
    ProtectedBranch,
)


def data_keys(repo) -> set[str]:
    """Physical data objects in the repository's namespace (staged or not)."""
    return {info.key for info in repo.store.list("data/")}


# --- navigation ------------------------------------------------------------------------------


def test_levels_root_repository_ref_directory_file(fs, lake):
    fs.pipe("lake/main/a/b/c.txt", b"abc")
    fs.pipe("lake/main/a/top.txt", b"t")
    lake.create_branch("dev", "main")
    assert fs.ls("", detail=False) == ["lake"]
    assert fs.ls("graveler://lake", detail=False) == ["lake/dev", "lake/main"]
    assert fs.ls("lake/main", detail=False) == ["lake/main/a"]
    assert fs.ls("lake/main/a/", detail=False) == ["lake/main/a/b", "lake/main/a/top.txt"]
    assert fs.ls("lake/main/a/b/c.txt", detail=False) == ["lake/main/a/b/c.txt"]
    info = fs.info("graveler://lake/main/a/b/c.txt")
    assert (info["type"], info["size"], info["name"]) == ("file", 3, "lake/main/a/b/c.txt")
    assert info["checksum"] == hashlib.sha256(b"abc").hexdigest()
    assert info["content_type"] == "text/plain" and info["mtime"].tzinfo is not None
    assert fs.info("lake/main/a")["type"] == "directory"
    assert fs.info("lake/main")["commit_id"] == lake.resolve("main").commit.id
    assert fs.isdir("lake") and fs.isdir("lake/main/a/b") and fs.isfile("lake/main/a/top.txt")
    assert fs.exists("lake/main/a/b/c.txt") and not fs.exists("lake/main/a/b/c")


@pytest.mark.parametrize(
    "path", ["lake/main/missing", "lake/main/a/missing/x", "nope/main/x", "lake/nobranch/x"]
)
def test_missing_paths_raise_file_not_found_that_is_also_a_graveler_error(fs, lake, path):
    fs.pipe("lake/main/a/x", b"1")
    for call in (fs.info, fs.ls, fs.cat, lambda p: fs.open(p, "rb")):
        with pytest.raises(FileNotFoundError) as caught:
            call(path)
        assert isinstance(caught.value, NotFound) and isinstance(caught.value, PathNotFound)
    assert not fs.exists(path)


def test_find_and_glob(fs, lake):
    for key in ["t/x=1/a.parquet", "t/x=1/b.csv", "t/x=2/c.parquet", "t.parquet", "u/d.parquet"]:
        fs.pipe(f"lake/main/{key}", b"0")
    assert fs.find("lake/main/t") == [
        "lake/main/t/x=1/a.parquet", "lake/main/t/x=1/b.csv", "lake/main/t/x=2/c.parquet",
    ]  # fmt: skip
    assert fs.find("lake/main/t", withdirs=True) == [
        "lake/main/t", "lake/main/t/x=1", "lake/main/t/x=1/a.parquet", "lake/main/t/x=1/b.csv",
        "lake/main/t/x=2", "lake/main/t/x=2/c.parquet",
    ]  # fmt: skip
    assert fs.find("lake/main/t", maxdepth=1, withdirs=True) == [
        "lake/main/t",
        "lake/main/t/x=1",
        "lake/main/t/x=2",
    ]
    assert fs.find("lake/main/t.parquet") == ["lake/main/t.parquet"]
    assert fs.glob("graveler://lake/main/t/*/*.parquet") == [
        "lake/main/t/x=1/a.parquet", "lake/main/t/x=2/c.parquet",
    ]  # fmt: skip
    assert fs.glob("lake/main/**/*.parquet") == [
        "lake/main/t.parquet", "lake/main/t/x=1/a.parquet", "lake/main/t/x=2/c.parquet",
        "lake/main/u/d.parquet",
    ]  # fmt: skip
    assert len(fs.find("lake")) == 5  # a repository walks its branches


# --- reading ---------------------------------------------------------------------------------


class CountingStore:
    """Delegates to the repository's real store and records how bytes are fetched."""

    def __init__(self, inner):
        self.inner = inner
        self.ranges: list[tuple[int, int]] = []
        self.whole_reads = 0
        self.stats = 0

    def read_range(self, key, offset, length):
        self.ranges.append((offset, length))
        return self.inner.read_range(key, offset, length)

    def get(self, key):
        self.whole_reads += 1
        return self.inner.get(key)

    def open(self, key):
        self.whole_reads += 1
        return self.inner.open(key)

    def stat(self, key):
        self.stats += 1
        return self.inner.stat(key)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def use_store(repo, store):
    """Route ``repo``'s object reads and writes through ``store``."""
    repo.parts = dataclasses.replace(repo.parts, store=store)


def test_open_rb_reads_ranges_and_seeks(fs, lake):
    data = bytes(range(256)) * 4096 * 4  # 4 MiB
    lake.put("main", "big.bin", data)
    counting = CountingStore(lake.store)
    use_store(fs.repository("lake"), counting)
    with fs.open("lake/main/big.bin", "rb", block_size=64 << 10, cache_type="none") as f:
        assert f.size == len(data) and f.info()["checksum"] == hashlib.sha256(data).hexdigest()
        f.seek(3_000_000)
        assert f.read(100) == data[3_000_000:3_000_100]
        f.seek(-10, 2)
        assert f.read() == data[-10:]
        f.seek(5)
        assert f.readline() == data[5 : data.index(b"\n", 5) + 1]
    assert counting.whole_reads == 0
    assert sum(length for _, length in counting.ranges) < len(data) // 10
    assert fs.cat_file("lake/main/big.bin", 10, 20) == data[10:20]
    assert fs.cat_file("lake/main/big.bin", -5) == data[-5:]
    assert fs.cat_file("lake/main/big.bin", 4, -4) == data[4:-4]


def test_a_whole_read_of_damaged_bytes_is_refused(fs, lake):
    entry = lake.put("main", "data.bin", b"the recorded bytes")
    lake.store.put(entry.physical_address, b"the damaged bytes!")  # same size, other content
    with pytest.raises(CorruptFile):
        fs.cat_file("lake/main/data.bin")


def test_a_reader_keeps_the_bytes_it_opened(fs, lake):
    fs.pipe("lake/main/x", b"old bytes")
    with fs.open("lake/main/x", "rb") as f:
        fs.pipe("lake/main/x", b"new bytes!")
        assert f.read() == b"old bytes"
    assert fs.cat("lake/main/x") == b"new bytes!"


def test_ref_expressions_tags_and_commit_ids_read(fs, lake):
    fs.pipe("lake/main/x.txt", b"v1")
    first = lake.commit("main", "one")
    lake.create_tag("v1", "main")
    fs.pipe("lake/main/x.txt", b"v2")
    fs.pipe("lake/main/y.txt", b"new")
    lake.commit("main", "two")
    assert fs.cat("lake/main/x.txt") == b"v2"
    for ref in ["main~1", "main^", "v1", first.id, first.id[:10], "v1~0"]:
        assert fs.cat(f"graveler://lake/{ref}/x.txt") == b"v1", ref
        assert fs.ls(f"lake/{ref}", detail=False) == [f"lake/{ref}/x.txt"], ref
    assert not fs.exists("lake/v1/y.txt")


# --- writing ---------------------------------------------------------------------------------


def test_open_wb_streams_blocks_and_stages_on_close(fs, lake):
    block = 256 << 10
    parts = [bytes([i]) * (block // 2 + 7) for i in range(9)]  # several blocks, odd sizes
    with fs.open("lake/main/s.bin", "wb", block_size=block, metadata={"k": "v"}) as f:
        for part in parts:
            f.write(part)
        assert not fs.exists("lake/main/s.bin")  # nothing visible before close
    body = b"".join(parts)
    entry = lake.stat("main", "s.bin")
    assert entry.size == len(body) and entry.checksum == hashlib.sha256(body).hexdigest()
    assert entry.mtime == datetime.fromtimestamp(
        os.stat(lake.store.local_path(entry.physical_address)).st_mtime, UTC
    )
    assert entry.metadata == {"k": "v"} and lake.get("main", "s.bin") == body
    assert [d.path for d in lake.diff_uncommitted("main")] == ["s.bin"]


def test_writes_describe_their_object_without_asking_the_store_again(fs, lake):
    counting = CountingStore(lake.store)
    use_store(fs.repository("lake"), counting)
    fs.pipe("lake/main/small", b"x" * 10)  # stored whole on close
    with fs.open("lake/main/big", "wb", block_size=64 << 10) as f:  # streamed in blocks
        f.write(b"y" * (300 << 10))
    assert counting.stats == 0  # an S3 HEAD per write before
    assert lake.get("main", "small") == b"x" * 10 and len(lake.get("main", "big")) == 300 << 10


def test_a_failing_with_block_discards_the_upload(fs, lake):
    before = data_keys(lake)
    target = "lake/main/partial.bin"
    with pytest.raises(RuntimeError, match="boom"), fs.open(target, "wb", block_size=64 << 10) as f:
        for _ in range(10):
            f.write(b"z" * (50 << 10))
        raise RuntimeError("boom")
    assert not fs.exists("lake/main/partial.bin")
    assert list(lake.diff_uncommitted("main")) == []
    assert data_keys(lake) == before  # the streamed bytes were removed too


def test_put_get_cp_mv_rm(fs, lake, tmp_path):
    src = tmp_path / "local.csv"
    src.write_bytes(b"a,b\n1,2\n")
    fs.put(str(src), "lake/main/in/local.csv")
    fs.get("lake/main/in/local.csv", str(tmp_path / "back.csv"))
    assert (tmp_path / "back.csv").read_bytes() == b"a,b\n1,2\n"
    fs.cp("lake/main/in/local.csv", "lake/main/copy/c.csv")
    copied, original = lake.stat("main", "copy/c.csv"), lake.stat("main", "in/local.csv")
    assert copied.physical_address == original.physical_address  # metadata-only copy
    assert copied.content_type == "text/csv"
    fs.mv("lake/main/copy/c.csv", "lake/main/moved.csv")
    assert fs.cat("lake/main/moved.csv") == b"a,b\n1,2\n" and not fs.exists("lake/main/copy")
    fs.pipe({"lake/main/d/1": b"1", "lake/main/d/2/3": b"3"})
    fs.rm("lake/main/d", recursive=True)
    assert not fs.exists("lake/main/d") and fs.ls("lake/main", detail=False) == [
        "lake/main/in",
        "lake/main/moved.csv",
    ]
    with pytest.raises(FileNotFoundError):
        fs.rm("lake/main/never-there")


def test_put_of_a_directory_is_one_staging_per_branch(fs, lake, tmp_path, monkeypatch):
    src = tmp_path / "tree"
    (src / "sub" / "deeper").mkdir(parents=True)
    for rel in ("a.csv", "sub/b.txt", "sub/deeper/c.json"):
        (src / rel).write_text(rel)
    stagings: list[int] = []
    staging = type(lake.staging)
    real = staging.stage

    def counting(self, repo, branch, entries, **kw):  # type: ignore[no-untyped-def]
        stagings.append(1)
        return real(self, repo, branch, entries, **kw)

    monkeypatch.setattr(staging, "stage", counting)
    fs.put(str(src), "lake/main/up", recursive=True, metadata={"by": "put"})
    assert stagings == [1]
    assert sorted(fs.find("lake/main/up")) == [
        "lake/main/up/a.csv",
        "lake/main/up/sub/b.txt",
        "lake/main/up/sub/deeper/c.json",
    ]
    assert fs.cat("lake/main/up/sub/deeper/c.json") == b"sub/deeper/c.json"
    assert lake.stat("main", "up/a.csv").metadata == {"by": "put"}
    lake.create_branch("dev", "main")
    lake.protect_branch("main")
    with pytest.raises(ReadOnlyBranch):
        fs.put([str(src / "a.csv"), str(src / "sub/b.txt")], ["lake/dev/x", "lake/main/y"])
    assert not fs.exists("lake/dev/x")  # every target is checked before a byte is written


def test_copy_between_repositories_copies_bytes(fs, gv, lake, tmp_path):
    other = gv.create_repository("other", (tmp_path / "other-ns").as_uri())
    fs.pipe("lake/main/x.json", b'{"a": 1}')
    fs.cp("lake/main/x.json", "other/main/y.json")
    assert other.get("main", "y.json") == b'{"a": 1}'
    assert other.stat("main", "y.json").content_type == "application/json"


@pytest.mark.parametrize("ref", ["v1", "main~1", "COMMIT"])
def test_tags_commits_and_expressions_are_read_only(fs, lake, ref, tmp_path):
    fs.pipe("lake/main/x", b"1")
    lake.commit("main", "one")
    lake.create_tag("v1", "main")
    fs.pipe("lake/main/y", b"2")
    lake.commit("main", "two")
    ref = lake.resolve("v1").commit.id if ref == "COMMIT" else ref
    local = tmp_path / "f"
    local.write_bytes(b"data")
    writes = [
        lambda: fs.open(f"lake/{ref}/new", "wb"),
        lambda: fs.pipe(f"lake/{ref}/new", b"d"),
        lambda: fs.put(str(local), f"lake/{ref}/new"),
        lambda: fs.rm(f"lake/{ref}/x"),
        lambda: fs.cp("lake/main/x", f"lake/{ref}/copy"),
        lambda: fs.touch(f"lake/{ref}/t"),
        lambda: fs.mkdir(f"lake/{ref}/dir"),
    ]
    before = data_keys(lake)
    for write in writes:
        with pytest.raises(ReadOnlyRef, match="read-only") as caught:
            write()
        assert isinstance(caught.value, PermissionError)
        assert isinstance(caught.value, InvalidArgument)
    assert fs.cat(f"lake/{ref}/x") == b"1"
    assert list(lake.diff_uncommitted("main")) == [] and data_keys(lake) == before


def test_protected_branch_refuses_writes(fs, lake):
    lake.protect_branch("main")
    with pytest.raises(ReadOnlyBranch) as caught:
        fs.pipe("lake/main/x", b"1")
    assert isinstance(caught.value, PermissionError) and isinstance(caught.value, ProtectedBranch)


@pytest.mark.parametrize("mode", ["ab", "r+b"])
def test_unsupported_modes_and_paths_are_typed_errors(fs, lake, mode):
    fs.pipe("lake/main/x", b"1")
    with pytest.raises(GravelerError):
        fs.open("lake/main/x", mode)
    with pytest.raises(InvalidURI):
        fs.open("lake/main", "wb")
    with pytest.raises(InvalidURI):
        fs.cat_file("lake")


# --- freshness -------------------------------------------------------------------------------


def test_listings_are_never_stale_across_branches_or_commits(fs, lake):
    fs.pipe("lake/main/t/a", b"a")
    lake.commit("main", "a")
    lake.create_branch("dev", "main")
    assert fs.ls("lake/dev/t", detail=False) == ["lake/dev/t/a"]
    fs.pipe("lake/dev/t/b", b"b")
    assert fs.ls("lake/dev/t", detail=False) == ["lake/dev/t/a", "lake/dev/t/b"]
    assert fs.ls("lake/main/t", detail=False) == ["lake/main/t/a"]
    lake.commit("dev", "b")
    assert fs.ls("lake/dev~1/t", detail=False) == ["lake/dev~1/t/a"]
    assert fs.find("lake/dev/t") == ["lake/dev/t/a", "lake/dev/t/b"]
    lake.merge("dev", "main")
    assert fs.ls("lake/main/t", detail=False) == ["lake/main/t/a", "lake/main/t/b"]
    fs.rm("lake/main/t/a")
    assert fs.ls("lake/main/t", detail=False) == ["lake/main/t/b"]
    lake.delete_branch("dev")
    assert fs.ls("lake", detail=False) == ["lake/main"] and not fs.exists("lake/dev/t/b")


def test_listing_pages_through_many_entries(fs, lake):
    one = lake.put("main", "many/00000", b"x")
    lake.stage_entries("main", [replace(one, path=f"many/{i:05d}") for i in range(2_345)])
    names = fs.ls("lake/main/many", detail=False)
    assert len(names) == 2_345 and names == sorted(names)


# --- configuration ---------------------------------------------------------------------------


def test_configuration_by_storage_options_and_pickling(tmp_path):
    home = str(tmp_path / "gvhome")
    url = f"sqlite:///{tmp_path}/cfg.db"
    fs = fsspec.filesystem("graveler", home=home, database_url=url)
    fs.client.create_repository("cfg")
    with fsspec.open("graveler://cfg/main/x.txt", "wb", home=home, database_url=url) as f:
        f.write(b"hello")
    again = pickle.loads(pickle.dumps(fs))
    assert again.cat("cfg/main/x.txt") == b"hello" and again.client is fs.client
    explicit = GravelerFileSystem(client=fs.client, skip_instance_cache=True)
    revived = pickle.loads(pickle.dumps(explicit))
    assert revived.cat("cfg/main/x.txt") == b"hello"


def test_environment_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAVELER_HOME", str(tmp_path / "envhome"))
    monkeypatch.setenv("GRAVELER_DATABASE_URL", f"sqlite:///{tmp_path}/env.db")
    fs = GravelerFileSystem(skip_instance_cache=True)
    fs.client.create_repository("envrepo")
    assert fs.client.database_url == f"sqlite:///{tmp_path}/env.db"
    assert fs.client.home == tmp_path / "envhome"
    fs.pipe("envrepo/main/k", b"v")
    assert fs.cat("graveler://envrepo/main/k") == b"v"
