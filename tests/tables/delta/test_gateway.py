"""Delta tables written and read through the S3 gateway (issue 27, point 5): ``graveler
serve`` started the documented way (tests/serving.py); delta-spark writes
``s3a://lake/BRANCH/path`` (hadoop-aws from ``make jars``, in the oracle's process), delta-rs
writes ``s3://lake/BRANCH/path`` with conditional puts; two run branches each append, both
merge into main as a table; delta-rs, delta-spark, DuckDB (httpfs + delta from PyPI) and
polars read main, a tag and a commit ID through the gateway, beside Delta's own time
travel."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import duckdb
import duckdb_extension_delta
import duckdb_extension_httpfs
import polars as pl
import pytest
from deltalake import DeltaTable, write_deltalake

from graveler.client import Graveler
from tests.serving import Key, Served, s3a_settings
from tests.tables.delta import ops
from tests.tables.delta.conftest import SparkOracle

BASE = [[1, "a"], [2, "b"]]
MERGED = [[1, "a"], [10, "a"], [2, "b"], [20, "b"]]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Key]]:
    home = tmp_path_factory.mktemp("delta-gateway") / "home"
    with Served(home) as server:
        server.cli("repo", "create", "graveler://lake", (home.parent / "ns").as_uri())
        yield server, server.credentials()


def _options(server: Served, key: Key) -> dict[str, str]:
    return {
        "aws_access_key_id": key.access_key_id,
        "aws_secret_access_key": key.secret_access_key,
        "aws_endpoint_url": server.url,
        "aws_region": "us-east-1",
        "aws_allow_http": "true",
        "aws_virtual_hosted_style_request": "false",
        "aws_conditional_put": "etag",
    }


def _two_runs(gv: Graveler, path: str, write: Any, tag: str) -> str:
    """Commit the table ``write`` made on main, let runs r1/r2 each append, merge both;
    tag main; return main's commit before the merges."""
    repo = gv.repository("lake")
    repo.commit("main", f"create {path}")
    before = repo.branch("main").commit_id
    for branch, rows in ((f"{tag}-r1", [[10, "a"]]), (f"{tag}-r2", [[20, "b"]])):
        repo.create_branch(branch, "main")
        write(branch, ops.append(*(tuple(r) for r in rows)))
        repo.commit(branch, f"append on {branch}")
    for branch in (f"{tag}-r1", f"{tag}-r2"):
        repo.merge(branch, "main")  # the second one merges as a table
    repo.create_tag(tag, "main")
    return before


def _duckdb(server: Served, key: Key) -> Any:
    con = duckdb.connect(
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    )
    for package, name in ((duckdb_extension_httpfs, "httpfs"), (duckdb_extension_delta, "delta")):
        extension = next(Path(package.__file__).parent.rglob(f"{name}.duckdb_extension"))
        con.execute(f"LOAD '{extension}'")
    con.execute(
        f"""CREATE SECRET graveler (TYPE S3, KEY_ID '{key.access_key_id}',
        SECRET '{key.secret_access_key}', ENDPOINT '{urlsplit(server.url).netloc}',
        URL_STYLE 'path', USE_SSL false, REGION 'us-east-1')"""
    )
    return con


def _rows(found: list[Any]) -> list[list[Any]]:
    return sorted(([r[0], r[1]] for r in found), key=repr)


def _read_everywhere(server: Served, key: Key, path: str, before: str, tag: str) -> None:
    """delta-rs, DuckDB and polars read the merged table at main, the tag and the commit
    before the merges, and main at Delta's versions."""
    options = _options(server, key)
    con = _duckdb(server, key)
    for ref, expected in (("main", MERGED), (tag, MERGED), (before, BASE)):
        uri = f"s3://lake/{ref}/{path}"
        by_rs = DeltaTable(uri, storage_options=options).to_pyarrow_table().to_pylist()
        assert _rows([(r["id"], r["part"]) for r in by_rs]) == expected, ref
        by_duck = con.execute(f"SELECT id, part FROM delta_scan('{uri}')").fetchall()
        assert _rows(by_duck) == expected, ref
        by_polars = pl.read_delta(uri, storage_options=options).select("id", "part")
        assert _rows(by_polars.rows()) == expected, ref
    main = f"s3://lake/main/{path}"
    assert DeltaTable(main, storage_options=options).version() == 2
    at_one = DeltaTable(main, storage_options=options, version=0).to_pyarrow_table()
    assert _rows([(r["id"], r["part"]) for r in at_one.to_pylist()]) == BASE


def test_delta_rs_writes_through_the_gateway(served: tuple[Served, Key]) -> None:
    server, key = served
    options = _options(server, key)
    path = "delta/rs_events"

    def write(branch: str, spec: ops.Spec) -> None:
        write_deltalake(
            f"s3://lake/{branch}/{path}",
            ops.arrow(spec["rows"]),
            mode=spec["op"] if spec["op"] == "append" else "error",
            partition_by=["part"],
            storage_options=options,
        )

    with Graveler(server.home) as gv:
        write("main", {"op": "create", "rows": BASE})
        before = _two_runs(gv, path, write, "rs")
    _read_everywhere(server, key, path, before, "rs")


def test_delta_spark_writes_through_the_gateway_with_s3a(
    served: tuple[Served, Key], spark_oracle: SparkOracle
) -> None:
    server, key = served
    spark_oracle.ask(cmd="hadoop", conf=s3a_settings(server.url, key))
    path = "delta/spark_events"

    def write(branch: str, spec: ops.Spec) -> None:
        spark_oracle.ask(cmd="run", path=f"s3a://lake/{branch}/{path}", steps=[spec])

    with Graveler(server.home) as gv:
        write("main", {"op": "create", "rows": BASE})
        before = _two_runs(gv, path, write, "spark")
        commit = gv.repository("lake").branch("main").commit_id

    def read(ref: str, version: int | None = None) -> list[Any]:
        uri = f"s3a://lake/{ref}/{path}"
        cols = ["id", "part"]
        return spark_oracle.ask(cmd="read", path=uri, version=version, columns=cols)["rows"]

    assert read("main") == MERGED and read("spark") == MERGED and read(commit) == MERGED
    assert read(before) == BASE and read("main", 0) == BASE
    _read_everywhere(server, key, path, before, "spark")
