"""lakefs-spec (the fsspec filesystem for lakeFS) against ``graveler serve``, the way its
documentation uses it: ``lakefs://REPO/REF/PATH`` through fsspec, pandas, Polars and DuckDB,
and transactions (an ephemeral branch, commits inside, a merge on success).

The filesystem is lakefs-spec's own class, checked by identity: graveler also declares an
fsspec ``lakefs`` entry point, which resolves to lakefs-spec whenever it is installed.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fsspec
import lakefs
import lakefs_spec
import pandas as pd
import polars as pl
import pytest
from lakefs_spec import LakeFSFileSystem

from tests.lakefs_clients.server import LakeFS, unique

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def options(server: LakeFS) -> dict[str, str]:
    """lakefs-spec's constructor arguments (also pandas' ``storage_options``)."""
    return {
        "host": server.url,
        "username": server.key.access_key_id,
        "password": server.key.secret_access_key,
    }


@pytest.fixture(scope="module")
def fs(options: dict[str, str]) -> Iterator[LakeFSFileSystem]:
    filesystem = LakeFSFileSystem(**options)
    yield filesystem
    LakeFSFileSystem.clear_instance_cache()


@pytest.fixture
def repo(fs: LakeFSFileSystem) -> str:
    """A new repository (``local://`` namespace) with one commit on ``main``."""
    name = unique("spec")
    lakefs.Repository(name, client=fs.client).create(storage_namespace=f"local://{name}")
    return name


def test_lakefs_protocol_is_lakefs_specs_filesystem(options: dict[str, str]) -> None:
    assert fsspec.get_filesystem_class("lakefs") is lakefs_spec.LakeFSFileSystem
    found, path = fsspec.url_to_fs("lakefs://some-repo/main/a.txt", **options)
    assert type(found) is lakefs_spec.LakeFSFileSystem and path == "some-repo/main/a.txt"


def test_an_installed_environment_resolves_lakefs_to_lakefs_spec() -> None:
    """What a user with graveler and lakefs-spec installed gets, in a fresh interpreter
    (installed entry points only, no test configuration)."""
    code = (
        "import fsspec, json; c = fsspec.get_filesystem_class('lakefs'); "
        "from fsspec.registry import known_implementations as k; "
        "print(json.dumps([c.__module__, c.__qualname__, k['lakefs']['class']]))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    module, name, declared = json.loads(out.stdout)
    assert (module, name) == ("lakefs_spec.spec", "LakeFSFileSystem")
    assert declared == "graveler_fsspec.lakefs.LakeFSFileSystem"  # graveler's entry point


def test_server_version_is_what_lakefs_spec_parses(fs: LakeFSFileSystem) -> None:
    version = fs._lakefs_server_version
    assert len(version) == 3 and all(isinstance(part, int) for part in version)


def test_files_through_fsspec(fs: LakeFSFileSystem, repo: str, tmp_path: Path) -> None:
    base = f"lakefs://{repo}/main"
    fs.pipe(f"{base}/data/a.txt", b"alpha")
    with fs.open(f"{base}/data/b.txt", "wb") as f:
        f.write(b"beta" * 1000)
    local = tmp_path / "c.bin"
    local.write_bytes(os.urandom(70_000))
    fs.put_file(str(local), f"{base}/data/sub/c.bin")

    assert fs.cat(f"{base}/data/a.txt") == b"alpha"
    assert fs.exists(f"{base}/data/b.txt") and not fs.exists(f"{base}/data/none.txt")
    info = fs.info(f"{base}/data/b.txt")
    assert info["type"] == "file" and info["size"] == 4000
    assert fs.info(f"{base}/data/sub")["type"] == "directory"
    listed = fs.ls(f"{base}/data/", detail=False)
    assert sorted(listed) == [f"{repo}/main/data/{n}" for n in ("a.txt", "b.txt", "sub/")]
    assert fs.find(f"{base}/data") == [
        f"{repo}/main/data/{n}" for n in ("a.txt", "b.txt", "sub/c.bin")
    ]
    with fs.open(f"{base}/data/sub/c.bin", "rb") as f:
        f.seek(1000)
        assert f.read(10) == local.read_bytes()[1000:1010]
    fs.get_file(f"{base}/data/sub/c.bin", str(tmp_path / "back.bin"))
    assert (tmp_path / "back.bin").read_bytes() == local.read_bytes()

    fs.cp_file(f"{base}/data/a.txt", f"{base}/copy/a.txt")
    assert fs.cat(f"{base}/copy/a.txt") == b"alpha"
    fs.rm(f"{base}/data/a.txt")
    fs.invalidate_cache()
    assert not fs.exists(f"{base}/data/a.txt")
    with pytest.raises(FileNotFoundError):
        fs.cat(f"{base}/data/a.txt")


def test_pandas_through_lakefs_urls(
    fs: LakeFSFileSystem, repo: str, options: dict[str, Any]
) -> None:
    frame = pd.DataFrame({"lake": ["Constance", "Garda", "Geneva"], "km2": [536, 370, 580]})
    frame.to_parquet(f"lakefs://{repo}/main/lakes.parquet", storage_options=options)
    frame.to_csv(f"lakefs://{repo}/main/lakes.csv", index=False, storage_options=options)
    back = pd.read_parquet(f"lakefs://{repo}/main/lakes.parquet", storage_options=options)
    pd.testing.assert_frame_equal(back, frame)
    csv = pd.read_csv(f"lakefs://{repo}/main/lakes.csv", storage_options=options)
    pd.testing.assert_frame_equal(csv, frame)

    lakefs.Branch(repo, "main", client=fs.client).commit(message="lakes")
    at_commit = pd.read_parquet(f"lakefs://{repo}/main~0/lakes.parquet", storage_options=options)
    assert list(at_commit["lake"]) == ["Constance", "Garda", "Geneva"]


def test_polars_and_duckdb_in_a_transaction(fs: LakeFSFileSystem, repo: str) -> None:
    import duckdb

    table = pl.DataFrame({"lake": ["Garda", "Como", "Constance"], "country": ["IT", "IT", "DE"]})
    with fs.open(f"lakefs://{repo}/main/lakes.parquet", "wb") as f:
        table.write_parquet(f)
    lakefs.Branch(repo, "main", client=fs.client).commit(message="add lakes")

    duckdb.register_filesystem(fs)
    try:
        with fs.transaction(repo, "main") as tx:
            branch = tx.branch.id
            with fs.open(f"lakefs://{repo}/{branch}/lakes.parquet", "rb") as f:
                read = pl.read_parquet(f)
            assert read.equals(table)
            german = read.filter(pl.col("country") == "DE")
            with fs.open(f"lakefs://{repo}/{branch}/german_lakes.csv", "wb") as f:
                german.write_csv(f)
            tx.commit(message="German lakes")
            italian = duckdb.sql(
                f"SELECT lake FROM read_parquet('lakefs://{repo}/{branch}/lakes.parquet') "
                "WHERE country = 'IT' ORDER BY lake"
            )
            italian.write_csv(f"lakefs://{repo}/{branch}/italian_lakes.csv")
            tx.commit(message="Italian lakes")
            assert not fs.exists(f"lakefs://{repo}/main/german_lakes.csv")
    finally:
        duckdb.unregister_filesystem("lakefs")

    # merged into main on success, the ephemeral branch deleted
    fs.invalidate_cache()
    main = f"lakefs://{repo}/main"
    assert fs.cat(f"{main}/german_lakes.csv").decode().splitlines() == [
        "lake,country",
        "Constance,DE",
    ]
    assert fs.cat(f"{main}/italian_lakes.csv").decode().split() == ["lake", "Como", "Garda"]
    branches = [b.id for b in lakefs.Repository(repo, client=fs.client).branches()]
    assert branches == ["main"]
    log = [c.message for c in lakefs.Branch(repo, "main", client=fs.client).log(max_amount=4)]
    assert log[1:3] == ["Italian lakes", "German lakes"]


def test_a_failed_transaction_leaves_main_alone(fs: LakeFSFileSystem, repo: str) -> None:
    head = lakefs.Branch(repo, "main", client=fs.client).get_commit().id
    with pytest.raises(RuntimeError, match="boom"), fs.transaction(repo, "main") as tx:
        fs.pipe(f"lakefs://{repo}/{tx.branch.id}/partial.txt", b"half")
        tx.commit(message="half done")
        raise RuntimeError("boom")
    assert lakefs.Branch(repo, "main", client=fs.client).get_commit().id == head
    assert not fs.exists(f"lakefs://{repo}/main/partial.txt")
    kept = [b.id for b in lakefs.Repository(repo, client=fs.client).branches()]
    assert len(kept) == 2  # "onsuccess": the failed transaction's branch is kept


def test_sample_repository_reads_like_lakefs_quickstart(
    fs: LakeFSFileSystem, options: dict[str, Any]
) -> None:
    """lakefs-spec's own suite starts from a repository made with ``include_samples``."""
    name = unique("quickstart")
    lakefs.Repository(name, client=fs.client).create(
        storage_namespace=f"local://{name}", include_samples=True
    )
    assert fs.exists(f"lakefs://{name}/main/README.md")
    lakes = pd.read_parquet(f"lakefs://{name}/main/lakes.parquet", storage_options=options)
    assert len(lakes) > 0
    assert fs.isdir(f"lakefs://{name}/main/images")
    assert fs.cat(f"lakefs://{name}/main/data/lakes.source.md")


def test_reading_through_an_open_file_object(fs: LakeFSFileSystem, repo: str) -> None:
    payload = b"".join(b"line %d\n" % i for i in range(5000))
    fs.pipe(f"lakefs://{repo}/main/lines.txt", payload)
    with fs.open(f"lakefs://{repo}/main/lines.txt", "rb", block_size=4096) as f:
        text = io.TextIOWrapper(f).read().splitlines()
    assert text[0] == "line 0" and text[-1] == "line 4999"
    assert fs.tail(f"lakefs://{repo}/main/lines.txt", size=10) == payload[-10:]
