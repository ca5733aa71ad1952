"""Import of existing data by reference: an explicit external-address entry kind, lakeFS's
import semantics, reads that verify, GC that never deletes, fsck that checks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graveler import Graveler, HookRegistry
from graveler.core.errors import (
    CorruptFile,
    DirtyBranch,
    HookAborted,
    InvalidArgument,
    InvalidURI,
    NoChanges,
    ProtectedBranch,
)
from graveler.maintenance.fsck import ProblemKind, fsck
from graveler.maintenance.gc import RetentionRules, collect_garbage
from graveler.storage.entry import decode, physical_address_of

FILES = [f"{d}prefix-{p}/file{n:06d}" for d in ("", "nested/") for p in (1, 2) for n in (1, 2, 3)]


@pytest.fixture
def source(tmp_path) -> Path:
    """A small version of lakeFS esti's local import data: prefix-N/fileNNNNNN and nested/."""
    root = tmp_path / "import-test-data"
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(name.encode())
    return root


def test_import(repo, source):
    # Ported from lakeFS esti/import_test.go TestImport (local block adapter).
    repo.create_branch("ingestion", "main")
    before = repo.branch("ingestion").commit_id
    result = repo.import_data(
        "ingestion",
        source.as_uri(),
        "imported/new-prefix/",
        message="created by import",
        metadata={"created_by": "import"},
    )
    c = result.commit
    assert result.objects == len(FILES) and c.parents == (before,)
    assert repo.branch("ingestion").commit_id == c.id and c.message == "created by import"
    assert c.metadata == {
        "created_by": "import",
        ".lakefs.merge.strategy": "source-wins",
        ".graveler.import.source": source.resolve().as_uri(),
    }
    listed = [e.path for e in repo.iter_objects("ingestion")]
    assert listed == sorted(f"imported/new-prefix/{f}" for f in FILES)  # order, prefix
    for name in FILES:
        path = f"imported/new-prefix/{name}"
        assert repo.get("ingestion", path) == name.encode()
        entry = repo.stat("ingestion", path)
        assert entry.external and entry.physical_address == (source / name).as_uri()
        assert repo.physical_uri(entry) == (source / name).as_uri()
        with repo.open("ingestion", path) as fh:
            assert fh.read() == name.encode()
    assert sorted(str(p.relative_to(source)) for p in source.rglob("*") if p.is_file()) == sorted(
        FILES
    )  # the source is intact
    assert list(Path(repo.info.storage_namespace[7:]).rglob("data/*")) == []


def test_import_replaces_the_destination_prefix(repo, source):
    # lakeFS: "Any previously existing objects under the destination prefix will be deleted".
    repo.put("main", "dest/old", b"old")
    repo.put("main", "dest/prefix-1/file000001", b"to be replaced")
    repo.put("main", "other/keep", b"keep")
    repo.commit("main", "before")
    repo.import_data("main", source.as_uri(), "dest")
    paths = {e.path for e in repo.iter_objects("main")}
    assert "dest/old" not in paths and "other/keep" in paths
    assert repo.get("main", "dest/prefix-1/file000001") == b"prefix-1/file000001"
    with pytest.raises(NoChanges):  # the same data again
        repo.import_data("main", source.as_uri(), "dest/")


def test_import_from_a_storage_namespace_is_refused(gv, repo, tmp_path, source):
    # Ported from lakeFS esti/import_test.go TestImportToStorageNamespace (the prefix cases;
    # lakeFS's single-object import type has no counterpart here). Every repository's
    # namespace counts, not only the importing one's.
    ns = Path(repo.info.storage_namespace[len("file://") :])
    (ns / "some_path/in/namespace").mkdir(parents=True)
    other = gv.create_repository("other", (tmp_path / "elsewhere" / "ns").as_uri())
    (tmp_path / "elsewhere" / "ns").mkdir(parents=True, exist_ok=True)
    head = repo.branch("main").commit_id
    for bad in [
        repo.info.storage_namespace,  # exact namespace
        (ns / "some_path/in/namespace").as_uri(),  # path in namespace
        ns.parent.as_uri(),  # path is a prefix of namespace
        (tmp_path / "elsewhere").as_uri(),  # holds another repository's namespace
    ]:
        with pytest.raises(InvalidArgument, match="invalid import source"):
            repo.import_data("main", bad)
    assert repo.branch("main").commit_id == head and other.list_branches()
    repo.import_data("main", source.as_uri(), "ok/")  # a sibling of the namespace is fine


def test_import_preconditions(make_repo, source):
    hooks = HookRegistry()
    calls = []

    def refuse(ctx):
        calls.append(ctx)
        raise ValueError("no imports today")

    hooks.add("pre-commit", refuse)
    repo = make_repo(hooks)
    head = repo.branch("main").commit_id
    with pytest.raises(HookAborted):  # lakeFS runs pre-commit hooks on import
        repo.import_data("main", source.as_uri(), "x/")
    assert repo.branch("main").commit_id == head and list(repo.iter_objects("main")) == []
    assert calls[0].commit.metadata[".lakefs.merge.strategy"] == "source-wins"
    plain = make_repo()
    plain.put("main", "dirty", b"1")
    with pytest.raises(DirtyBranch):
        plain.import_data("main", source.as_uri())
    plain.reset("main")
    plain.protect_branch("main")
    with pytest.raises(ProtectedBranch):
        plain.import_data("main", source.as_uri())
    for bad in [
        "",
        "relative/dir",
        "http://host/x",
        "mem://x",
        (source / "prefix-1/file000001").as_uri(),
    ]:
        with pytest.raises(InvalidURI):
            plain.import_data("main", bad)


def test_external_entries_are_their_own_kind(repo, source):
    entry = repo.import_data("main", source.as_uri(), "in/").commit
    e = repo.stat("main", "in/prefix-1/file000001")
    value = e.encode()
    assert value[0] == 2 and decode(e.key, value) == e  # layout 2: external address
    assert physical_address_of(e.key, value) == e.physical_address
    assert repo.stat("main", "in/prefix-1/file000001").external and entry.id
    # only import creates them: staging and the bulk commit path refuse them
    with pytest.raises(InvalidArgument, match="external"):
        repo.stage_entries("main", [e])
    with pytest.raises(InvalidArgument, match="external"):
        repo.import_entries("main", iter([e]), "sneak")
    with pytest.raises(InvalidArgument):  # link stays inside the namespace
        repo.link("main", "x", (source / "prefix-1/file000001").as_uri())
    # copies of external entries travel through branches, merges and cherry-picks unchanged
    repo.create_branch("dev", "main")
    assert repo.stat("dev", "in/prefix-1/file000001") == e


def test_reads_verify_imported_objects(repo, source):
    repo.import_data("main", source.as_uri(), "in/")
    (source / "prefix-1/file000001").write_bytes(b"prefix-1/file00000X")  # same size
    with pytest.raises(CorruptFile):
        repo.get("main", "in/prefix-1/file000001")


def test_gc_never_deletes_imported_objects(repo, source):
    repo.import_data("main", source.as_uri(), "in/")
    repo.reset_hard("main", "main~1")  # nothing references the import any more
    later = datetime.now(UTC) + timedelta(days=400)
    report = collect_garbage(repo, RetentionRules(default_days=0), grace=timedelta(0), now=later)
    assert all(not o.key.startswith(("/", "file:")) for o in report.selected)
    assert sorted(str(p.relative_to(source)) for p in source.rglob("*") if p.is_file()) == sorted(
        FILES
    )


def test_fsck_checks_imported_objects(repo, source):
    repo.import_data("main", source.as_uri(), "in/")
    report = fsck(repo, verify_objects=True)
    assert report.clean and report.objects == len(FILES)
    assert report.dangling_objects == []
    (source / "prefix-1/file000002").unlink()
    (source / "prefix-2/file000001").write_bytes(b"longer than it was")
    (source / "prefix-2/file000002").write_bytes(b"prefix-2/file00000X")
    found = {(p.kind, p.subject) for p in fsck(repo, verify_objects=True).problems}
    assert found == {
        (ProblemKind.MISSING_OBJECT, (source / "prefix-1/file000002").as_uri()),
        (ProblemKind.OBJECT_SIZE, (source / "prefix-2/file000001").as_uri()),
        (ProblemKind.OBJECT_CHECKSUM, (source / "prefix-2/file000002").as_uri()),
    }
    assert {p.kind for p in fsck(repo).problems} == {
        ProblemKind.MISSING_OBJECT,
        ProblemKind.OBJECT_SIZE,
    }


def test_import_from_s3(tmp_path, s3_client, s3_bucket, moto_endpoint):
    for name in FILES[:4]:
        s3_client.put_object(Bucket=s3_bucket, Key=f"raw/{name}", Body=name.encode())
    s3_client.put_object(Bucket=s3_bucket, Key="rawish/not-me", Body=b"x")
    with Graveler(home=tmp_path / "h", store_options={"endpoint_url": moto_endpoint}) as gv:
        repo = gv.create_repository("lake", f"s3://{s3_bucket}/lakes/lake")
        for spelling in ("lakes", "lakes//lake/x", "lakes/lake%2Fx"):  # namespaces' own spellings
            with pytest.raises(InvalidArgument, match="invalid import source"):
                repo.import_data("main", f"s3://{s3_bucket}/{spelling}")
        result = repo.import_data("main", f"s3://{s3_bucket}/raw", "in/")
        assert result.objects == 4
        e = repo.stat("main", f"in/{FILES[0]}")
        assert e.physical_address == f"s3://{s3_bucket}/raw/{FILES[0]}"
        assert repo.get("main", f"in/{FILES[0]}") == FILES[0].encode()
        assert fsck(repo, verify_objects=True).clean
