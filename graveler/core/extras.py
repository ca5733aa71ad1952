"""Optional extras: the libraries each integration needs, checked when it is imported.

``pip install graveler`` installs the integration packages (``graveler_airflow``,
``graveler_dagster``, ``graveler_spark``, ``graveler_fsspec``) but not the libraries they plug
into. Each of them calls :func:`require_extra` first thing on import, so a missing library
reports the extra that installs it::

    ModuleNotFoundError: graveler_dagster needs 'dagster', which is not installed:
    pip install 'graveler[dagster]'

Nothing here imports those libraries: presence is checked with ``importlib.util.find_spec``.
"""

from __future__ import annotations

import importlib.util
import sys

#: Each integration extra and the top-level modules it installs that its package needs.
EXTRAS: dict[str, tuple[str, ...]] = {
    "airflow": ("airflow",),
    "dagster": ("dagster",),
    "spark": ("pyspark", "pyarrow"),
    "fsspec": ("fsspec",),
}


def is_installed(module: str) -> bool:
    """Whether the top-level ``module`` can be imported (without importing it).

    A module already imported counts as installed; one blocked with ``sys.modules[name] =
    None``, or whose finders raise ``ImportError``, does not."""
    if sys.modules.get(module) is not None:
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require_extra(extra: str, *, package: str) -> None:
    """Return if every module of ``extra`` is installed; else raise ``ModuleNotFoundError``
    (an ``ImportError``) naming ``package``, the missing module (also as ``.name``) and the
    command that installs it. ``extra`` must be a key of :data:`EXTRAS`."""
    missing = [m for m in EXTRAS[extra] if not is_installed(m)]
    if missing:
        names = " and ".join(repr(m) for m in missing)
        verb = "is" if len(missing) == 1 else "are"
        raise ModuleNotFoundError(
            f"{package} needs {names}, which {verb} not installed: pip install 'graveler[{extra}]'",
            name=missing[0],
        )
