"""Refs dump and restore: the database can be lost, the lake cannot. A restore recreates
commits, branches and tags identically, refuses damaged or tampered dumps without writing
anything, and the CLI drives dump, restore and fsck with the documented exit codes."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from graveler.cli import main
from graveler.client import Graveler
from graveler.core.errors import AlreadyExists, CorruptFile, InvalidArgument, NotFound
from graveler.maintenance.fsck import fsck
from graveler.maintenance.refdump import DUMP_PREFIX, dump_refs, list_dumps, restore_refs
from tests.fsck.test_fsck import build_history


def snapshot(gv: Graveler, name: str) -> dict[str, object]:
    repo = gv.repository(name)
    info = repo.info
    return {
        "info": (info.storage_namespace, info.default_branch, info.creation_date),
        "settings": info.range_settings,
        "branches": [(b.name, b.commit_id, b.protected) for b in repo.list_branches()],
        "tags": repo.list_tags(),
        "commits": sorted(repo.refs.iter_commits(name), key=lambda c: c.id),
    }


@pytest.fixture
def history(repo):
    build_history(repo)
    repo.protect_branch("main")
    repo.create_tag("v2", "dev")
    return repo


def test_restore_into_an_empty_database_is_identical(history, gv, tmp_path):
    before = snapshot(gv, "lake")
    info = dump_refs(history)
    assert (info.commits, info.branches, info.tags) == (5, 3, 2)
    assert info.uncommitted_branches == ["feature"]  # its staged work is not in a dump
    with Graveler(home=tmp_path / "new-home", database_url=f"sqlite:///{tmp_path}/new.db") as new:
        restored = restore_refs(new, "lake", history.info.storage_namespace)
        assert snapshot(new, "lake") == before
        assert restored.get("v1", "tbl/part-007.csv") == b"row 7\n"
        assert restored.get("main", "tbl/extra.csv") == b"extra\n"
        assert fsck(restored, verify_objects=True).clean
        dev_head = restored.branch("dev").commit_id
        restored.put("dev", "after/restore.txt", b"new")
        assert restored.commit("dev", "life goes on").parents == (dev_head,)


def test_restore_after_the_rows_were_lost_in_the_same_database(history, gv):
    before = snapshot(gv, "lake")
    dump_refs(history)
    gv.delete_repository("lake")
    restore_refs(gv, "lake", history.info.storage_namespace)
    assert snapshot(gv, "lake") == before


def test_restore_refuses_an_existing_repository(history, gv):
    dump_refs(history)
    before = snapshot(gv, "lake")
    with pytest.raises(AlreadyExists):
        restore_refs(gv, "lake", history.info.storage_namespace)
    assert snapshot(gv, "lake") == before


def test_missing_or_malformed_dump_ids(gv, tmp_path):
    with pytest.raises(NotFound):
        restore_refs(gv, "lake", (tmp_path / "empty").as_uri())
    with pytest.raises(InvalidArgument):
        restore_refs(gv, "lake", (tmp_path / "empty").as_uri(), dump_id="../../etc")
    with pytest.raises(NotFound):
        restore_refs(gv, "lake", (tmp_path / "empty").as_uri(), "20260101T000000000000Z-0a1b2c3d")
    assert gv.list_repositories() == []


def _dump_file(repo, dump_id: str, name: str) -> Path:
    path = repo.store.local_path(f"{DUMP_PREFIX}{dump_id}/{name}")
    assert path is not None
    return Path(path)


def test_damaged_dump_is_refused_and_nothing_is_written(history, gv):
    dump_id = dump_refs(history).dump_id
    gv.delete_repository("lake")
    path = _dump_file(history, dump_id, "commits.jsonl")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x20
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptFile, match="hash"):
        restore_refs(gv, "lake", history.info.storage_namespace)
    assert gv.list_repositories() == []


def test_tampered_commit_with_a_matching_manifest_is_refused(history, gv):
    dump_id = dump_refs(history).dump_id
    gv.delete_repository("lake")
    commits_path = _dump_file(history, dump_id, "commits.jsonl")
    lines = commits_path.read_bytes().splitlines()
    doc = json.loads(lines[-1])
    doc["message"] = "history rewritten"
    lines[-1] = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    data = b"\n".join(lines) + b"\n"
    commits_path.write_bytes(data)
    manifest_path = _dump_file(history, dump_id, "manifest.json")
    manifest = json.loads(manifest_path.read_bytes())
    manifest["parts"]["commits"]["sha256"] = hashlib.sha256(data).hexdigest()
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(CorruptFile, match="hashes to"):
        restore_refs(gv, "lake", history.info.storage_namespace)
    assert gv.list_repositories() == []


def test_an_incomplete_newer_dump_is_ignored(history, gv):
    good = dump_refs(history).dump_id
    history.put("dev", "late.txt", b"late")
    history.commit("dev", "after the good dump")
    partial = dump_refs(history).dump_id
    os.unlink(_dump_file(history, partial, "manifest.json"))  # as if killed before the manifest
    assert list_dumps(history.store) == [good]
    dev_at_good_dump = history.resolve("dev~1").commit.id
    gv.delete_repository("lake")
    restored = restore_refs(gv, "lake", history.info.storage_namespace)
    assert restored.branch("dev").commit_id == dev_at_good_dump


def test_cli_dump_restore_and_fsck_exit_codes(tmp_path, capsys):
    home = tmp_path / "home"
    ns = (tmp_path / "ns").as_uri()
    src = tmp_path / "a.txt"
    src.write_text("hello\n")

    def cli(*args: str) -> tuple[int, str]:
        rc = main(["--home", str(home), "--json", *args])
        return rc, capsys.readouterr().out

    assert cli("repo", "create", "graveler://lake", ns)[0] == 0
    assert cli("fs", "upload", str(src), "graveler://lake/main/a.txt")[0] == 0
    assert cli("commit", "graveler://lake/main", "-m", "one")[0] == 0
    rc, out = cli("fsck", "graveler://lake")
    assert rc == 0 and json.loads(out)["clean"] is True
    rc, out = cli("refs", "dump", "graveler://lake")
    assert rc == 0 and json.loads(out)["commits"] == 2
    for name in os.listdir(home):
        if name.startswith("graveler.db"):
            os.unlink(home / name)  # the database is lost
    assert cli("repo", "list") == (0, "[]\n")
    rc, out = cli("refs", "restore", "graveler://lake", ns)
    assert rc == 0 and json.loads(out)["branches"] == ["main"]
    rc, out = cli("fs", "cat", "graveler://lake/main/a.txt")
    assert (rc, out) == (0, "hello\n")
    (obj,) = [p for p in (tmp_path / "ns" / "data").rglob("*") if p.is_file()]
    obj.unlink()  # the object is lost
    rc, out = cli("fsck", "graveler://lake")
    doc = json.loads(out)
    assert rc == 1 and doc["clean"] is False
    assert [p["kind"] for p in doc["problems"]] == ["missing-object"]
