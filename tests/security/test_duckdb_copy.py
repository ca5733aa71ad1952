"""DuckDB's partitioned ``COPY ... TO 'graveler://...'`` works without ``OVERWRITE_OR_IGNORE``.

Reproduced before the fix: DuckDB makes the output directory, then lists it to check that it
is empty; graveler had no empty directories, so the listing raised ``PathNotFound``.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from graveler_fsspec import GravelerFileSystem

from graveler.client import Graveler

COPY = "COPY (SELECT i, i % 3 AS p FROM range(30) r(i)) TO 'graveler://lake/main/etl/out' "


def test_partitioned_copy_into_a_new_directory(tmp_path: Path) -> None:
    with Graveler(tmp_path / "home", f"sqlite:///{tmp_path / 'refs.db'}") as gv:
        repo = gv.create_repository("lake", (tmp_path / "ns").as_uri())
        con = duckdb.connect()
        con.register_filesystem(GravelerFileSystem(client=gv))
        con.execute(COPY + "(FORMAT parquet, PARTITION_BY (p))")
        written = sorted(e.path for e in repo.iter_objects("main", "etl/out/"))
        assert [p.rsplit("/", 1)[0] for p in written] == [f"etl/out/p={n}" for n in range(3)]
        back = con.execute(
            "SELECT count(*), sum(i), count(DISTINCT p) FROM "
            "read_parquet('graveler://lake/main/etl/out/*/*.parquet', hive_partitioning=true)"
        ).fetchone()
        assert back == (30, 435, 3)
        # A second COPY into the same directory is refused and changes nothing. DuckDB 2.0
        # says "not empty", as on a local disk; DuckDB 1.5 (pinned for its PyPI extensions)
        # joins the directory to the full names fsspec lists and fails on that path instead.
        with pytest.raises(duckdb.Error, match=r"not empty|no object or directory"):
            con.execute(COPY + "(FORMAT parquet, PARTITION_BY (p))")
        assert sorted(e.path for e in repo.iter_objects("main", "etl/out/")) == written
        con.close()
