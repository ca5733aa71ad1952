"""The S3 clients a data team points at a lake, each against ``graveler serve``: the aws CLI,
s3fs, pyarrow's S3FileSystem, DuckDB (httpfs from its PyPI package), polars and delta-rs.
Each writes on a run branch and reads back; what it wrote is then on the branch for
graveler too, and merges into ``main``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq

from graveler.client import Graveler
from tests.gateway.conftest import Gateway

TABLE = pa.table({"id": list(range(100)), "name": [f"n{i}" for i in range(100)]})


def _merged(engine: Graveler, branch: str, *paths: str) -> None:
    repo = engine.repository("lake")
    repo.commit(branch, f"client test {branch}")
    target = f"{branch}-into"
    repo.create_branch(target, "main")
    repo.merge(branch, target)
    for path in paths:
        assert repo.exists(target, path), path


def _aws(gateway: Gateway, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        "AWS_ACCESS_KEY_ID": gateway.key.access_key_id,
        "AWS_SECRET_ACCESS_KEY": gateway.key.secret_access_key,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": "/nonexistent/aws-config",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/aws-creds",
        "AWS_EC2_METADATA_DISABLED": "true",
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(
        [sys.executable, "-m", "awscli", "--endpoint-url", gateway.server.url, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )


def test_aws_cli(gateway: Gateway, engine: Graveler, branch: str, tmp_path: Path):
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.csv").write_text("id\n1\n")
    (src / "sub" / "b.json").write_text('{"x": 1}')
    (src / "big.bin").write_bytes(b"z" * (9 << 20))  # multipart with the CLI's 8 MiB threshold
    cp = _aws(gateway, "s3", "cp", str(src / "a.csv"), f"s3://lake/{branch}/cli/a.csv")
    assert cp.returncode == 0, cp.stderr
    sync = _aws(gateway, "s3", "sync", str(src), f"s3://lake/{branch}/synced/")
    assert sync.returncode == 0, sync.stderr
    listed = _aws(gateway, "s3", "ls", "--recursive", f"s3://lake/{branch}/synced/")
    assert sorted(line.split()[-1] for line in listed.stdout.splitlines()) == [
        f"{branch}/synced/a.csv",
        f"{branch}/synced/big.bin",
        f"{branch}/synced/sub/b.json",
    ]
    again = _aws(gateway, "s3", "sync", str(src), f"s3://lake/{branch}/synced/")
    assert again.returncode == 0 and again.stdout.strip() == ""  # nothing to do
    down = tmp_path / "down"
    got = _aws(gateway, "s3", "cp", "--recursive", f"s3://lake/{branch}/synced/", str(down))
    assert got.returncode == 0, got.stderr
    assert (down / "big.bin").read_bytes() == (src / "big.bin").read_bytes()
    head = _aws(gateway, "s3api", "head-object", "--bucket", "lake", "--key", f"{branch}/cli/a.csv")
    assert json.loads(head.stdout)["ContentLength"] == len("id\n1\n")
    rm = _aws(gateway, "s3", "rm", f"s3://lake/{branch}/cli/a.csv")
    assert rm.returncode == 0, rm.stderr
    assert not engine.repository("lake").exists(branch, "cli/a.csv")
    _merged(engine, branch, "synced/big.bin", "synced/sub/b.json")


def test_s3fs(gateway: Gateway, engine: Graveler, branch: str):
    import s3fs

    fs = s3fs.S3FileSystem(
        key=gateway.key.access_key_id,
        secret=gateway.key.secret_access_key,
        endpoint_url=gateway.server.url,
        client_kwargs={"region_name": "us-east-1"},
        skip_instance_cache=True,
    )
    with fs.open(f"lake/{branch}/fs/one.txt", "wb") as f:
        f.write(b"one")
    pq.write_table(TABLE, f"lake/{branch}/fs/t.parquet", filesystem=fs)
    assert fs.cat(f"lake/{branch}/fs/one.txt") == b"one"
    assert sorted(fs.ls(f"lake/{branch}/fs/", detail=False)) == [
        f"lake/{branch}/fs/one.txt",
        f"lake/{branch}/fs/t.parquet",
    ]
    assert fs.glob(f"lake/{branch}/fs/*.parquet") == [f"lake/{branch}/fs/t.parquet"]
    assert pq.read_table(f"lake/{branch}/fs/t.parquet", filesystem=fs).equals(TABLE)
    fs.rm(f"lake/{branch}/fs/one.txt")
    assert not fs.exists(f"lake/{branch}/fs/one.txt")
    _merged(engine, branch, "fs/t.parquet")


def test_pyarrow_s3filesystem(gateway: Gateway, engine: Graveler, branch: str):
    from pyarrow import fs

    s3 = fs.S3FileSystem(
        access_key=gateway.key.access_key_id,
        secret_key=gateway.key.secret_access_key,
        endpoint_override=urlsplit(gateway.server.url).netloc,
        scheme="http",
        region="us-east-1",
        allow_bucket_creation=False,
    )
    pq.write_table(TABLE, f"lake/{branch}/arrow/t.parquet", filesystem=s3)
    infos = s3.get_file_info(fs.FileSelector(f"lake/{branch}/arrow", recursive=True))
    assert [i.path for i in infos] == [f"lake/{branch}/arrow/t.parquet"]
    assert pq.read_table(f"lake/{branch}/arrow/t.parquet", filesystem=s3).equals(TABLE)
    _merged(engine, branch, "arrow/t.parquet")


def _duckdb(gateway: Gateway) -> Any:
    import duckdb
    import duckdb_extension_httpfs

    con = duckdb.connect()
    extension = next(Path(duckdb_extension_httpfs.__file__).parent.rglob("httpfs.duckdb_extension"))
    con.execute(f"LOAD '{extension}'")
    con.execute(
        f"""CREATE SECRET graveler (TYPE S3, KEY_ID '{gateway.key.access_key_id}',
        SECRET '{gateway.key.secret_access_key}', ENDPOINT '{urlsplit(gateway.server.url).netloc}',
        URL_STYLE 'path', USE_SSL false, REGION 'us-east-1')"""
    )
    return con


def test_duckdb_httpfs(gateway: Gateway, engine: Graveler, branch: str):
    con = _duckdb(gateway)
    for part in range(3):
        con.execute(
            f"COPY (SELECT i, i % 7 AS k FROM range({part * 1000}, {(part + 1) * 1000}) r(i)) "
            f"TO 's3://lake/{branch}/duck/part-{part}.parquet' (FORMAT parquet)"
        )
    total = con.execute(
        f"SELECT count(*), sum(i) FROM read_parquet('s3://lake/{branch}/duck/*.parquet')"
    ).fetchone()
    assert total == (3000, sum(range(3000)))
    _merged(engine, branch, "duck/part-0.parquet", "duck/part-2.parquet")
    at_main = con.execute(
        f"SELECT count(*) FROM read_parquet('s3://lake/{branch}-into/duck/*.parquet')"
    ).fetchone()
    assert at_main == (3000,)


def _object_store_options(gateway: Gateway) -> dict[str, str]:
    return {
        "aws_access_key_id": gateway.key.access_key_id,
        "aws_secret_access_key": gateway.key.secret_access_key,
        "aws_endpoint_url": gateway.server.url,
        "aws_region": "us-east-1",
        "aws_allow_http": "true",
        "aws_virtual_hosted_style_request": "false",
    }


def test_polars(gateway: Gateway, engine: Graveler, branch: str):
    import polars as pl

    options = _object_store_options(gateway)
    frame = pl.from_arrow(TABLE)
    assert isinstance(frame, pl.DataFrame)
    frame.write_parquet(f"s3://lake/{branch}/polars/t.parquet", storage_options=options)
    back = pl.read_parquet(f"s3://lake/{branch}/polars/t.parquet", storage_options=options)
    assert back.equals(frame)
    lazy = pl.scan_parquet(f"s3://lake/{branch}/polars/*.parquet", storage_options=options)
    assert lazy.select(pl.len()).collect().item() == 100
    _merged(engine, branch, "polars/t.parquet")


def test_delta_rs_with_conditional_puts(gateway: Gateway, engine: Graveler, branch: str):
    from deltalake import DeltaTable, write_deltalake

    options = {**_object_store_options(gateway), "aws_conditional_put": "etag"}
    uri = f"s3://lake/{branch}/delta/events"
    write_deltalake(uri, TABLE, storage_options=options)
    write_deltalake(uri, TABLE.slice(0, 10), storage_options=options, mode="append")
    table = DeltaTable(uri, storage_options=options)
    assert table.version() == 1
    assert table.to_pyarrow_table().num_rows == 110
    repo = engine.repository("lake")
    log = sorted(e.path for e in repo.iter_objects(branch, prefix="delta/events/_delta_log/"))
    assert log[:2] == [
        "delta/events/_delta_log/00000000000000000000.json",
        "delta/events/_delta_log/00000000000000000001.json",
    ]
    first_commit = repo.get(branch, log[1])
    # A writer that still sees version 0 tries to create version 1: the put-if-absent of its
    # log entry is refused (412), so delta-rs re-reads, finds a blind append and commits it
    # as version 2. Without the refusal it would have replaced version 1 and lost its rows.
    stale = DeltaTable(uri, storage_options=options, version=0)
    write_deltalake(stale, TABLE.slice(0, 1), storage_options=options, mode="append")
    latest = DeltaTable(uri, storage_options=options)
    assert latest.version() == 2
    assert latest.to_pyarrow_table().num_rows == 111
    assert repo.get(branch, log[1]) == first_commit
