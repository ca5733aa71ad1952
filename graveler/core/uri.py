"""``graveler://REPOSITORY/REF/PATH`` URIs: the one place they are parsed and formatted.

``lakefs://`` is accepted as an alias on input; output always uses ``graveler://``. The ref is
exactly one path segment (a branch, a tag, a commit ID or prefix, optionally followed by
``~N`` / ``^N``), so a ref never contains ``/``. The path is an object key or a key prefix.

Every adapter (CLI, fsspec, Spark, Airflow assets, Dagster metadata) builds and reads URIs
through :class:`GravelerURI`, so one repository, ref and path always print the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from graveler.core import validate
from graveler.core.errors import InvalidName, InvalidURI

SCHEME = "graveler"
SCHEMES = ("graveler://", "lakefs://")


@dataclass(frozen=True, slots=True)
class GravelerURI:
    """A repository, optionally a ref in it, optionally a path under that ref.

    Constructing one checks the parts: the repository name must be valid, the ref must be one
    non-empty segment, and a path needs a ref. Raises InvalidURI."""

    repository: str
    ref: str | None = None
    path: str | None = None

    def __post_init__(self) -> None:
        try:
            validate.repository_name(self.repository)
        except InvalidName as exc:
            raise InvalidURI(str(exc)) from None
        if self.ref is not None and (
            not self.ref or "/" in self.ref or self.ref != self.ref.strip()
        ):
            raise InvalidURI(f"ref {self.ref!r} must be one non-empty segment without '/'")
        if self.path is not None and self.ref is None:
            raise InvalidURI("a graveler URI with a path needs a ref: graveler://REPO/REF/PATH")

    @classmethod
    def parse(cls, text: str, *, ref: bool = False, path: bool = False) -> GravelerURI:
        """Parse ``graveler://REPO[/REF[/PATH]]`` (or ``lakefs://``); ``ref`` / ``path``
        insist on those parts. An empty path (``graveler://r/main/``) counts as absent."""
        if not isinstance(text, str):
            raise InvalidURI(f"expected a graveler:// URI, got {text!r}")
        rest = _strip_scheme(text)
        repository, _, rest = rest.partition("/")
        if not repository:
            raise InvalidURI(f"{text!r} names no repository")
        ref_part, sep, path_part = rest.partition("/")
        if rest and not ref_part:
            raise InvalidURI(f"{text!r} has an empty ref")
        try:
            parsed = cls(repository, ref_part or None, path_part if sep and path_part else None)
        except InvalidURI as exc:
            raise InvalidURI(f"{text!r}: {exc}") from None
        return parsed.require(ref=ref, path=path, text=text)

    def require(self, *, ref: bool = False, path: bool = False, text: str = "") -> GravelerURI:
        """This URI, if it has the parts asked for; else InvalidURI saying what is missing."""
        shown = text or str(self)
        if ref and self.ref is None:
            raise InvalidURI(f"{shown!r} needs a ref: graveler://REPO/REF...")
        if path and not self.path:
            raise InvalidURI(f"{shown!r} needs a path: graveler://REPO/REF/PATH")
        return self

    def child(self, path: str) -> GravelerURI:
        """The URI of ``path`` under this URI's ref (``path`` relative to this URI's path)."""
        if self.ref is None:
            raise InvalidURI(f"{self} has no ref to put {path!r} under")
        joined = "/".join(p.strip("/") for p in (self.path or "", path) if p.strip("/"))
        return GravelerURI(self.repository, self.ref, joined or None)

    def at(self, ref: str) -> GravelerURI:
        """The same path at another ref (a commit ID, say)."""
        return GravelerURI(self.repository, ref, self.path)

    def __str__(self) -> str:
        parts = [self.repository] + [p for p in (self.ref, self.path) if p is not None]
        return f"{SCHEME}://" + "/".join(parts)


def _strip_scheme(text: str) -> str:
    for scheme in SCHEMES:
        if text.startswith(scheme):
            return text[len(scheme) :]
    raise InvalidURI(f"{text!r} is not a graveler:// (or lakefs://) URI")


def parse(uri: str) -> GravelerURI:
    """Split a URI into repository, ref and path (both optional)."""
    return GravelerURI.parse(uri)


def require(uri: str, *, ref: bool = False, path: bool = False) -> GravelerURI:
    """Parse and insist on the parts a command needs."""
    return GravelerURI.parse(uri, ref=ref, path=path)
