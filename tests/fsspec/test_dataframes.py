"""Real round trips through ``graveler://`` with pandas, polars, pyarrow.dataset and DuckDB:
written on a branch, committed, tagged, then read back on the branch and on the tag."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pandas as pd
import polars as pl
import pyarrow.dataset as pads
import pytest
from graveler_fsspec import GravelerFileSystem, ReadOnlyRef

from graveler.repository import Repository

PARTS = 3


@pytest.fixture
def setup(tmp_path) -> Iterator[tuple[GravelerFileSystem, Repository, dict[str, str]]]:
    """A repository reachable through storage options, as a pipeline would configure it."""
    options = {"home": str(tmp_path / "home"), "database_url": f"sqlite:///{tmp_path}/r.db"}
    fs = GravelerFileSystem(**options)  # the instance pandas & co. get from fsspec's cache
    repo = fs.client.create_repository("lake", (tmp_path / "ns").as_uri())
    yield fs, repo, options
    GravelerFileSystem.clear_instance_cache()


def frame(i: int) -> pd.DataFrame:
    return pd.DataFrame({"part": [i] * 4, "n": range(i * 4, i * 4 + 4), "s": list("wxyz")})


def write_on_branch(repo: Repository, options: dict[str, str]) -> pd.DataFrame:
    repo.create_branch("etl", "main")
    for i in range(PARTS):
        frame(i).to_parquet(f"graveler://lake/etl/events/part-{i}.parquet", storage_options=options)
    return pd.concat([frame(i) for i in range(PARTS)], ignore_index=True)


def reads(ref: str, fs: GravelerFileSystem, options: dict[str, str]) -> dict[str, pd.DataFrame]:
    """The same table read through each library, as pandas frames sorted by ``n``."""
    one = f"graveler://lake/{ref}/events/part-1.parquet"
    with fs.open(one, "rb") as f:
        polars_native = pl.read_parquet(f).to_pandas()
    con = duckdb.connect()
    con.register_filesystem(fs)
    duck = con.sql(f"SELECT * FROM read_parquet('graveler://lake/{ref}/events/*.parquet')").df()
    dataset = pads.dataset(f"lake/{ref}/events", filesystem=fs, format="parquet")
    return {
        "pandas": pd.read_parquet(one, storage_options=options),
        "polars": pl.read_parquet(one, storage_options=options, use_pyarrow=True).to_pandas(),
        "polars_file": polars_native,
        "pyarrow_dataset": dataset.to_table().to_pandas(),
        "duckdb": duck,
    }


def normalized(df: pd.DataFrame) -> pd.DataFrame:
    out = df[["part", "n", "s"]].astype({"part": "int64", "n": "int64", "s": "object"})
    return out.sort_values("n").reset_index(drop=True)


@pytest.mark.parametrize("ref", ["etl", "v1"])
def test_round_trips_on_a_branch_and_on_a_tag(setup, ref):
    fs, repo, options = setup
    expected = write_on_branch(repo, options)
    repo.commit("etl", "events")
    repo.create_tag("v1", "etl")
    pd.DataFrame({"part": [9], "n": [99], "s": ["later"]}).to_parquet(
        "graveler://lake/etl/events/part-9.parquet", storage_options=options
    )  # after the tag: the branch sees it, the tag does not
    if ref == "etl":
        expected = pd.concat([expected, pd.DataFrame({"part": [9], "n": [99], "s": ["later"]})])
    got = reads(ref, fs, options)
    assert normalized(got["pandas"]).equals(normalized(frame(1)))
    assert normalized(got["polars"]).equals(normalized(frame(1)))
    assert normalized(got["polars_file"]).equals(normalized(frame(1)))
    assert normalized(got["pyarrow_dataset"]).equals(normalized(expected))
    assert normalized(got["duckdb"]).equals(normalized(expected))


def test_writers_refuse_a_tag_and_pyarrow_writes_a_dataset_on_a_branch(setup):
    fs, repo, options = setup
    repo.create_tag("v0", "main")
    with pytest.raises(ReadOnlyRef):
        frame(0).to_parquet("graveler://lake/v0/t.parquet", storage_options=options)
    table = pl.from_pandas(pd.concat([frame(i) for i in range(PARTS)])).to_arrow()
    pads.write_dataset(
        table, "lake/main/by_part", filesystem=fs, format="parquet",
        partitioning=["part"], partitioning_flavor="hive",
    )  # fmt: skip
    assert fs.ls("lake/main/by_part", detail=False) == [
        f"lake/main/by_part/part={i}" for i in range(PARTS)
    ]
    back = pads.dataset("lake/main/by_part", filesystem=fs, partitioning="hive").to_table()
    assert sorted(back.column("n").to_pylist()) == list(range(PARTS * 4))
    con = duckdb.connect()
    con.register_filesystem(fs)
    con.sql("SELECT 42 AS answer").write_csv("graveler://lake/main/answer.csv")
    assert fs.cat("lake/main/answer.csv").decode().split() == ["answer", "42"]
