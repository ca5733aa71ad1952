"""Spark with Iceberg's runtime for the Iceberg suites, in its own process and environment.

Iceberg's newest Spark runtime on Maven Central (iceberg-spark-runtime-4.1_2.13 1.12.0) is
built for Spark 4.1 and cannot be loaded by the project's pinned pyspark 4.3.0 (its
SparkCatalog implements ``org.apache.spark.sql.connector.catalog.View``, an interface in
Spark 4.1 and a class in 4.3: ``IncompatibleClassChangeError`` when the catalog loads). So
``make iceberg-spark`` builds ``.venv-iceberg-spark`` with pyspark 4.1.4, and
:class:`SparkDriver` runs ``spark_driver.py`` there, one JSON line per request.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

from tests.jars import jar_paths

TOP = Path(__file__).resolve().parents[2]
SPARK_PYTHON = TOP / ".venv-iceberg-spark" / "bin" / "python"
DRIVER = Path(__file__).with_name("spark_driver.py")
MARKER = "@@spark-driver@@ "
RUNTIME = "iceberg-spark-runtime-4.1_2.13"


class SparkFailure(Exception):
    """A statement failed in Spark; ``classes`` is the Java cause chain."""

    def __init__(self, classes: list[str], message: str) -> None:
        super().__init__(f"{classes}: {message[:1500]}")
        self.classes = classes
        self.message = message

    def caused_by(self, name: str) -> bool:
        return any(c.rsplit(".", 1)[-1] == name for c in self.classes)


def rest_catalog(name: str, uri: str, key: Any, *, cached: bool = False) -> dict[str, str]:
    """Spark settings for a catalog ``name`` on graveler's REST catalog. ``cached`` keeps
    loaded tables (and their snapshots) until refreshed: a second catalog on the same
    tables then commits from a stale base, as a concurrent writer does."""
    prefix = f"spark.sql.catalog.{name}"
    settings = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "rest",
        f"{prefix}.uri": uri,
        f"{prefix}.oauth2-server-uri": uri + "/v1/oauth/tokens",
        f"{prefix}.warehouse": "lake",
        f"{prefix}.credential": f"{key.access_key_id}:{key.secret_access_key}",
        f"{prefix}.cache-enabled": "true" if cached else "false",
    }
    if cached:
        settings[f"{prefix}.cache.expiration-interval-ms"] = "-1"
    return settings


class SparkDriver:
    """A Spark session in the Iceberg Spark environment (see the module docstring)."""

    def __init__(
        self,
        settings: dict[str, str],
        timeout: float = 180.0,
        *,
        python: Path = SPARK_PYTHON,
        iceberg: bool = True,
    ) -> None:
        """``python``: the environment the driver runs in; ``iceberg=False`` leaves Iceberg's
        runtime and extensions out (other suites reuse the driver, tests/lakefs_clients)."""
        if not python.exists():
            raise FileNotFoundError(f"{python} is missing (make iceberg-spark, make venv)")
        base = {
            **(
                {
                    "spark.jars": ",".join(jar_paths(RUNTIME)),
                    "spark.sql.extensions": (
                        "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
                    ),
                }
                if iceberg
                else {}
            ),
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "1",
            "spark.default.parallelism": "1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.host": "127.0.0.1",
        }
        self.process = subprocess.Popen(
            [str(python), str(DRIVER), json.dumps({**base, **settings})],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self._replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._reply(timeout)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith(MARKER):
                self._replies.put(json.loads(line[len(MARKER) :]))
        self._replies.put(None)

    def _reply(self, timeout: float) -> dict[str, Any]:
        try:
            reply = self._replies.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"the Spark driver did not answer in {timeout:.0f} s") from None
        if reply is None:
            raise RuntimeError("the Spark driver exited")
        if "error" in reply:
            raise SparkFailure(reply["error"]["classes"], reply["error"]["message"])
        return reply

    def _ask(self, request: dict[str, str], timeout: float) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self._reply(timeout)

    def sql(self, text: str, timeout: float = 300.0) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self._ask({"sql": text}, timeout)["rows"]
        return rows

    def run(self, code: str, timeout: float = 300.0) -> Any:
        """Python in the driver (``spark`` and ``F`` in scope; set ``result``)."""
        return self._ask({"exec": code}, timeout)["result"]

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
