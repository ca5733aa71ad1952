"""Nothing is committed that the driver cannot see, and paths handed to Spark carry their
scheme. (tests/spark_cluster runs the same on workers with disks of their own; these pin the
driver-side checks one by one.)"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime

import pytest
from graveler_spark import NamespaceNotShared, native_write, read_native, write_native
from graveler_spark.commit import commit_job
from graveler_spark.job import WriteJob, WrittenFile, new_job_id
from graveler_spark.options import Target
from graveler_spark.storage import announce, open_source, require_shared
from pyspark.sql import functions as F

from graveler import ClientSettings
from tests.spark.conftest import Lake


def make_job(lake: Lake) -> WriteJob:
    settings = ClientSettings(home=str(lake.gv.home), database_url=lake.gv.database_url)
    namespace = lake.repo.info.storage_namespace
    return WriteJob(new_job_id(), settings, Target("lake", "main", "t"), namespace)


def written(
    lake: Lake, job: WriteJob, name: str, data: bytes, size: int | None = None
) -> WrittenFile:
    address = f"{job.scratch_prefix}{name}"
    lake.repo.store.put(address, data)
    checksum = hashlib.sha256(data).hexdigest()
    return WrittenFile(
        f"t/{name}", address, len(data) if size is None else size, checksum, datetime.now(UTC)
    )


def test_commit_stages_what_the_driver_sees(lake: Lake) -> None:
    job = make_job(lake)
    files = [written(lake, job, "a.parquet", b"a" * 10), written(lake, job, "b.parquet", b"bb")]
    commit_job(job, files)
    assert sorted(e.path for e in lake.repo.iter_objects("main")) == ["t/a.parquet", "t/b.parquet"]


@pytest.mark.parametrize("fault", ["missing", "other size"])
def test_commit_refuses_a_file_the_driver_cannot_see_and_stages_nothing(
    lake: Lake, fault: str
) -> None:
    job = make_job(lake)
    good = written(lake, job, "a.parquet", b"a" * 10)
    if fault == "missing":
        bad = WrittenFile(
            "t/b.parquet", f"{job.scratch_prefix}b.parquet", 7, "0" * 64, datetime.now(UTC)
        )
    else:
        bad = written(lake, job, "b.parquet", b"b" * 7, size=8)
    with pytest.raises(NamespaceNotShared, match=r"1 of 2 file\(s\) the Spark tasks reported"):
        commit_job(job, [good, bad])
    assert list(lake.repo.iter_objects("main")) == []
    assert list(lake.repo.store.list(job.scratch_prefix)) == []  # what it could see, removed


def test_tasks_check_they_see_the_drivers_files_before_writing(lake: Lake) -> None:
    store = lake.repo.store
    with pytest.raises(NamespaceNotShared, match="filesystem that the driver and every"):
        require_shared(store, "data/aa/job/")
    announce(store, "data/aa/job/")
    require_shared(store, "data/aa/job/")
    with pytest.raises(NamespaceNotShared, match="has no such file"):
        open_source(store, "data/aa/job/missing.parquet", 10)


def test_a_write_the_driver_sees_nothing_of_is_an_error(lake: Lake) -> None:
    with pytest.raises(NamespaceNotShared, match="sees no data file"):
        native_write(lake.uri("main", "x"), lambda directory: None, client=lake.gv)
    assert list(lake.repo.iter_objects("main")) == []
    assert list(lake.repo.store.list("data/")) == []


def test_fewer_files_than_the_writer_reported_is_an_error(lake: Lake) -> None:
    def write(directory: str) -> int:
        os.makedirs(directory)
        with open(os.path.join(directory, "part-00000.csv"), "w") as fh:
            fh.write("1\n")
        return 2  # as Spark would report for two tasks, one on a disk the driver lacks

    with pytest.raises(NamespaceNotShared, match=r"wrote 2 data file\(s\) but the driver sees 1"):
        native_write(lake.uri("main", "x"), write, client=lake.gv)
    assert list(lake.repo.iter_objects("main")) == []
    assert list(lake.repo.store.list("data/")) == []


def test_native_paths_ignore_fs_default_fs(spark, lake: Lake) -> None:
    """With fs.defaultFS on a scheme no filesystem serves, a path without its own scheme
    fails; graveler's paths all carry ``file://``."""
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    previous = hadoop.get("fs.defaultFS")
    hadoop.set("fs.defaultFS", "graveler-nofs://nowhere")
    try:
        df = spark.range(100, numPartitions=2).select("id", (F.col("id") % 3).alias("k"))
        entries = write_native(df, lake.uri("main", "native"), client=lake.gv)
        assert len(entries) == 2  # Spark's own count of files, matched by the driver's
        back = read_native(spark, lake.uri("main", "native"), client=lake.gv)
        assert back.agg(F.sum("id")).first()[0] == sum(range(100))
        with pytest.raises(Exception, match="graveler-nofs"):
            spark.read.parquet(lake.repo.store.local_path(entries[0].physical_address)).count()
    finally:
        hadoop.set("fs.defaultFS", previous)
