"""A spark-submit driver writing and reading Parquet through ``s3a://`` against ``graveler
serve`` on the cluster. The endpoint and the access key reach the driver through its
environment only; the Hadoop configuration carries them to the executors, as any s3a job
does. Usage: ``s3a_job.py CONFIG_JSON``; prints one ``RESULT {json}`` line."""

from __future__ import annotations

import json
import os
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    cfg = json.loads(sys.argv[1])
    spark = SparkSession.builder.appName("graveler-s3a").getOrCreate()
    conf = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[attr-defined]
    settings = {
        "fs.s3a.endpoint": os.environ["GRAVELER_S3_URL"],
        "fs.s3a.endpoint.region": "us-east-1",
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.access.key": os.environ["AWS_ACCESS_KEY_ID"],
        "fs.s3a.secret.key": os.environ["AWS_SECRET_ACCESS_KEY"],
        "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    }
    for name, value in settings.items():
        conf.set(name, value)
    target = f"s3a://{cfg['bucket']}/{cfg['branch']}/events"
    rows = spark.range(0, cfg["rows"], numPartitions=8).select("id", (F.col("id") % 7).alias("k"))
    rows.write.mode("overwrite").partitionBy("k").parquet(target)
    back = spark.read.parquet(target)
    total = back.agg(F.count("*"), F.sum("id")).first()
    assert total is not None
    print("RESULT " + json.dumps({"count": total[0], "sum": total[1]}), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
