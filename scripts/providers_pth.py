"""Put this checkout's ``providers/`` directory on ``sys.path`` of the running environment,
with a ``.pth`` file in its site-packages (run by ``make venv`` after ``pip install -e``).

PySpark finds Python data sources by listing the modules on ``sys.path`` (``pkgutil``) and
registering every ``pyspark_*`` module's ``DefaultSource``. setuptools' editable install
imports our packages through a meta path finder that such a listing cannot see, so without
this ``format("graveler")`` would need ``graveler_spark.register(spark)``. A regular
(non-editable) install needs nothing: ``pyspark_graveler`` lands in site-packages.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

NAME = "graveler-providers.pth"


def main() -> int:
    providers = Path(__file__).resolve().parents[1] / "providers"
    target = Path(sysconfig.get_paths()["purelib"]) / NAME
    target.write_text(f"{providers}\n")
    print(f"{target} -> {providers}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
