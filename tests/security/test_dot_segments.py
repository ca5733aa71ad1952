"""Object paths with a ``.`` or ``..`` segment are refused on every write path: the Python
API (put, link, stage, upload, multipart, import), the CLI, fsspec and Spark. Paths an older
version stored stay readable and deletable.

Reproduced before the fix: ``repo.put("main", "../x.txt", ...)`` staged ``../x.txt`` (the S3
gateway did the same with the key ``main/../x.txt``) and ``graveler fs ls`` listed paths
starting with ``../``, which a copy of the prefix to disk would write outside its directory.
The gateway's side is in ``tests/gateway/test_dot_segments.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graveler.cli import main
from graveler.client import Graveler
from graveler.core.errors import InvalidKey
from graveler.repository import Repository
from graveler.storage.entry import ObjectEntry

BAD = ["../x.txt", "a/../x.txt", "./x.txt", "a/./x.txt", "a/..", "a/.", ".."]
#: Dots that are part of a name, not a segment of their own.
GOOD = ["a..b/x.txt", ".hidden/x", "a/.../b", "x.", "..x", "a/.b./c"]


def _writes(repo: Repository, tmp_path: Path) -> dict[str, Callable[[str], object]]:
    """Every way the Python API writes a path, each taking the path."""
    source = tmp_path / "source"
    source.mkdir(exist_ok=True)
    (source / "f.txt").write_bytes(b"imported")
    stored = repo.put("main", "stored/y.txt", b"y")
    repo.commit("main", "an object to link")  # imports need a branch without staged changes

    def linked(path: str) -> ObjectEntry:
        return repo.make_linked_entry(path, stored.physical_address)

    def entry(path: str) -> ObjectEntry:
        when = datetime.now(UTC)
        return ObjectEntry(path, stored.physical_address, 1, stored.checksum, when)

    return {
        "put": lambda p: repo.put("main", p, b"x"),
        "link": lambda p: repo.link("main", p, stored.physical_address),
        "make_linked_entry": linked,
        "stage_entries": lambda p: repo.stage_entries("main", [entry(p)]),
        "upload_many": lambda p: repo.upload_many("main", [(p, b"x")]),
        "multipart": lambda p: repo.multipart.create("main", p),
        "import_entries": lambda p: repo.import_entries("main", [entry(p)], "import"),
        "import_data": lambda p: repo.import_data("main", source.as_uri(), p + "/"),
    }


@pytest.mark.parametrize("path", BAD)
def test_the_python_api_refuses_dot_segments(repo: Repository, tmp_path: Path, path: str):
    writes = _writes(repo, tmp_path)
    before = repo.branch("main").commit_id
    staged = {d.path for d in repo.diff_uncommitted("main")}
    for name, write in writes.items():
        with pytest.raises(InvalidKey, match="segment") as refused:
            write(path)
        assert repr(path) in str(refused.value) or name == "import_data", name
    assert {d.path for d in repo.diff_uncommitted("main")} == staged
    assert repo.branch("main").commit_id == before


@pytest.mark.parametrize("path", GOOD)
def test_dots_inside_names_are_fine(repo: Repository, path: str):
    repo.put("main", path, b"x")
    assert repo.get("main", path) == b"x"


def test_the_cli_refuses_dot_segments(gv: Graveler, repo: Repository, tmp_path: Path, capsys: Any):
    local = tmp_path / "f.txt"
    local.write_bytes(b"x")
    home = ["--home", str(gv.home), "--database-url", gv.database_url]
    code = main([*home, "fs", "upload", str(local), f"graveler://{repo.name}/main/a/../f.txt"])
    assert code == 2 and "'a/../f.txt' has a '..' segment" in capsys.readouterr().err
    assert main([*home, "--json", "fs", "ls", f"graveler://{repo.name}/main/"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_fsspec_refuses_dot_segments(gv: Graveler, repo: Repository):
    import fsspec

    fs = fsspec.filesystem("graveler", home=str(gv.home), database_url=gv.database_url)
    for path in ("main/../x.txt", "main/a/./x.txt"):
        with pytest.raises((InvalidKey, ValueError), match="segment"):
            fs.pipe_file(f"graveler://{repo.name}/{path}", b"x")
        with (
            pytest.raises((InvalidKey, ValueError), match="segment"),
            fs.open(f"graveler://{repo.name}/{path}", "wb") as f,
        ):
            f.write(b"x")
    assert list(repo.diff_uncommitted("main")) == []
    fs.pipe_file(f"graveler://{repo.name}/main/a..b/x.txt", b"fine")  # the control
    assert repo.get("main", "a..b/x.txt") == b"fine"


def test_spark_refuses_dot_segments(spark: Any, tmp_path: Path):
    with Graveler(tmp_path / "home", f"sqlite:///{tmp_path / 'refs.db'}") as gv:
        repo = gv.create_repository("lake", (tmp_path / "ns").as_uri())
        options = {"home": str(gv.home), "database_url": gv.database_url}
        df = spark.createDataFrame([(1, "a")], ["id", "v"])
        with pytest.raises(Exception, match="segment"):
            df.write.format("graveler").options(**options).mode("append").save(
                "graveler://lake/main/t/../escaped"
            )
        assert list(repo.iter_objects("main")) == []
        assert list(repo.diff_uncommitted("main")) == []


def test_paths_stored_earlier_stay_readable_and_deletable(gv: Graveler, repo: Repository):
    """An older version stored ``../old.txt``: it can still be read, listed, committed and
    deleted, through the API and the CLI."""
    stored = repo.put("main", "placeholder", b"old bytes")
    old = ObjectEntry("../old.txt", stored.physical_address, 9, stored.checksum, stored.mtime)
    repo.staging.stage(repo.name, "main", [old.to_staged()])  # as an older version staged it
    repo.commit("main", "from an older version")
    assert repo.get("main", "../old.txt") == b"old bytes"
    assert "../old.txt" in [o.path for o in repo.iter_objects("main")]
    home = ["--home", str(gv.home), "--database-url", gv.database_url]
    assert main([*home, "fs", "cat", f"graveler://{repo.name}/main/../old.txt"]) == 0
    repo.delete("main", "../old.txt")
    assert not repo.exists("main", "../old.txt")
