"""How the IO manager turns Python values into object bytes and back.

* pandas ``DataFrame``, polars ``DataFrame`` and pyarrow ``Table`` are written as Parquet;
* anything else is pickled (protocol 5).

The format is recorded in the object's user metadata (``dagster/format``) and its content type.
Parquet can be read back as any of the three frame types, so an input annotated with another
frame library than the writer's is converted on load. The frame libraries are imported only
when a value of theirs is seen (or asked for).
"""

from __future__ import annotations

import importlib
import io
import pickle
import sys
from dataclasses import dataclass
from typing import Any

from graveler.errors import InvalidArgument

FORMAT_KEY = "dagster/format"
PARQUET_TYPE = "application/vnd.apache.parquet"
PICKLE_TYPE = "application/x-python-pickle"
FRAME_FORMATS = ("pandas", "polars", "pyarrow")


@dataclass(frozen=True, slots=True)
class Encoded:
    """A serialized value: bytes plus what the IO manager records about it."""

    data: bytes
    format: str  # "pandas" | "polars" | "pyarrow" | "pickle"
    content_type: str
    rows: int | None


def frame_format(value: Any) -> str | None:
    """ "pandas", "polars" or "pyarrow" for a supported table type, else None."""
    if _is(value, "pandas", "DataFrame"):
        return "pandas"
    if _is(value, "polars", "DataFrame"):
        return "polars"
    if _is(value, "pyarrow", "Table"):
        return "pyarrow"
    return None


def _is(value: Any, module: str, cls: str) -> bool:
    mod = sys.modules.get(module)
    return mod is not None and isinstance(value, getattr(mod, cls))


def encode(value: Any) -> Encoded:
    """Serialize ``value``; raises InvalidArgument when it cannot be pickled."""
    fmt = frame_format(value)
    if fmt is None:
        try:
            data = pickle.dumps(value, protocol=5)
        except Exception as exc:
            raise InvalidArgument(f"cannot pickle a {type(value).__name__}: {exc}") from exc
        return Encoded(data, "pickle", PICKLE_TYPE, None)
    buf = io.BytesIO()
    if fmt == "pandas":
        value.to_parquet(buf, index=True)
    elif fmt == "polars":
        value.write_parquet(buf)
    else:
        importlib.import_module("pyarrow.parquet").write_table(value, buf)
    return Encoded(buf.getvalue(), fmt, PARQUET_TYPE, int(value.shape[0]))


def wanted_format(typing_type: Any) -> str | None:
    """The frame format an input annotation asks for (None: whatever was written)."""
    module = getattr(typing_type, "__module__", "") or ""
    name = getattr(typing_type, "__name__", "")
    root = module.split(".", 1)[0]
    if root in ("pandas", "polars") and name == "DataFrame":
        return root
    if root == "pyarrow" and name == "Table":
        return "pyarrow"
    return None


def decode(data: bytes, written: str, wanted: str | None = None) -> Any:
    """Deserialize bytes written as ``written``, as frame format ``wanted`` if given."""
    if written == "pickle":
        return pickle.loads(data)
    if written not in FRAME_FORMATS:
        raise InvalidArgument(f"unknown stored format {written!r} (expected parquet or pickle)")
    target = wanted or written
    buf = io.BytesIO(data)
    if target == "pandas":
        return importlib.import_module("pandas").read_parquet(buf)
    if target == "polars":
        return importlib.import_module("polars").read_parquet(buf)
    return importlib.import_module("pyarrow.parquet").read_table(buf)
