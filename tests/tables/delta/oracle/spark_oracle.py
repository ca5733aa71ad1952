"""delta-spark as the oracle: a process of its own, in the environment `make delta-spark-env`
builds (pyspark 4.2.1 with delta-spark 4.4.0 from Maven Central; delta-spark has no build
for the pyspark 4.3.0 the project pins, see docs/delta.md). It imports nothing of graveler.

It reads one JSON command a line on stdin and answers one JSON line on stdout:

* ``{"cmd": "run", "path", "steps"}``: the ``steps`` run one after the other on the table
  (``create`` makes it);
* ``{"cmd": "concurrent", "path", "first", "second", "capture"}``: two transactions that
  read the same version, ``second`` held at its commit until ``first`` committed (a
  LogStore that blocks the held thread's commit write: GateLogStore.java); answers
  delta-spark's outcome (``ok`` or the exception name) and the rows after. ``capture``
  names two directories that receive each transaction's own table (the base, its files and
  its commit as the next version): what a branch per transaction holds;
* ``{"cmd": "read", "path", "version"?, "columns"?}``: the rows, at a version
  (``versionAsOf``);
* ``{"cmd": "hadoop", "conf"}``: Hadoop settings (``fs.s3a.bucket.lake.endpoint``...), for
  tables at ``s3a://`` paths (the S3 gateway).

Usage: spark_oracle.py JARS_COLON_SEPARATED
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
KINDS = re.compile(r"(Concurrent\w+Exception|MetadataChangedException|ProtocolChangedException)")


def gate_jar(jars: list[str], workdir: Path) -> str:
    """GateLogStore compiled against this pyspark's Hadoop and the delta-storage jar."""
    import pyspark

    spark_jars = Path(pyspark.__file__).parent / "jars"
    classes = workdir / "classes"
    classpath = os.pathsep.join([f"{spark_jars}/*", *jars])
    subprocess.run(
        ["javac", "-nowarn", "-d", str(classes), "-cp", classpath, str(HERE / "GateLogStore.java")],
        check=True,
    )
    jar = workdir / "gate.jar"
    subprocess.run(["jar", "cf", str(jar), "-C", str(classes), "."], check=True)
    return str(jar)


def session(jars: list[str]) -> Any:
    from pyspark.sql import SparkSession

    workdir = Path(tempfile.mkdtemp(prefix="delta-oracle-"))
    conf = {
        "spark.jars": ",".join([*jars, gate_jar(jars, workdir)]),
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        # local tables only: s3a:// keeps Delta's own S3 log store (one driver)
        "spark.delta.logStore.file.impl": "io.graveler.oracle.GateLogStore",
        # the held commit must not hold the table's lock while the other one commits
        "spark.databricks.delta.commitLock.enabled": "false",
        "spark.databricks.delta.snapshotPartitions": "1",
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.shuffle.partitions": "1",
        "spark.default.parallelism": "1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": "1g",
        "spark.sql.warehouse.dir": str(workdir / "warehouse"),
    }
    builder = SparkSession.builder.master("local[1]").appName("delta-oracle")
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    return spark


class Oracle:
    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.gate = spark._jvm.io.graveler.oracle.GateLogStore

    def frame(self, rows: list[list[Any]]) -> Any:
        if rows and len(rows[0]) == 3:
            return self.spark.createDataFrame(rows, "id long, part string, x double")
        return self.spark.createDataFrame(rows, "id long, part string")

    def run(self, path: str, step: dict[str, Any]) -> None:
        """One operation on the table at ``path`` (the specs of tests/tables/delta/ops.py)."""
        op, table = step["op"], f"delta.`{path}`"
        writer = None
        if op in ("create", "append", "overwrite", "evolve", "batch"):
            writer = self.frame(step["rows"]).write.format("delta")
        if op == "create":
            props = step.get("properties") or {}
            for key, value in props.items():
                writer = writer.option(key, value)
            writer.partitionBy("part").save(path)
        elif op == "sql":
            self.spark.sql(step["sql"].replace("{table}", table))
        elif op == "append":
            writer.mode("append").save(path)
        elif op == "overwrite":
            writer.mode("overwrite").save(path)
        elif op == "evolve":
            writer.mode("append").option("mergeSchema", "true").save(path)
        elif op == "batch":
            writer.mode("append").option("txnAppId", step["app"]).option(
                "txnVersion", str(step["batch"])
            ).save(path)
        elif op == "delete":
            self.spark.sql(f"DELETE FROM {table} WHERE {step['where']}")
        elif op == "update":
            sets = ", ".join(f"{k} = {v}" for k, v in step["set"].items())
            self.spark.sql(f"UPDATE {table} SET {sets} WHERE {step['where']}")
        elif op == "merge":
            self.frame(step["rows"]).createOrReplaceTempView("oracle_source")
            self.spark.sql(
                f"MERGE INTO {table} t USING oracle_source s ON {step['on']} "
                "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
            )
        elif op == "optimize":
            self.spark.sql(f"OPTIMIZE {table}")
        else:
            raise ValueError(f"unknown operation {op!r}")

    def rows(
        self, path: str, version: int | None = None, columns: list[str] | None = None
    ) -> list[list[Any]]:
        reader = self.spark.read.format("delta")
        if version is not None:
            reader = reader.option("versionAsOf", version)
        frame = reader.load(path)
        if columns:
            frame = frame.selectExpr(*columns)
        cols = sorted(frame.columns)
        return sorted([[r[c] for c in cols] for r in frame.collect()], key=repr)

    def concurrent(self, cmd: dict[str, Any]) -> dict[str, Any]:
        path = cmd["path"]
        log = Path(path, "_delta_log")
        base_files = set(_files(path))
        base_version = max(int(p.stem) for p in log.glob("*.json"))
        capture = cmd["capture"]
        out: dict[str, str] = {}

        def second() -> None:
            try:
                self.run(path, cmd["second"])
                out["outcome"] = "ok"
            except Exception as e:  # py4j wraps Delta's exception
                found = KINDS.search(str(e))
                out["outcome"] = found.group(1).removesuffix("Exception") if found else str(e)

        held = Path(tempfile.mkdtemp()) / "held.json"
        self.gate.arm(str(held))
        thread = threading.Thread(target=second)
        thread.start()
        while not self.gate.isHolding():
            if not thread.is_alive():
                self.gate.release()
                return {"error": f"the second transaction did not commit: {out}"}
            time.sleep(0.02)
        second_new = set(_files(path)) - base_files
        _copy(path, capture["second"], base_files | second_new)
        shutil.copy(held, Path(capture["second"], "_delta_log", f"{base_version + 1:020d}.json"))
        try:
            self.run(path, cmd["first"])
        finally:
            first_files = set(_files(path)) - second_new
            _copy(path, capture["first"], first_files)
            self.gate.release()
            thread.join()
        return {"outcome": out["outcome"], "rows": self.rows(path)}


def _files(root: str) -> list[str]:
    found = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            if not name.startswith("."):
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return found


def _copy(root: str, target: str, files: set[str]) -> None:
    for rel in files:
        dest = Path(target, rel)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(root, rel), dest)


def main() -> None:
    jars = sys.argv[1].split(os.pathsep)
    oracle = Oracle(session(jars))
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            if cmd["cmd"] == "run":
                for step in cmd["steps"]:
                    oracle.run(cmd["path"], step)
                answer: dict[str, Any] = {"ok": True}
            elif cmd["cmd"] == "concurrent":
                answer = oracle.concurrent(cmd)
            elif cmd["cmd"] == "hadoop":
                conf = oracle.spark.sparkContext._jsc.hadoopConfiguration()
                for key, value in cmd["conf"].items():
                    conf.set(key, value)
                answer = {"ok": True}
            elif cmd["cmd"] == "read":
                rows = oracle.rows(cmd["path"], cmd.get("version"), cmd.get("columns"))
                answer = {"rows": rows}
            else:
                answer = {"error": f"unknown command {cmd['cmd']!r}"}
        except Exception as e:
            answer = {"error": str(e).splitlines()[0][:2000] if str(e) else repr(e)}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
