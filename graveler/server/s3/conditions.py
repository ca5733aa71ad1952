"""``Range`` and the conditional headers, evaluated as S3 evaluates them.

Reads: ``If-Match`` and ``If-Unmodified-Since`` failing give 412; ``If-None-Match`` and
``If-Modified-Since`` failing give 304. A matching ``If-Match`` overrides a failing
``If-Unmodified-Since``, and a failing ``If-None-Match`` decides alone over
``If-Modified-Since``. Times compare at the resolution of ``Last-Modified`` (seconds).

Writes: ``If-None-Match: *`` writes only when no object is at the key; ``If-Match: ETAG``
only when the object there has that ETag (no object: NoSuchKey).
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime

from graveler.core.errors import ObjectNotFound, PreconditionFailed
from graveler.server.s3.errors import S3Error
from graveler.server.s3.request import S3Request
from graveler.storage.entry import ObjectEntry, etag_of

NOT_MODIFIED = 304


def http_date(when: datetime) -> str:
    return format_datetime(when.astimezone(UTC).replace(microsecond=0), usegmt=True)


def quoted(entry: ObjectEntry) -> str:
    return f'"{etag_of(entry)}"'


def check_read(request: S3Request, entry: ObjectEntry, prefix: str = "if-") -> int | None:
    """None when the read may go on, else the status to answer (304 or 412 raised as
    S3Error). ``prefix`` ``x-amz-copy-source-if-`` checks a copy's source."""
    etag = etag_of(entry)
    modified = entry.mtime.astimezone(UTC).replace(microsecond=0)
    if_match = request.header(prefix + "match")
    if if_match is not None:
        if not _matches(if_match, etag):
            raise _failed()
    elif _is_after(request.header(prefix + "unmodified-since"), modified, after=True):
        raise _failed()
    if_none = request.header(prefix + "none-match")
    if if_none is not None:
        if _matches(if_none, etag):
            return _not_modified(prefix)
    elif _is_after(request.header(prefix + "modified-since"), modified, after=False):
        return _not_modified(prefix)
    return None


def write_condition(request: S3Request) -> object | None:
    """The condition of a conditional PUT (for :func:`graveler.versioning.writes.put`), or None.
    An empty ``If-None-Match`` or ``If-Match`` is no condition, as in lakeFS."""
    if_none = request.header("if-none-match") or None
    if_match = request.header("if-match") or None
    if if_none is None and if_match is None:
        return None
    if if_none is not None and if_none.strip() != "*":
        raise S3Error("NotImplemented", "If-None-Match on PUT takes only '*'", 501)

    def condition(current: ObjectEntry | None) -> None:
        if if_none is not None and current is not None:
            raise PreconditionFailed("an object already exists at this key")
        if if_match is not None:
            if current is None:
                raise ObjectNotFound("no object to match at this key")
            if not _matches(if_match, etag_of(current)):
                raise PreconditionFailed("the object at this key has another ETag")

    return condition


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The inclusive (first, last) byte of a ``Range: bytes=...`` header, None for the whole
    object (no header, several ranges, or a form S3 ignores); InvalidRange (416) when the
    range starts past the end."""
    if header is None or not header.startswith("bytes=") or "," in header:
        return None
    first_text, sep, last_text = header[len("bytes=") :].strip().partition("-")
    if not sep:
        return None
    try:
        if first_text == "":
            suffix = int(last_text)
            if suffix <= 0:
                raise _unsatisfiable(size)
            return max(0, size - suffix), size - 1
        first = int(first_text)
        last = int(last_text) if last_text else size - 1
    except ValueError:
        return None
    if first > last:
        return None
    if first >= size:
        raise _unsatisfiable(size)
    return first, min(last, size - 1)


def _matches(header: str, etag: str) -> bool:
    wanted = [t.strip().removeprefix("W/").strip('"') for t in header.split(",")]
    return "*" in wanted or etag in wanted


def _is_after(header: str | None, modified: datetime, *, after: bool) -> bool:
    """``If-Unmodified-Since`` (after=True): modified after the date; ``If-Modified-Since``
    (after=False): not modified after it. False for a missing or unreadable date."""
    if header is None:
        return False
    try:
        when = parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return modified > when if after else modified <= when


def _failed() -> S3Error:
    return S3Error(
        "PreconditionFailed", "at least one of the preconditions you specified did not hold", 412
    )


def _not_modified(prefix: str) -> int:
    if prefix != "if-":  # a copy's source: S3 answers 412 for these too
        raise _failed()
    return NOT_MODIFIED


def _unsatisfiable(size: int) -> S3Error:
    error = S3Error("InvalidRange", "the requested range is not satisfiable", 416)
    error.extra["ActualObjectSize"] = str(size)
    return error
