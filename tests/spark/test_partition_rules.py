"""Partition paths, type inference and filter evaluation as Spark does them (no Spark session)."""

from __future__ import annotations

import datetime as dt
import io
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from graveler_spark.partitions import discover, escape, partition_dir, typed, unescape
from graveler_spark.pushdown import may_match, partition_match
from graveler_spark.schema import SchemaConflict, merge_schemas, readable_as
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    GreaterThan,
    In,
    IsNull,
    LessThan,
    Not,
    StringStartsWith,
)

from graveler.core.errors import InvalidArgument


def test_directory_names_escape_like_spark() -> None:
    assert partition_dir(["a", "b"], ["x/y=z", None]) == "a=x%2Fy%3Dz/b=__HIVE_DEFAULT_PARTITION__"
    assert partition_dir(["d"], [dt.datetime(2024, 1, 2, 3, 4, 5)]) == "d=2024-01-02 03%3A04%3A05"
    assert partition_dir(["f"], [True]) == "f=true"
    assert unescape(escape("50% of a:b")) == "50% of a:b"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["1", "2"], pa.int32()),
        (["1", "3000000000"], pa.int64()),
        (["1", "2.5"], pa.float64()),
        (["12345678901234567890"], pa.decimal128(20, 0)),
        (["2024-01-01", "2024-01-02"], pa.date32()),
        (["2024-01-01", "2024-01-01 10%3A00%3A00"], pa.timestamp("us", tz="UTC")),
        (["1", "x"], pa.string()),
        (["__HIVE_DEFAULT_PARTITION__"], pa.string()),
        (["__HIVE_DEFAULT_PARTITION__", "7"], pa.int32()),
    ],
)
def test_types_are_inferred_and_widened_like_spark(values: list[str], expected) -> None:
    layout = discover([f"k={v}/part.parquet" for v in values])
    assert layout.columns == ("k",) and layout.types == (expected,)


def test_typed_values_and_conflicting_layouts() -> None:
    assert typed("2024-01-01", pa.date32()) == dt.date(2024, 1, 1)
    assert typed("5", pa.decimal128(3, 0)) == Decimal(5)
    assert typed("__HIVE_DEFAULT_PARTITION__", pa.int32()) is None
    with pytest.raises(InvalidArgument, match="conflicting partition directories"):
        discover(["a=1/x.parquet", "b=1/y.parquet"])
    assert discover(["plain/x.parquet"]).columns == ()


def test_partition_filters_use_three_valued_logic() -> None:
    values = {"k": None, "s": "abc", "n": 3}
    assert partition_match(EqualTo(("n",), 3), values) is True
    assert partition_match(EqualTo(("k",), 3), values) is None  # unknown: the file is pruned
    assert partition_match(Not(EqualTo(("k",), 3)), values) is None
    assert partition_match(EqualNullSafe(("k",), None), values) is True
    assert partition_match(IsNull(("k",)), values) is True
    assert partition_match(In(("n",), (1, 2)), values) is False
    assert partition_match(StringStartsWith(("s",), "ab"), values) is True
    assert partition_match(LessThan(("n",), 3), values) is False


def _stats(values: list[int | None]):
    out = io.BytesIO()
    pq.write_table(pa.table({"x": pa.array(values, pa.int64())}), out)
    meta = pq.ParquetFile(io.BytesIO(out.getvalue())).metadata
    return meta.row_group(0).column(0).statistics, meta.row_group(0).num_rows


def test_row_group_statistics_rule_out_only_what_cannot_match() -> None:
    stats, rows = _stats([10, 20, None])
    assert not may_match(GreaterThan(("x",), 20), stats, rows)
    assert may_match(GreaterThan(("x",), 19), stats, rows)
    assert not may_match(EqualTo(("x",), 5), stats, rows)
    assert not may_match(In(("x",), (1, 30)), stats, rows)
    assert may_match(IsNull(("x",)), stats, rows)
    assert may_match(EqualTo(("x",), "not a number"), stats, rows)  # cannot compare: keep
    nulls, rows = _stats([None, None])
    assert not may_match(EqualTo(("x",), 1), nulls, rows)


def test_schema_merge_and_widening_rules() -> None:
    a = pa.schema([pa.field("x", pa.decimal128(5, 1), nullable=False)])
    b = pa.schema([pa.field("x", pa.decimal128(9, 1)), pa.field("y", pa.string())])
    merged = merge_schemas([("a", a), ("b", b)])
    assert merged == pa.schema([pa.field("x", pa.decimal128(9, 1)), pa.field("y", pa.string())])
    with pytest.raises(SchemaConflict, match="int32 in 'a' and int64 in 'b'"):
        merge_schemas(
            [("a", pa.schema([("x", pa.int32())])), ("b", pa.schema([("x", pa.int64())]))]
        )
    assert readable_as(pa.int32(), pa.int64()) and not readable_as(pa.int64(), pa.int32())
    assert readable_as(pa.date32(), pa.timestamp("us")) and not readable_as(pa.string(), pa.int64())


def test_prefetched_batches_keep_order_errors_and_stop_early() -> None:
    import threading

    from graveler_spark.reader import prefetched

    assert list(prefetched(iter(range(10)))) == list(range(10))

    def failing():
        yield 1
        raise ValueError("decode failed")

    with pytest.raises(ValueError, match="decode failed"):
        list(prefetched(failing()))
    produced: list[int] = []

    def endless():
        n = 0
        while True:
            produced.append(n)
            yield n
            n += 1

    it = prefetched(endless())
    assert next(it) == 0
    it.close()  # the consumer stops: the producer thread ends too
    assert not any(t.name == "graveler-prefetch" for t in threading.enumerate())
    assert len(produced) <= 4
