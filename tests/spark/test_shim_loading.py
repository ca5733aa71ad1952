"""``graveler_spark.register(spark)`` on a running session that was built without the JVM
shim: it loads the shim the package ships, so ``.partitionBy()`` works; where it cannot (here:
the jar made to look unbuilt), a ``.partitionBy()`` write fails with graveler's message naming
the fix instead of Spark's, and ``.option("partitionBy", ...)`` still works.

One child process (its own JVM: the suite's shared session has the shim on its class path from
the start) runs both cases, the unloadable one first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import json, sys
    from pyspark.sql import SparkSession
    from graveler import Graveler
    from graveler.core.errors import InvalidArgument
    import graveler_spark
    from graveler_spark import shim

    tmp = sys.argv[1]
    url = f"sqlite:///{tmp}/refs.db"
    opts = {"home": f"{tmp}/home", "database_url": url}
    with Graveler(**opts) as gv:
        gv.create_repository("lake", f"file://{tmp}/ns")
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.range(4).selectExpr("id", "id % 2 AS k")
    out = {"before": shim.shim_loaded(spark)}

    shipped = shim.shim_jar
    shim.shim_jar = lambda: None  # as if the package had been built without the jar
    graveler_spark.register(spark, **opts)
    out["unbuilt_loaded"] = shim.shim_loaded(spark)
    try:
        df.write.format("graveler").partitionBy("k").mode("append").save(
            "graveler://lake/main/refused")
    except InvalidArgument as exc:
        out["error"] = str(exc)
        out["cause"] = str(exc.__cause__)
    df.write.format("graveler").option("partitionBy", "k").mode("append").save(
        "graveler://lake/main/by_option")

    shim.shim_jar = shipped
    graveler_spark.register(spark, **opts)
    out["loaded"] = shim.shim_loaded(spark)
    df.write.format("graveler").partitionBy("k").mode("append").save("graveler://lake/main/w")
    with Graveler(**opts) as gv:
        repo = gv.repository("lake")
        out["dirs"] = {p: sorted({e.path.split("/")[1] for e in repo.iter_objects("main", p)})
                       for p in ("w/", "by_option/", "refused/")}
    print(json.dumps(out))
    spark.stop()
    """
)


def test_register_loads_the_shim_or_names_the_fix(tmp_path: Path) -> None:
    env = dict(os.environ)
    path = [str(ROOT), str(ROOT / "providers")]
    env["PYTHONPATH"] = os.pathsep.join([*path, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYSPARK_PYTHON"] = sys.executable
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["before"] is False and out["unbuilt_loaded"] is False
    assert "needs the graveler JVM shim" in out["error"]
    assert "make shim" in out["error"] and ".option('partitionBy'" in out["error"]
    assert "do not match" in out["cause"]  # Spark's own error, chained
    assert out["loaded"] is True
    assert out["dirs"] == {"w/": ["k=0", "k=1"], "by_option/": ["k=0", "k=1"], "refused/": []}
