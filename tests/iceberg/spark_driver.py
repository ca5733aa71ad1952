"""A Spark driver for the Iceberg suites, run in its own environment (``make
iceberg-spark``: pyspark 4.1, which Iceberg's newest Spark runtime supports; the project's
pinned pyspark 4.3 cannot load it). Not imported by the tests: ``tests/iceberg/spark.py``
starts it as a process and talks to it in JSON lines.

    argv[1]: a JSON object of Spark settings
    stdin:   {"sql": "..."} | {"exec": "python code using spark, F; may set result"}
    stdout:  one reply per request, after the marker: {"rows": [...]} | {"result": ...}
             | {"error": {"classes": [...], "message": "..."}}

Everything Spark or py4j prints goes to stderr.
"""

from __future__ import annotations

import json
import sys
from typing import Any

MARKER = "@@spark-driver@@ "


def _classes(exc: BaseException) -> list[str]:
    """The Java exception classes of a failure (the whole cause chain), else the Python one."""
    found = [type(exc).__name__]
    java = getattr(exc, "java_exception", None)
    while java is not None:
        found.append(str(java.getClass().getName()))
        java = java.getCause()
    return found


def _reply(out: Any, doc: dict[str, Any]) -> None:
    out.write(MARKER + json.dumps(doc, default=str) + "\n")
    out.flush()


def main() -> None:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    settings = json.loads(sys.argv[1])
    out, sys.stdout = sys.stdout, sys.stderr
    builder = SparkSession.builder.master(settings.pop("master", "local[1]"))
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    _reply(out, {"ready": True})
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if "sql" in request:
                rows = [r.asDict(recursive=True) for r in spark.sql(request["sql"]).collect()]
                _reply(out, {"rows": rows})
            else:
                scope: dict[str, Any] = {"spark": spark, "F": F}
                exec(request["exec"], scope)
                _reply(out, {"result": scope.get("result")})
        except Exception as exc:
            _reply(out, {"error": {"classes": _classes(exc), "message": str(exc)[:4000]}})
    spark.stop()


if __name__ == "__main__":
    main()
