"""``graveler://repo/ref/path`` URIs (``lakefs://`` accepted as an alias)."""

from __future__ import annotations

from dataclasses import dataclass

from graveler.errors import InvalidURI

SCHEMES = ("graveler://", "lakefs://")


@dataclass(frozen=True, slots=True)
class GravelerURI:
    repository: str
    ref: str | None = None
    path: str | None = None

    def __str__(self) -> str:
        parts = [self.repository] + [p for p in (self.ref, self.path) if p is not None]
        return "graveler://" + "/".join(parts)


def parse(uri: str) -> GravelerURI:
    """Split a URI into repository, ref and path (both optional)."""
    if not isinstance(uri, str):
        raise InvalidURI(f"expected a graveler:// URI, got {uri!r}")
    for scheme in SCHEMES:
        if uri.startswith(scheme):
            rest = uri[len(scheme) :]
            break
    else:
        raise InvalidURI(f"{uri!r} is not a graveler:// (or lakefs://) URI")
    repo, _, rest = rest.partition("/")
    if not repo:
        raise InvalidURI(f"{uri!r} names no repository")
    if not rest:
        return GravelerURI(repo)
    ref, sep, path = rest.partition("/")
    if not ref:
        raise InvalidURI(f"{uri!r} has an empty ref")
    return GravelerURI(repo, ref, path if sep else None)


def require(uri: str, *, ref: bool = False, path: bool = False) -> GravelerURI:
    """Parse and insist on the parts a command needs."""
    parsed = parse(uri)
    if ref and parsed.ref is None:
        raise InvalidURI(f"{uri!r} needs a ref: graveler://REPO/REF...")
    if path and not parsed.path:
        raise InvalidURI(f"{uri!r} needs a path: graveler://REPO/REF/PATH")
    return parsed
