"""The route table of the API: each operation's method and path template, its handler, who
may call it and what body it takes; and the matcher that finds the route of a request.

Paths are matched segment by segment on the raw (still percent-encoded) path, each
segment decoded on its own, so a parameter may hold an encoded ``/``. Where two templates
fit a path, the one with more literal segments wins. A path no template fits is a 404,
a path that fits with another method a 405: both as lakeFS's JSON error. As in lakeFS, a
parameter left empty inside a path (``/repositories//branches``) is a 400 naming it, and
one left empty at its end (``.../pmpu/``) fits no template: a 404.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from urllib.parse import unquote

from graveler.server.lakefs.errors import ApiError
from graveler.server.lakefs.http import Call, Reply

Handler = Callable[[Call], Reply]


class Access(Enum):
    """What a caller needs: nothing (``PUBLIC``), a valid key (``USER``), read or write
    access to the repository named by the path (``READ``, ``WRITE``), an admin key
    (``ADMIN``)."""

    PUBLIC = "public"
    USER = "user"
    READ = "read"
    WRITE = "write"
    ADMIN = "admin"


class Body(Enum):
    """What the request carries: nothing the handler reads, a JSON document, or an object's
    bytes (read whole when small, else streamed to the handler)."""

    NONE = "none"
    JSON = "json"
    UPLOAD = "upload"


@dataclass(frozen=True)
class Route:
    method: str
    template: str
    handler: Handler
    access: Access
    body: Body

    @property
    def name(self) -> str:
        return self.handler.__name__


def route(
    method: str,
    template: str,
    handler: Handler,
    access: Access = Access.READ,
    body: Body = Body.NONE,
) -> Route:
    return Route(method, template, handler, access, body)


@dataclass(frozen=True)
class _Pattern:
    literals: tuple[str | None, ...]  # None where a parameter goes
    names: tuple[str, ...]  # parameter names, in order
    methods: dict[str, Route]

    @property
    def weight(self) -> int:
        return sum(1 for s in self.literals if s is not None)


class Router:
    """Finds the route of a method and a path (relative to ``/api/v1``)."""

    def __init__(self, routes: Sequence[Route]) -> None:
        patterns: dict[tuple[str | None, ...], _Pattern] = {}
        for r in routes:
            literals, names = _compile(r.template)
            pattern = patterns.setdefault(literals, _Pattern(literals, names, {}))
            if r.method in pattern.methods:
                raise ValueError(f"two routes for {r.method} {r.template}")
            pattern.methods[r.method] = r
        self._by_length: dict[int, list[_Pattern]] = {}
        for pattern in sorted(patterns.values(), key=lambda p: -p.weight):
            self._by_length.setdefault(len(pattern.literals), []).append(pattern)

    def match(self, method: str, raw_path: str) -> tuple[Route, dict[str, str]]:
        """The route and its decoded path parameters; ApiError 404 or 405 otherwise, 400 for
        a parameter left empty (:func:`_fit`)."""
        trimmed = raw_path.lstrip("/")
        segments = trimmed.split("/") if trimmed else []
        for pattern in self._by_length.get(len(segments), ()):
            params = _fit(pattern, segments)
            if params is None:
                continue
            found = pattern.methods.get(method)
            if found is None:
                allowed = ", ".join(sorted(pattern.methods))
                raise ApiError(405, f"method {method} is not allowed here (allowed: {allowed})")
            empty = [name for name, value in params.items() if not value]
            if empty:
                raise ApiError(400, f"path parameter {empty[0]!r} is required")
            return found, params
        raise ApiError(404, "invalid API endpoint")


def _compile(template: str) -> tuple[tuple[str | None, ...], tuple[str, ...]]:
    literals: list[str | None] = []
    names: list[str] = []
    for part in template.strip("/").split("/"):
        if part.startswith("{") and part.endswith("}"):
            literals.append(None)
            names.append(part[1:-1])
        else:
            literals.append(part)
    return tuple(literals), tuple(names)


def _fit(pattern: _Pattern, segments: list[str]) -> dict[str, str] | None:
    """The parameters of ``segments`` if they fit the pattern, else None. A parameter may be
    empty (the caller refuses it), except in the last segment: a trailing ``/`` fits nothing."""
    values: list[str] = []
    last = len(segments) - 1
    for index, (literal, segment) in enumerate(zip(pattern.literals, segments, strict=True)):
        if literal is None:
            if not segment and index == last:
                return None
            values.append(unquote(segment))
        elif literal != segment:
            return None
    return dict(zip(pattern.names, values, strict=True))
