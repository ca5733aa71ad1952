"""Hive-style partition directories (``date=2024-01-01/``), written and discovered as Spark does.

Writing: :func:`partition_dir` turns partition values into ``k=v/k2=v2`` with Spark's escaping
(``%XX`` for ``/ = : % ?`` and the other characters Spark escapes; null is
``__HIVE_DEFAULT_PARTITION__``).

Reading: :func:`discover` looks at the object paths below a base prefix. The trailing
``k=v`` directories of each path are its partition values; every file must name the same
columns in the same order, or the read fails with :class:`InvalidArgument` (Spark's "conflicting
directory structures"). Each column's type is inferred from all its values the way Spark's
partition discovery does: int, then bigint, then decimal(p,0), then double, then timestamp,
then date, else string; values of different types widen (int+bigint -> bigint, int+double ->
double, date+timestamp -> timestamp, anything else -> string); a column of nulls only is string.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from graveler.errors import InvalidArgument

if TYPE_CHECKING:
    import pyarrow as pa

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_ESCAPED = frozenset("\"#%'*/:=?\\\x7f{[]^") | frozenset(chr(c) for c in range(1, 32))
_INT = re.compile(r"[+-]?\d+")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,9})?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


def escape(text: str) -> str:
    """``text`` as Spark writes it in a directory name."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def unescape(text: str) -> str:
    """The inverse of :func:`escape` (malformed ``%`` sequences are kept as they are)."""
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def format_value(value: Any) -> str:
    """A partition value as Spark casts it to a string for the directory name."""
    if value is None:
        return DEFAULT_PARTITION
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        text = value.replace(tzinfo=None).isoformat(sep=" ")
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        raise InvalidArgument("binary columns cannot be partition columns")
    text = str(value)
    return text if text else DEFAULT_PARTITION  # Spark writes "" as the null partition


def partition_dir(columns: Sequence[str], values: Sequence[Any]) -> str:
    """``k=v/k2=v2`` (no trailing slash) for one combination of partition values."""
    return "/".join(
        f"{escape(c)}={escape(format_value(v))}" for c, v in zip(columns, values, strict=True)
    )


def parse_dir(relative: str) -> tuple[tuple[str, str], ...]:
    """The trailing ``k=v`` components of the directory part of ``relative`` (a path below
    the base), raw (still escaped); ``()`` when the file is not in a partition directory."""
    parts = relative.split("/")[:-1]
    found: list[tuple[str, str]] = []
    for part in reversed(parts):
        name, eq, raw = part.partition("=")
        if not eq or not name:
            break
        found.append((unescape(name), raw))
    return tuple(reversed(found))


@dataclass(frozen=True)
class Layout:
    """The partition columns of a table and each file's raw values (in file order)."""

    columns: tuple[str, ...]
    types: tuple[pa.DataType, ...]
    raw: tuple[tuple[str, ...], ...]  # per file, the escaped directory values

    def values(self, index: int) -> tuple[Any, ...]:
        """The typed partition values of file ``index``."""
        return tuple(typed(r, t) for r, t in zip(self.raw[index], self.types, strict=True))


def discover(relatives: Sequence[str], *, infer_types: bool = True) -> Layout:
    """The partition layout of the files at ``relatives`` (paths below the base)."""
    parsed = [parse_dir(r) for r in relatives]
    columns = tuple(name for name, _ in parsed[0]) if parsed else ()
    for rel, parts in zip(relatives, parsed, strict=True):
        names = tuple(name for name, _ in parts)
        if names != columns:
            raise InvalidArgument(
                "conflicting partition directories below the base path: "
                f"{_describe(columns)} and {_describe(names)} (at {rel!r}); "
                "set the option basePath, or read one layout at a time"
            )
    raw = tuple(tuple(v for _, v in parts) for parts in parsed)
    types = tuple(infer_type((r[i] for r in raw), infer_types) for i in range(len(columns)))
    return Layout(columns, types, raw)


def _describe(columns: Sequence[str]) -> str:
    return "(" + ", ".join(columns) + ")" if columns else "no partition columns"


def infer_type(raws: Iterable[str], infer: bool = True) -> pa.DataType:
    """The Spark type of a partition column with these raw directory values (Arrow type)."""
    import pyarrow as pa

    if not infer:
        return pa.string()
    found: pa.DataType | None = None
    for raw in set(raws):
        if raw == DEFAULT_PARTITION:
            continue
        kind = _infer_one(unescape(raw))
        found = kind if found is None else _wider(found, kind)
    return pa.string() if found is None else found


def _infer_one(text: str) -> pa.DataType:
    import pyarrow as pa

    if _INT.fullmatch(text):
        number = int(text)
        if _INT32[0] <= number <= _INT32[1]:
            return pa.int32()
        if _INT64[0] <= number <= _INT64[1]:
            return pa.int64()
        digits = len(text.lstrip("+-"))
        return pa.decimal128(digits, 0) if digits <= 38 else pa.float64()
    try:
        float(text)
        if text.strip().lower() not in ("nan", "inf", "-inf", "infinity", "-infinity"):
            return pa.float64()
    except ValueError:
        pass
    if _TIMESTAMP.fullmatch(text) and _parses(dt.datetime.fromisoformat, text):
        return pa.timestamp("us", tz="UTC")
    if _DATE.fullmatch(text) and _parses(dt.date.fromisoformat, text):
        return pa.date32()
    return pa.string()


def _parses(parse: Any, text: str) -> bool:
    try:
        parse(text)
    except ValueError:
        return False
    return True


def _wider(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    """Spark's widening of two partition column types (string when nothing fits both)."""
    import pyarrow as pa
    import pyarrow.types as t

    if a.equals(b):
        return a
    numeric = (pa.int32(), pa.int64())
    if a in numeric and b in numeric:
        return pa.int64()
    if (t.is_integer(a) or t.is_floating(a)) and (t.is_integer(b) or t.is_floating(b)):
        return pa.float64()
    if t.is_decimal(a) and t.is_decimal(b):
        return pa.decimal128(max(a.precision, b.precision), 0)
    if (t.is_decimal(a) and t.is_integer(b)) or (t.is_decimal(b) and t.is_integer(a)):
        return a if t.is_decimal(a) else b
    if {str(a), str(b)} == {"date32[day]", "timestamp[us, tz=UTC]"}:
        return pa.timestamp("us", tz="UTC")
    return pa.string()


def typed(raw: str, kind: pa.DataType) -> Any:
    """The value of the escaped directory value ``raw`` as a Python value of type ``kind``."""
    import pyarrow.types as t

    if raw == DEFAULT_PARTITION:
        return None
    text = unescape(raw)
    try:
        if t.is_integer(kind):
            return int(text)
        if t.is_floating(kind):
            return float(text)
        if t.is_decimal(kind):
            return Decimal(text)
        if t.is_timestamp(kind):
            return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)
        if t.is_date(kind):
            return dt.date.fromisoformat(text[:10])
        if t.is_boolean(kind):
            return text.lower() == "true"
    except ValueError:
        return None  # Spark reads a value its type cannot hold as null
    return text
