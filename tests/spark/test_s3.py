"""The data source and Spark GC on an S3 namespace (a moto server on 127.0.0.1): executors
upload with ``put`` and read Parquet through ranged GETs; store options travel as
``store.*`` options."""

from __future__ import annotations

from datetime import timedelta

import pytest
from graveler_spark import collect_garbage_spark, write_native
from pyspark.sql import functions as F

from graveler.client import Graveler
from graveler.maintenance.gc import RetentionRules, collect_garbage


@pytest.fixture
def s3_options(moto_endpoint: str, aws_env: None) -> dict[str, str]:
    """Store options for the shared loopback moto server (executors get them explicitly)."""
    return {
        "endpoint_url": moto_endpoint,
        "region": "us-east-1",
        "access_key_id": "testing",
        "secret_access_key": "testing",
    }


def test_write_read_and_collect_on_s3(spark, tmp_path, s3_options, s3_bucket) -> None:
    bucket = s3_bucket
    with Graveler(tmp_path / "home", store_options=s3_options) as gv:
        repo = gv.create_repository("lake", f"s3://{bucket}/ns")
        opts = {"home": str(gv.home), "database_url": gv.database_url}
        opts.update({f"store.{k}": v for k, v in s3_options.items()})
        df = spark.range(10_000, numPartitions=2).select("id", (F.col("id") % 3).alias("k"))
        for round_ in ("first", "second"):
            df.write.format("graveler").options(**opts).option(
                "max_records_per_file", "2000"
            ).option("commit_message", round_).mode("overwrite").save("graveler://lake/main/t")
        files = [e for e in repo.iter_objects("main", "t/") if "/part-" in e.path]  # no marker
        assert len(files) == 6  # 5,000 rows per task in files of at most 2,000 rows
        back = spark.read.format("graveler").options(**opts).option("split_bytes", "1")
        back = back.load("graveler://lake/main/t")
        assert back.agg(F.count("*"), F.sum("id")).first() == (10_000, sum(range(10_000)))

        later = next(repo.log("main")).creation_date + timedelta(days=30)
        rules = RetentionRules(default_days=1)
        local = collect_garbage(repo, rules, grace=timedelta(hours=1), now=later, dry_run=True)
        on_spark = collect_garbage_spark(spark, repo, rules, grace=timedelta(hours=1), now=later)
        assert {o.key for o in on_spark.selected} == {o.key for o in local.selected}
        assert len(on_spark.selected) == 7  # the first round's 6 files and its table marker
        assert all(repo.store.exists(f.physical_address) for f in files)
        assert not any(repo.store.exists(o.key) for o in on_spark.selected)
        with pytest.raises(Exception, match="need a local storage namespace"):
            write_native(df, "graveler://lake/main/native", format="csv", client=gv)
