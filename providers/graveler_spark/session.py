"""One way to get a Spark session that can run graveler's Spark code.

    spark = graveler_spark.spark_session()                     # spark-submit's master, or local[*]
    spark = graveler_spark.spark_session("spark://head:7077")  # a standalone cluster
    spark = graveler_spark.spark_session("local[2]", config={"spark.ui.enabled": "false"})

What it does, and why each part is needed:

* The master is the one given, else Spark's own ``spark.master`` (``spark-submit --master``,
  ``spark-defaults.conf``), else ``local[*]``.
* Spark's Python workers must import graveler and pyarrow: unless ``PYSPARK_PYTHON`` (or
  ``spark.pyspark.python``) says otherwise, they run ``python`` (default: this interpreter).
  On a cluster that path must exist on every worker host (a virtualenv or conda environment
  installed at the same place everywhere), or set ``PYSPARK_PYTHON`` to the one that does.
* ``pythonpath`` entries are put first on the Python path of the driver and its workers (a
  source checkout; an installed package needs none).
* Unless ``register=False``, the ``graveler`` format is registered with
  :func:`graveler_spark.register`, so the data source sees the session's S3A keys.
* If a session is already active it is returned as it is (Spark allows one per process)
  unless ``fresh=True``, which stops it first. Settings of a JVM that is already running
  (``PYSPARK_PYTHON``, ``pythonpath``, driver memory) cannot change any more.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_CONFIG: Mapping[str, str] = {"spark.ui.showConsoleProgress": "false"}


def spark_session(
    master: str | None = None,
    *,
    app_name: str = "graveler",
    config: Mapping[str, str] | None = None,
    python: str | None = None,
    pythonpath: Sequence[str] = (),
    register: bool = True,
    fresh: bool = False,
    log_level: str | None = None,
) -> SparkSession:
    """The active Spark session, or a new one set up to run graveler (module docstring).
    ``config`` entries are set on the builder (over :data:`DEFAULT_CONFIG`); ``log_level``
    (e.g. ``"ERROR"``) is applied to the session's context."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and fresh:
        active.stop()
        active = None
    if active is None:
        _prepare_environment(python, pythonpath)
        session = _new_session(master, app_name, config)
    else:
        session = active
    if log_level:
        session.sparkContext.setLogLevel(log_level)
    if register and active is None:
        from graveler_spark.registration import register as register_format

        register_format(session)
    return session


def _new_session(
    master: str | None, app_name: str, config: Mapping[str, str] | None
) -> SparkSession:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    builder = builder.master(master or _configured_master())
    for key, value in {**DEFAULT_CONFIG, **dict(config or {})}.items():
        builder = builder.config(key, value)
    session: SparkSession = builder.getOrCreate()
    return session


def _configured_master() -> str:
    """Spark's own ``spark.master`` (from ``spark-submit --master``, ``spark-defaults.conf``
    or ``PYSPARK_SUBMIT_ARGS``), else ``local[*]``."""
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # starts (or, under spark-submit, joins) the JVM
    return SparkConf().get("spark.master", None) or "local[*]"


def _prepare_environment(python: str | None, pythonpath: Sequence[str]) -> None:
    """What the JVM and the Python workers it starts inherit: set before it starts."""
    os.environ.setdefault("PYSPARK_PYTHON", python or sys.executable)
    if pythonpath:
        entries = [str(p) for p in pythonpath]
        sys.path[:0] = [p for p in entries if p not in sys.path]
        rest = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(entries + ([rest] if rest else []))
