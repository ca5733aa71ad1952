"""The ``graveler`` CLI as a ``spark-submit`` application (see ``graveler_spark.submit``).

It runs the command line program itself, as ``python -m graveler.cli`` does, with this
script's arguments."""

import runpy

if __name__ == "__main__":
    runpy.run_module("graveler.cli", run_name="__main__", alter_sys=True)
