"""A file ``spark-submit`` can run: the ``graveler`` CLI as a Spark application.

``spark-submit`` needs a ``.py`` file, not a module or a console script, so this package
ships one and tells where it is::

    spark-submit --master spark://head:7077 "$(python -m graveler_spark.submit)" \\
        gc --spark graveler://lake --retention-days 21

The arguments after the file are those of ``graveler`` (global options first); ``gc --spark``
then runs on the master ``spark-submit`` chose. Nothing beside the file shadows another module:
Python puts that directory first on the path of the script it runs.
"""

from __future__ import annotations

from pathlib import Path

#: The script to hand ``spark-submit``.
CLI_SCRIPT = str(Path(__file__).resolve().parent / "graveler_cli.py")
