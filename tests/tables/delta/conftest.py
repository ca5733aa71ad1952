"""Fixtures of the Delta Lake suite: the delta-spark oracle (one Spark session in its own
process for the whole run, see oracle/spark_oracle.py) and helpers around it."""

from __future__ import annotations

import json
import os
import select
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.jars import jar_paths

TOP = Path(__file__).resolve().parents[3]
SIDE_PYTHON = TOP / ".venv-delta-spark" / "bin" / "python"
SCRIPT = Path(__file__).resolve().parent / "oracle" / "spark_oracle.py"
START_SECONDS = 180
#: delta-spark, and s3a:// for tables behind the S3 gateway (scripts/jars.txt)
JARS = (
    "delta-spark_2.13",
    "delta-storage",
    "hadoop-aws",
    "bundle",
    "analyticsaccelerator-s3",
)
ANSWER_SECONDS = 300


class SparkOracle:
    """The delta-spark process: :meth:`ask` sends one command and waits for its answer."""

    def __init__(self, log: Path) -> None:
        if not SIDE_PYTHON.exists():
            raise FileNotFoundError(
                f"{SIDE_PYTHON} is missing: run 'make delta-spark-env' (make test does)"
            )
        jars = os.pathsep.join(jar_paths(*JARS))
        self.log = log
        self._stderr = log.open("w")
        self.proc = subprocess.Popen(
            [str(SIDE_PYTHON), str(SCRIPT), jars],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env={**os.environ, "PYSPARK_PYTHON": str(SIDE_PYTHON), "SPARK_LOCAL_IP": "127.0.0.1"},
        )
        ready = self._answer(START_SECONDS)
        assert ready.get("ready"), ready

    def ask(self, **cmd: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        answer = self._answer(ANSWER_SECONDS)
        if "error" in answer:
            raise AssertionError(f"delta-spark oracle: {answer['error']} (log: {self.log})")
        return answer

    def _answer(self, timeout: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError(f"delta-spark oracle did not answer in {timeout} s ({self.log})")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"delta-spark oracle exited (see {self.log})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()


@pytest.fixture(scope="session")
def spark_oracle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkOracle]:
    log = tmp_path_factory.mktemp("delta-oracle") / "spark.log"
    oracle = SparkOracle(log)
    try:
        yield oracle
    finally:
        oracle.close()
