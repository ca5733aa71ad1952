"""A repository whose storage namespace is S3 (moto on loopback): objects, trees and reads
all go through boto3, while refs stay in SQL."""

from __future__ import annotations

from graveler.client import Graveler
from graveler.storage.committed.files import TREE_PREFIX


def test_repository_on_s3_end_to_end(tmp_path, s3_bucket, s3_client, moto_endpoint):
    with Graveler(home=tmp_path / "h", store_options={"endpoint_url": moto_endpoint}) as gv:
        repo = gv.create_repository("lake", f"s3://{s3_bucket}/lakes/lake")
        local = gv.create_repository("side", (tmp_path / "ns").as_uri())  # options not leaked
        local.put("main", "x", b"local")
        repo.put("main", "tables/a/part-0.parquet", b"A" * 100_000)
        repo.put("main", "tables/b/part-0.parquet", b"B")
        c1 = repo.commit("main", "load")
        repo.create_branch("dev", "main")
        repo.put("dev", "tables/a/part-0.parquet", b"changed")
        repo.commit("dev", "change a")
        repo.merge("dev", "main")
        assert repo.get("main", "tables/a/part-0.parquet") == b"changed"
        assert repo.get(c1.id, "tables/a/part-0.parquet") == b"A" * 100_000
        listed = s3_client.list_objects_v2(Bucket=s3_bucket, Prefix="lakes/lake/")
        keys = [o["Key"] for o in listed.get("Contents", [])]
        assert any(k.startswith("lakes/lake/" + TREE_PREFIX) for k in keys)
        assert sum(k.startswith("lakes/lake/data/") for k in keys) == 3
        assert repo.physical_uri(repo.stat("main", "tables/b/part-0.parquet")).startswith(
            f"s3://{s3_bucket}/lakes/lake/data/"
        )
    with Graveler(
        home=tmp_path / "h2",
        database_url=gv.database_url,
        store_options={"endpoint_url": moto_endpoint},
    ) as fresh:
        # a new process with an empty cache reads the trees back from S3
        assert fresh.repository("lake").get("main", "tables/b/part-0.parquet") == b"B"
