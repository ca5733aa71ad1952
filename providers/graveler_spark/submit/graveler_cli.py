"""The ``graveler`` CLI as a ``spark-submit`` application (see ``graveler_spark.submit``)."""

import sys

from graveler.cli.app import main

if __name__ == "__main__":
    sys.exit(main())
