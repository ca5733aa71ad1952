"""Imports of several sources in one commit (prefixes and single objects, as lakeFS's
ImportManager sends them), with progress and cooperative cancellation between batches:
a canceled import commits nothing, stages nothing and leaves no temporary file."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from graveler import Graveler
from graveler.core.errors import (
    ImportCanceled,
    InvalidArgument,
    InvalidURI,
    ObjectNotFound,
)
from graveler.versioning import imports
from graveler.versioning.import_sources import ImportSource
from graveler.versioning.imports import ImportControl


def tree(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


@pytest.fixture
def sources(tmp_path):
    one = tree(tmp_path / "one", {"a.csv": b"a", "sub/b.csv": b"b"})
    two = tree(tmp_path / "two", {"c.csv": b"c"})
    single = tree(tmp_path / "single", {"report.json": b"{}"}) / "report.json"
    return one, two, single


@pytest.fixture
def spills(tmp_path, monkeypatch):
    """Where imports make their temporary files (checked to be empty afterwards)."""
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


def test_several_sources_in_one_commit(repo, sources, spills):
    one, two, single = sources
    repo.put("main", "first/old", b"replaced: under a prefix destination")
    repo.put("main", "kept/file", b"kept: under no destination")
    repo.commit("main", "before")
    before = repo.branch("main").commit_id
    result = repo.import_data(
        "main",
        [
            ImportSource.prefix(one.as_uri(), "first"),
            ImportSource.prefix(two.as_uri(), "second/"),
            ImportSource.object(single.as_uri(), "kept/report.json"),
        ],
        message="three sources",
    )
    assert result.objects == 4 and result.commit.parents == (before,)
    assert result.sources == (one.as_uri(), two.as_uri(), single.as_uri())
    paths = sorted(e.path for e in repo.iter_objects("main"))
    assert paths == [
        "first/a.csv",
        "first/sub/b.csv",
        "kept/file",
        "kept/report.json",
        "second/c.csv",
    ]
    assert repo.get("main", "kept/report.json") == b"{}"
    assert repo.stat("main", "kept/report.json").physical_address == single.as_uri()
    recorded = json.loads(result.commit.metadata[".graveler.import.source"])
    assert recorded == [one.as_uri(), two.as_uri(), single.as_uri()]
    assert list(spills.iterdir()) == []  # the temporary file is gone


def test_the_later_source_wins_a_path(repo, sources):
    one, _, single = sources
    repo.import_data(
        "main",
        [ImportSource.prefix(one.as_uri(), "d/"), ImportSource.object(single.as_uri(), "d/a.csv")],
    )
    assert repo.get("main", "d/a.csv") == b"{}"
    assert repo.get("main", "d/sub/b.csv") == b"b"


def test_bad_sources_change_nothing(repo, sources, tmp_path):
    one, _, single = sources
    head = repo.branch("main").commit_id
    for bad, error in [
        ([ImportSource.object(single.as_uri(), "")], InvalidArgument),
        ([ImportSource.object(single.as_uri(), "dir/")], InvalidArgument),
        ([ImportSource.object(one.as_uri(), "x")], InvalidURI),  # a directory
        ([ImportSource.object((tmp_path / "missing").as_uri(), "x")], InvalidURI),
        ([ImportSource.prefix(single.as_uri(), "x/")], InvalidURI),  # a file
        ([ImportSource.prefix(one.as_uri(), "a\x00b/")], InvalidArgument),
        ([], InvalidArgument),
        (["file:///tmp"], InvalidArgument),
    ]:
        with pytest.raises(error):
            repo.import_data("main", bad)
    with pytest.raises(InvalidArgument, match="destination"):
        repo.import_data("main", [ImportSource.prefix(one.as_uri())], "also/")
    assert repo.branch("main").commit_id == head


def test_a_missing_s3_object_fails_the_import(tmp_path, s3_client, s3_bucket, moto_endpoint):
    s3_client.put_object(Bucket=s3_bucket, Key="raw/here", Body=b"1")
    with Graveler(home=tmp_path / "h", store_options={"endpoint_url": moto_endpoint}) as gv:
        repo = gv.create_repository("lake", f"s3://{s3_bucket}/lakes/lake")
        head = repo.branch("main").commit_id
        with pytest.raises(ObjectNotFound, match="raw/gone"):
            repo.import_data(
                "main",
                [
                    ImportSource.object(f"s3://{s3_bucket}/raw/here", "here"),
                    ImportSource.object(f"s3://{s3_bucket}/raw/gone", "gone"),
                ],
            )
        assert repo.branch("main").commit_id == head
        result = repo.import_data(
            "main",
            [
                ImportSource.object(f"s3://{s3_bucket}/raw/here", "a/here"),
                ImportSource.prefix(f"s3://{s3_bucket}/raw/", "b/"),
            ],
        )
        assert result.objects == 2 and repo.get("main", "a/here") == b"1"
        assert repo.stat("main", "a/here").physical_address == f"s3://{s3_bucket}/raw/here"


@pytest.fixture
def many(tmp_path, monkeypatch):
    """Seven files, ingested two at a time."""
    monkeypatch.setattr(imports, "BATCH", 2)
    return tree(tmp_path / "many", {f"f{n}": b"%d" % n for n in range(7)})


def test_progress_is_reported_after_every_batch(repo, many):
    seen: list[int] = []
    result = repo.import_data("main", many.as_uri(), "m/", control=ImportControl(seen.append))
    assert seen == [2, 4, 6, 7] and result.objects == 7


@pytest.mark.parametrize("after", [1, 3], ids=["while-ingesting", "while-building"])
def test_canceling_between_batches_commits_and_stages_nothing(repo, many, spills, after):
    head = repo.branch("main").commit_id
    asked: list[int] = []

    def canceled() -> bool:
        asked.append(1)
        return len(asked) > after

    with pytest.raises(ImportCanceled):
        repo.import_data("main", many.as_uri(), "m/", control=ImportControl(canceled=canceled))
    assert repo.branch("main").commit_id == head
    assert list(repo.iter_staged("main")) == [] and list(repo.iter_objects("main")) == []
    assert list(spills.iterdir()) == []


def test_a_refusal_just_before_the_commit_changes_nothing(repo, many, spills):
    head = repo.branch("main").commit_id

    def refuse(commit: object) -> None:
        raise ImportCanceled("changed my mind")

    with pytest.raises(ImportCanceled):
        repo.import_data("main", many.as_uri(), control=ImportControl(before_commit=refuse))
    assert repo.branch("main").commit_id == head and list(spills.iterdir()) == []
