"""The Delta operations of the oracle matrix, as specs both engines run: delta-rs here,
delta-spark in its own process (tests/tables/delta/oracle/spark_oracle.py runs the same
specs). A table has ``id long, part string`` partitioned by ``part`` (``x double`` once
evolved)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError
from deltalake.transaction import CommitProperties, Transaction

Spec = dict[str, Any]

#: The base every pair starts from: two versions, partition ``a`` in two files (so that
#: OPTIMIZE has something to compact), ``b`` in one.
BASE: list[Spec] = [
    {"op": "create", "rows": [[1, "a"], [2, "b"]]},
    {"op": "append", "rows": [[3, "a"]]},
]


def append(*rows: tuple[int, str]) -> Spec:
    return {"op": "append", "rows": [list(r) for r in rows]}


def overwrite(*rows: tuple[int, str]) -> Spec:
    return {"op": "overwrite", "rows": [list(r) for r in rows]}


def delete(where: str) -> Spec:
    return {"op": "delete", "where": where}


def update(where: str) -> Spec:
    return {"op": "update", "where": where, "set": {"id": "id + 100"}}


def merge(part: str, *rows: tuple[int, str]) -> Spec:
    on = f"t.id = s.id AND t.part = '{part}'"
    return {"op": "merge", "on": on, "rows": [list(r) for r in rows]}


def evolve(*rows: tuple[int, str, float]) -> Spec:
    return {"op": "evolve", "rows": [list(r) for r in rows]}


def batch(app: str, number: int, *rows: tuple[int, str]) -> Spec:
    return {"op": "batch", "app": app, "batch": number, "rows": [list(r) for r in rows]}


OPTIMIZE: Spec = {"op": "optimize"}


def arrow(rows: list[list[Any]]) -> pa.Table:
    columns = {
        "id": pa.array([r[0] for r in rows], pa.int64()),
        "part": pa.array([r[1] for r in rows], pa.string()),
    }
    if rows and len(rows[0]) == 3:
        columns["x"] = pa.array([r[2] for r in rows], pa.float64())
    return pa.table(columns)


def run(target: str | DeltaTable, spec: Spec) -> None:
    """Run ``spec`` with delta-rs on the table at ``target`` (a path, or a table loaded at
    the version the transaction reads)."""
    op = spec["op"]
    table = target if isinstance(target, DeltaTable) else None
    if op == "create":
        props = spec.get("properties") or None
        write_deltalake(
            str(target), arrow(spec["rows"]), partition_by=["part"], configuration=props
        )
        return
    dt = table or DeltaTable(str(target))
    if op in ("append", "overwrite"):
        write_deltalake(dt, arrow(spec["rows"]), mode=op)
    elif op == "evolve":
        write_deltalake(dt, arrow(spec["rows"]), mode="append", schema_mode="merge")
    elif op == "batch":
        txn = Transaction(app_id=spec["app"], version=spec["batch"])
        props = CommitProperties(app_transactions=[txn])
        write_deltalake(dt, arrow(spec["rows"]), mode="append", commit_properties=props)
    elif op == "delete":
        dt.delete(spec["where"])
    elif op == "update":
        dt.update(predicate=spec["where"], updates=spec["set"])
    elif op == "merge":
        merger = dt.merge(
            arrow(spec["rows"]), predicate=spec["on"], source_alias="s", target_alias="t"
        )
        merger.when_matched_update_all().when_not_matched_insert_all().execute()
    elif op == "optimize":
        dt.optimize.compact()
    else:
        raise ValueError(f"unknown operation {op!r}")


#: delta-rs's CommitFailedError messages -> Delta's exception names
_KINDS = [
    ("concurrent transactions added new data", "ConcurrentAppend"),
    ("deleted data this operation read", "ConcurrentDeleteRead"),
    ("deleted the same data", "ConcurrentDeleteDelete"),
    ("Metadata changed", "MetadataChanged"),
    ("Concurrent transaction failed", "ConcurrentTransaction"),
    ("Protocol changed", "ProtocolChanged"),
]


def concurrent(path: Path, first: Spec, second: Spec) -> str:
    """Both specs as two delta-rs transactions reading the same version, ``first``
    committing first: ``ok`` or the kind of conflict delta-rs reports for ``second``."""
    one, two = DeltaTable(str(path)), DeltaTable(str(path))
    run(one, first)
    try:
        run(two, second)
    except CommitFailedError as e:
        for text, kind in _KINDS:
            if re.search(text, str(e), re.I):
                return kind
        raise
    return "ok"


def rows(path: Path) -> list[list[Any]]:
    """The table's rows, columns in name order, sorted (as the Spark oracle answers)."""
    table = DeltaTable(str(path)).to_pyarrow_table()
    cols = sorted(table.column_names)
    found = table.select(cols).to_pylist()
    return sorted(([r[c] for c in cols] for r in found), key=repr)
