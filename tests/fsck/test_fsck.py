"""fsck finds every kind of damage it promises to, reports dangling things without calling them
problems, and says a healthy repository is clean -- on SQLite and PostgreSQL (``repo`` fixture
from ``tests/conftest.py``)."""

from __future__ import annotations

import os

import sqlalchemy as sa

from graveler.maintenance.fsck import ProblemKind, fsck
from graveler.repository import Repository
from graveler.storage.committed.files import TREE_PREFIX


def build_history(repo: Repository) -> dict[str, str]:
    """main: two commits and a tag; dev: merged back; feature: staged work. Returns commit IDs."""
    for i in range(30):
        repo.put("main", f"tbl/part-{i:03d}.csv", f"row {i}\n".encode())
    first = repo.commit("main", "load")
    repo.create_tag("v1", "main")
    repo.create_branch("dev", "main")
    repo.put("dev", "tbl/extra.csv", b"extra\n")
    repo.delete("dev", "tbl/part-000.csv")
    repo.commit("dev", "dev work")
    repo.put("main", "other.txt", b"o")
    repo.commit("main", "more")
    merged = repo.merge("dev", "main").commit
    repo.create_branch("feature", "main")
    repo.put("feature", "staged/only.txt", b"staged bytes")
    return {"first": first.id, "merged": merged.id}


def tree_path(repo: Repository, file_id: str) -> str:
    path = repo.store.local_path(TREE_PREFIX + file_id)
    assert path is not None
    return path


def flip_byte(path: str, where: float = 0.5) -> None:
    with open(path, "r+b") as fh:
        data = bytearray(fh.read())
        data[int(len(data) * where)] ^= 0x41
        fh.seek(0)
        fh.write(data)


def kinds(report) -> list[ProblemKind]:
    return sorted({p.kind for p in report.problems})


def test_healthy_repository_is_clean_and_counted(repo):
    build_history(repo)
    report = fsck(repo, verify_objects=True)
    assert report.clean, report.problems
    assert report.commits == 5  # initial, load, dev work, more, merge
    assert report.metaranges == 4 and report.ranges >= 4
    assert report.staged == 1
    assert report.objects == 33  # 30 parts, extra, other and the staged one
    assert report.dangling_objects == [] and report.unreachable_commits == []


def test_missing_and_damaged_tree_files_are_problems(repo):
    ids = build_history(repo)
    merged = repo.get_commit(ids["merged"])
    first = repo.get_commit(ids["first"])
    dev_range = repo.committed.ranges(repo.resolve("dev").commit.metarange_id)[0]
    os.unlink(tree_path(repo, first.metarange_id))
    flip_byte(tree_path(repo, dev_range.id))
    with open(tree_path(repo, merged.metarange_id), "r+b") as fh:
        fh.truncate(100)
    report = fsck(repo)
    by_subject = {p.subject: p.kind for p in report.problems}
    assert by_subject[first.metarange_id] is ProblemKind.MISSING_TREE_FILE
    assert by_subject[dev_range.id] is ProblemKind.CORRUPT_TREE_FILE
    assert by_subject[merged.metarange_id] is ProblemKind.CORRUPT_TREE_FILE
    assert not report.clean


def test_cached_copies_do_not_hide_damage_in_the_store(repo):
    build_history(repo)
    head = repo.resolve("main").commit
    assert repo.stat("main", "tbl/part-001.csv")  # tree is now in RAM and disk caches
    os.unlink(tree_path(repo, head.metarange_id))
    assert repo.stat("main", "tbl/part-001.csv")  # served from cache
    assert ProblemKind.MISSING_TREE_FILE in kinds(fsck(repo))


def test_missing_truncated_and_flipped_objects(repo):
    build_history(repo)
    gone = repo.stat("main", "tbl/part-001.csv").physical_address
    short = repo.stat("main", "tbl/part-002.csv").physical_address
    flipped = repo.stat("main", "tbl/part-003.csv").physical_address
    staged = repo.stat("feature", "staged/only.txt").physical_address
    os.unlink(repo.store.local_path(gone))
    os.unlink(repo.store.local_path(staged))
    with open(repo.store.local_path(short), "r+b") as fh:
        fh.truncate(2)
    flip_byte(repo.store.local_path(flipped))
    quick = {p.subject: p.kind for p in fsck(repo).problems}
    assert quick == {
        gone: ProblemKind.MISSING_OBJECT,
        staged: ProblemKind.MISSING_OBJECT,
        short: ProblemKind.OBJECT_SIZE,
    }
    deep = {p.subject: p.kind for p in fsck(repo, verify_objects=True).problems}
    assert deep == {**quick, flipped: ProblemKind.OBJECT_CHECKSUM}


def test_refs_pointing_nowhere_and_tampered_commits(repo, gv):
    ids = build_history(repo)
    engine = sa.create_engine(gv.database_url)  # another connection, whichever the store is
    with engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE graveler_branches SET commit_id = :c WHERE name = 'dev'"),
            {"c": "f" * 64},
        )
        conn.execute(
            sa.text("UPDATE graveler_commits SET message = 'rewritten' WHERE id = :c"),
            {"c": ids["first"]},
        )
    engine.dispose()
    report = fsck(repo)
    found = {(p.kind, p.subject) for p in report.problems}
    assert (ProblemKind.MISSING_COMMIT, "f" * 64) in found
    assert (ProblemKind.BAD_COMMIT, ids["first"]) in found
    assert any("branch 'dev'" in p.detail for p in report.problems)


def test_dangling_objects_tree_files_and_commits_are_not_problems(repo):
    build_history(repo)
    repo.create_branch("doomed", "main")
    repo.put("doomed", "d/x.bin", os.urandom(100))
    repo.commit("doomed", "to be dropped")
    repo.put("doomed", "d/staged.bin", b"s")
    doomed_head = repo.resolve("doomed").commit
    repo.delete_branch("doomed")
    report = fsck(repo)
    assert report.clean
    assert len(report.dangling_objects) == 2
    assert report.unreachable_commits == [doomed_head.id]
    assert set(report.dangling_tree_files) >= {doomed_head.metarange_id}
    local_root = repo.store.local_path("data")
    if local_root is not None:  # a write killed mid-way leaves a temporary file behind
        leftover = os.path.join(local_root, "ab", ".graveler-tmp-killed")
        os.makedirs(os.path.dirname(leftover), exist_ok=True)
        open(leftover, "wb").close()
        assert fsck(repo).temporary_files == ["data/ab/.graveler-tmp-killed"]
    doc = report.to_dict()
    assert doc["clean"] is True and doc["problems"] == []
