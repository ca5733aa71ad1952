"""Paths of the filesystem: ``REPO/REF/KEY`` once the protocol is stripped.

``graveler://lake/main~1/tables/t.parquet`` is repository ``lake``, ref ``main~1`` and key
``tables/t.parquet``. The ref is exactly one path segment (a branch, a tag, a commit ID or
prefix, optionally followed by ``~N`` / ``^N``), as in :mod:`graveler.uri`; branches whose
names contain ``/`` are therefore not addressable through paths. Keys are the engine's object
paths; the filesystem treats ``/`` inside keys as a directory separator.
"""

from __future__ import annotations

from dataclasses import dataclass

from graveler import GravelerURI
from graveler.errors import InvalidURI

PROTOCOLS = ("graveler", "lakefs")


@dataclass(frozen=True, slots=True)
class GravelerPath:
    """A parsed path; ``ref`` and ``key`` are empty at the levels above them."""

    repository: str = ""
    ref: str = ""
    key: str = ""

    @property
    def level(self) -> str:
        """``"root"``, ``"repository"``, ``"ref"`` (the root of a ref) or ``"key"``."""
        if not self.repository:
            return "root"
        if not self.ref:
            return "repository"
        return "key" if self.key else "ref"

    @property
    def dir_prefix(self) -> str:
        """The key prefix of the children of this path (``a/b`` -> ``a/b/``)."""
        return self.key + "/" if self.key else ""

    def join(self, key: str) -> str:
        """The filesystem path of ``key`` in this path's repository and ref."""
        return f"{self.repository}/{self.ref}/{key}" if key else self.ref_root

    @property
    def ref_root(self) -> str:
        return f"{self.repository}/{self.ref}"

    def __str__(self) -> str:
        return "/".join(p for p in (self.repository, self.ref, self.key) if p)


def strip_protocol(path: str) -> str:
    """``graveler://a/b/`` or ``lakefs://a/b`` -> ``a/b`` (no leading or trailing slash)."""
    for proto in PROTOCOLS:
        for sep in ("://", "::"):
            if path.startswith(proto + sep):
                path = path[len(proto) + len(sep) :]
                break
    return path.strip("/")


def parse_path(path: str) -> GravelerPath:
    """Split a stripped path into repository, ref and key."""
    if not isinstance(path, str):
        raise InvalidURI(f"expected a graveler path, got {path!r}")
    stripped = strip_protocol(path)
    if not stripped:
        return GravelerPath()
    uri = GravelerURI.parse(f"graveler://{stripped}")
    return GravelerPath(uri.repository, uri.ref or "", uri.path or "")


def require_key(path: GravelerPath, raw: str) -> GravelerPath:
    """Insist that ``path`` names an object (``REPO/REF/KEY``)."""
    if path.level != "key":
        raise InvalidURI(f"{raw!r} does not name an object: use graveler://REPOSITORY/REF/PATH")
    return path
