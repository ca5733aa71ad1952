"""Options of the ``graveler`` data source and how they reach a :class:`graveler.Graveler`.

Spark hands a data source its options as a case-insensitive map of strings. Recognised here:

=====================  ===============================================================
``path``               the ``graveler://repo/ref/prefix`` URI (``load()`` / ``save()``)
``database_url``       refs database URL (else ``GRAVELER_DATABASE_URL``, else SQLite in home)
``home``               graveler home directory (else ``GRAVELER_HOME``, else ``./.graveler``)
``store.<name>``       object store option, e.g. ``store.endpoint_url`` for S3
(any other key)        of :mod:`graveler.config`, read by ``ClientSettings.from_mapping``
=====================  ===============================================================

The data source's planning, ``commit()`` and ``abort()`` run in Python processes that Spark
starts for the driver, not in the user's interpreter: settings reach them only through these
options, defaults bound by :func:`graveler_spark.register` (which include Spark's S3A keys),
or the environment the Spark driver was started with. :mod:`graveler_spark.settings` says
which wins and how the result reaches the executors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graveler import uri as uris
from graveler.errors import InvalidArgument, InvalidURI

#: The name of the data source: ``spark.read.format("graveler")``.
FORMAT_NAME = "graveler"


@dataclass(frozen=True)
class Target:
    """A parsed ``graveler://repo/ref/path`` data source path."""

    repository: str
    ref: str
    path: str  # "" for the whole ref; never starts or ends with "/"

    @property
    def uri(self) -> str:
        return str(uris.GravelerURI(self.repository, self.ref, self.path or None))

    def key(self, name: str) -> str:
        """The object path of ``name`` under this target's prefix."""
        return f"{self.path}/{name}" if self.path else name


def parse_target(options: Mapping[str, str]) -> Target:
    """The ``path`` option as a Target; raises InvalidURI when absent or malformed."""
    raw = options.get("path")
    if not raw:
        raise InvalidURI(
            "the graveler data source needs a path: .load('graveler://REPO/REF/PREFIX') or "
            ".save('graveler://REPO/BRANCH/PREFIX')"
        )
    parsed = uris.require(raw, ref=True)
    assert parsed.ref is not None
    path = (parsed.path or "").strip("/")
    if "//" in path:
        raise InvalidURI(f"{raw!r} has an empty path component")
    return Target(parsed.repository, parsed.ref, path)


def flag(options: Mapping[str, str], name: str, default: bool) -> bool:
    """A boolean option (true/false, case-insensitive); raises InvalidArgument otherwise."""
    raw = options.get(name)
    if raw is None:
        return default
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise InvalidArgument(f"option {name!r} must be true or false, got {raw!r}")


def integer(options: Mapping[str, str], name: str, default: int, minimum: int = 0) -> int:
    """A non-negative integer option; raises InvalidArgument otherwise."""
    raw = options.get(name)
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise InvalidArgument(f"option {name!r} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise InvalidArgument(f"option {name!r} must be >= {minimum}, got {value}")
    return value


def delimiter(options: Mapping[str, str]) -> str:
    """The CSV separator of option ``delimiter`` (or Spark's ``sep``), default ``,``; raises
    InvalidArgument unless it is one character."""
    found = options.get("delimiter") or options.get("sep") or ","
    if len(found) != 1:
        raise InvalidArgument(f"option 'delimiter' must be one character, got {found!r}")
    return found
