"""lakeFS's OpenAPI document as a checker of answers, with openapi-core.

The document is lakeFS's own (release line 1.84), kept outside the project: it is read from
``../shared/reference/`` beside the repository, or from the file that
``GRAVELER_LAKEFS_OPENAPI`` names. It is parsed once per test process (about 1.5 s).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
ENV = "GRAVELER_LAKEFS_OPENAPI"
#: ``make lakefs-openapi`` puts the document here (from the pinned lakeFS source release); a
#: checkout beside the team's shared folder also finds it there.
PLACES = (
    ROOT / ".suites" / "lakefs-api-v1.84.0.yml",
    ROOT.parent / "shared" / "reference" / "lakefs-api-v1.84.0.yml",
)
DEFAULT = next((p for p in PLACES if p.is_file()), PLACES[0])
#: Where the document mounts the API (its ``servers`` entry).
PREFIX = "/api/v1"


def document_path() -> Path:
    path = Path(os.environ.get(ENV) or DEFAULT)
    if not path.is_file():
        raise FileNotFoundError(f"lakeFS's OpenAPI document is not at {path} (set {ENV})")
    return path


@dataclass(frozen=True)
class Exchange:
    """One request and the answer to it, as the client saw them."""

    method: str
    target: str  # path and query, as sent
    host: str
    request_headers: list[tuple[str, str]]
    status: int
    response_headers: list[tuple[str, str]]
    body: bytes

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    def describe(self) -> str:
        return f"{self.method} {self.target[:200]} -> {self.status}"


class Contract:
    """Checks answers against the document; :meth:`check` gives the problems found."""

    def __init__(self, path: Path) -> None:
        from openapi_core import OpenAPI

        self.openapi = OpenAPI.from_file_path(str(path))

    def check(self, exchange: Exchange) -> list[str]:
        exchange, problems = _errata(exchange)
        return problems + self._check(exchange)

    def _check(self, exchange: Exchange) -> list[str]:
        from openapi_core.contrib.werkzeug import (
            WerkzeugOpenAPIRequest,
            WerkzeugOpenAPIResponse,
        )
        from werkzeug.test import EnvironBuilder
        from werkzeug.wrappers import Request, Response

        parts = urlsplit(exchange.target)
        environ = EnvironBuilder(
            method=exchange.method,
            base_url=f"http://{exchange.host}",
            path=parts.path,
            query_string=parts.query,
            headers=_headers(exchange.request_headers, drop=("content-length",)),
        ).get_environ()
        response = Response(
            exchange.body,
            status=exchange.status,
            headers=_headers(exchange.response_headers, drop=()),
        )
        try:
            self.openapi.validate_response(
                WerkzeugOpenAPIRequest(Request(environ)), WerkzeugOpenAPIResponse(response)
            )
        except Exception as exc:
            return [f"{exchange.describe()}: {_explain(exc)}"]
        return []


#: ``getObject``'s path.
OBJECT = re.compile(PREFIX + r"/repositories/[^/]+/refs/[^/]+/objects")
#: RFC 9110's Content-Range of a 206 answer: ``bytes FIRST-LAST/SIZE``.
CONTENT_RANGE = re.compile(r"bytes \d+-\d+/(\d+|\*)")


def _errata(exchange: Exchange) -> tuple[Exchange, list[str]]:
    """Where the document contradicts HTTP and lakeFS itself, the answer is held to HTTP.

    * ``getObject``'s 206 declares ``Content-Range`` with the *request* header's syntax
      (``^bytes=...``); lakeFS answers ``bytes 0-9/100`` as RFC 9110 says, and lakeFS's
      high-level SDK parses that form. Checked here against RFC 9110 instead.
    * ``getObject`` declares its body as ``application/octet-stream``; lakeFS answers with
      the object's own content type (its controller sets ``Content-Type`` from the entry).
      The body is checked as the binary string the document describes.
    """
    if exchange.method != "GET" or not OBJECT.fullmatch(exchange.path):
        return exchange, []
    problems: list[str] = []
    headers = exchange.response_headers
    if exchange.status in (200, 206):
        headers = [
            (k, "application/octet-stream" if k.lower() == "content-type" else v)
            for k, v in headers
        ]
    if exchange.status == 206:
        ranges = [v for k, v in headers if k.lower() == "content-range"]
        problems += [
            f"{exchange.describe()}: Content-Range {value!r} is not 'bytes FIRST-LAST/SIZE'"
            for value in ranges
            if not CONTENT_RANGE.fullmatch(value)
        ]
        headers = [(k, v) for k, v in headers if k.lower() != "content-range"]
    return dataclasses.replace(exchange, response_headers=headers), problems


def _headers(pairs: Iterable[tuple[str, str]], drop: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in pairs if k.lower() not in drop]


def _explain(exc: BaseException) -> str:
    """The error and its causes, with the schema errors openapi-core attaches."""
    parts: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(parts) < 6:
        text = f"{type(seen).__name__}: {seen}"
        errors: Any = getattr(seen, "schema_errors", None)
        if errors:
            text += " [" + "; ".join(_schema_error(e) for e in list(errors)[:5]) + "]"
        parts.append(text)
        seen = seen.__cause__ or seen.__context__
    return " <- ".join(parts)[:3000]


def _schema_error(error: Any) -> str:
    where = "/".join(str(p) for p in getattr(error, "absolute_path", []))
    return f"{where or '<root>'}: {getattr(error, 'message', error)}"


@functools.cache
def contract() -> Contract:
    """The document, parsed once per process."""
    return Contract(document_path())
