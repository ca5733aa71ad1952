"""Paged listing with an optional delimiter (S3-style common prefixes).

With a delimiter, all keys sharing the next path segment collapse into one common prefix, and
the scan jumps past them with a fresh seek instead of reading each one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from graveler.core import validate
from graveler.core.errors import InvalidArgument
from graveler.storage import entry as entries
from graveler.storage.committed.record import ValueRecord
from graveler.storage.entry import ObjectEntry

#: ``source(prefix, after)``: the records under ``prefix`` with keys greater than ``after``.
RecordSource = Callable[[bytes, bytes], Iterator[ValueRecord]]


@dataclass
class ListingPage:
    objects: list[ObjectEntry] = field(default_factory=list)
    common_prefixes: list[str] = field(default_factory=list)
    next_after: str | None = None  # pass as ``after`` to get the next page; None when done

    @property
    def has_more(self) -> bool:
        return self.next_after is not None


def iter_entries(source: RecordSource, prefix: str, after: str) -> Iterator[ObjectEntry]:
    """Every entry ``source`` has under ``prefix`` after ``after`` (both checked), decoded."""
    pfx = validate.prefix_key(prefix)
    start = validate.prefix_key(validate.text(after, "after"))
    for rec in source(pfx, start):
        yield entries.decode(rec.key, rec.value)


def list_entries(
    source: RecordSource, prefix: str, delimiter: str | None, after: str, amount: int
) -> ListingPage:
    """One page of ``source``'s entries and common prefixes, arguments checked first
    (InvalidKey, InvalidArgument)."""
    pfx = validate.prefix_key(prefix)
    validate.prefix_key(validate.text(after, "after"))
    if delimiter:
        validate.object_key(delimiter)
    if not isinstance(amount, int) or isinstance(amount, bool):
        raise InvalidArgument(f"amount must be an integer, got {amount!r}")
    return list_page(lambda start: source(pfx, start), pfx, delimiter, after, amount)


def list_page(
    scan: Callable[[bytes], Iterator[ValueRecord]],
    prefix: bytes,
    delimiter: str | None,
    after: str,
    amount: int,
) -> ListingPage:
    """``scan(start)`` yields records with key > start under prefix, in order."""
    page = ListingPage()
    delim = delimiter.encode() if delimiter else b""
    position = after.encode()
    if delim and position.endswith(delim):
        position = _past_prefix(position)  # resuming after a common prefix
    records = scan(position)
    for _ in range(max(1, amount)):
        rec = next(records, None)
        if rec is None:
            return page
        cut = rec.key.find(delim, len(prefix)) if delim else -1
        if cut >= 0:
            common = rec.key[: cut + len(delim)]
            page.common_prefixes.append(common.decode())
            position = _past_prefix(common)
            records = scan(position)  # jump over everything under the common prefix
        else:
            page.objects.append(entries.decode(rec.key, rec.value))
            position = rec.key
    if next(records, None) is not None:
        last = page.common_prefixes[-1] if position.endswith(b"\xff") else None
        page.next_after = last if last is not None else position.decode()
    return page


def _past_prefix(common: bytes) -> bytes:
    """The greatest key of the form ``common + ...`` we need to resume after: every key that
    starts with ``common`` sorts below ``common + 0xff...``."""
    return common + b"\xff" * 8
