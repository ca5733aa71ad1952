"""Filters Spark pushes into a read (PySpark 4.1+ ``DataSourceReader.pushFilters``).

Two uses, both exact or conservative:

* :func:`partition_match` evaluates a filter on a file's partition values with SQL's
  three-valued logic (a comparison with null is unknown, and unknown rows are dropped). Such a
  filter is *handled*: the files it rejects are never listed for reading, and Spark does not
  evaluate it again.
* :func:`may_match` decides from a Parquet row group's statistics (min, max, null count) whether
  any row of it can pass a filter on a data column. It answers False only when none can, so
  the row group is skipped; Spark still evaluates the filter on what is read.

Filters name columns as tuples (``("a",)``); nested fields are not pushed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)

_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    EqualTo: lambda a, b: a == b,
    GreaterThan: lambda a, b: a > b,
    GreaterThanOrEqual: lambda a, b: a >= b,
    LessThan: lambda a, b: a < b,
    LessThanOrEqual: lambda a, b: a <= b,
}
_STRINGS: dict[type, Callable[[str, str], bool]] = {
    StringStartsWith: str.startswith,
    StringEndsWith: str.endswith,
    StringContains: lambda a, b: b in a,
}


def column_of(f: Filter) -> str | None:
    """The top-level column a filter tests (None for nested fields)."""
    inner = f.child if isinstance(f, Not) else f
    path: tuple[str, ...] = getattr(inner, "attribute", ())
    return path[0] if len(path) == 1 else None


def partition_match(f: Filter, values: Mapping[str, Any]) -> bool | None:
    """True, False or None (unknown) for a filter on partition values ``values``."""
    if isinstance(f, Not):
        inner = partition_match(f.child, values)
        return None if inner is None else not inner
    value = _comparable(values[column_of(f) or ""])
    if isinstance(f, IsNull):
        return value is None
    if isinstance(f, IsNotNull):
        return value is not None
    literal: Any = getattr(f, "value", None)
    if isinstance(f, EqualNullSafe):
        return bool(value == _comparable(literal))
    if value is None:
        return None
    if isinstance(f, In):
        return value in {_comparable(v) for v in literal}
    compare = _COMPARE.get(type(f))
    if compare is not None:
        return _safely(compare, value, _comparable(literal))
    test = _STRINGS[type(f)]
    return test(str(value), literal)


def _safely(compare: Callable[[Any, Any], bool], a: Any, b: Any) -> bool | None:
    try:
        return compare(a, b)
    except TypeError:
        return None


def _comparable(value: Any) -> Any:
    """Timestamps as naive UTC, so values from directories and from Spark compare."""
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def supported_for_partitions(f: Filter) -> bool:
    """Filters :func:`partition_match` can evaluate."""
    if isinstance(f, Not):
        return supported_for_partitions(f.child)
    return (
        type(f) in _COMPARE
        or type(f) in _STRINGS
        or isinstance(f, IsNull | IsNotNull | EqualNullSafe | In)
    )


def may_match(f: Filter, stats: Any, rows: int) -> bool:
    """False only when no row of a row group whose column statistics are ``stats`` (a
    pyarrow ``Statistics`` or None) can satisfy ``f``."""
    if stats is None:
        return True
    nulls = stats.null_count if stats.has_null_count else None
    if isinstance(f, IsNull):
        return nulls is None or nulls > 0
    if isinstance(f, IsNotNull):
        return nulls is None or nulls < rows
    if nulls is not None and nulls == rows:
        return (isinstance(f, EqualNullSafe) and f.value is None) or isinstance(f, Not)
    if not stats.has_min_max:
        return True
    low, high = _comparable(stats.min), _comparable(stats.max)
    try:
        return _range_may_match(f, low, high)
    except TypeError:  # a literal Spark typed differently from the file's statistics
        return True


def _range_may_match(f: Filter, low: Any, high: Any) -> bool:
    if isinstance(f, EqualTo | EqualNullSafe):
        value = _comparable(f.value)
        return value is None or low <= value <= high
    if isinstance(f, In):
        return any(v is not None and low <= _comparable(v) <= high for v in f.value)
    bound = _comparable(getattr(f, "value", None))
    checks: dict[type, Callable[[], bool]] = {
        GreaterThan: lambda: high > bound,
        GreaterThanOrEqual: lambda: high >= bound,
        LessThan: lambda: low < bound,
        LessThanOrEqual: lambda: low <= bound,
        StringStartsWith: lambda: _prefix_in_range(str(low), str(high), str(bound)),
    }
    check = checks.get(type(f))
    return True if check is None else check()


def _prefix_in_range(low: str, high: str, prefix: str) -> bool:
    """Whether some string in [low, high] can start with ``prefix``."""
    return low[: len(prefix)] <= prefix <= high[: len(prefix)]


def split_filters(
    filters: Sequence[Filter], partition_columns: Sequence[str], data_columns: Sequence[str]
) -> tuple[list[Filter], list[Filter], list[Filter]]:
    """(partition filters we evaluate exactly, data filters used for row-group skipping,
    filters returned to Spark). Data filters are returned to Spark as well."""
    partition, data, rest = [], [], []
    parts, cols = set(partition_columns), set(data_columns)
    for f in filters:
        column = column_of(f)
        if column in parts and supported_for_partitions(f):
            partition.append(f)
            continue
        if column in cols:
            data.append(f)
        rest.append(f)
    return partition, data, rest
