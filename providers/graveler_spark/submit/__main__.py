"""``python -m graveler_spark.submit``: print the path of the ``spark-submit`` script."""

from graveler_spark.submit import CLI_SCRIPT

print(CLI_SCRIPT)
