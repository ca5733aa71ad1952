"""How the IO manager turns Python values into object bytes and back.

* pandas ``DataFrame``, polars ``DataFrame`` and pyarrow ``Table`` are written as Parquet;
* anything else is pickled (protocol 5).

The format is recorded in the object's user metadata (``dagster/format``) and its content type.
Parquet can be read back as any of the three frame types, so an input annotated with another
frame library than the writer's is converted on load. The frame libraries are imported only
when a value of theirs is seen (or asked for).

Trust: unpickling runs code, and anyone who can write to the lake (CLI, fsspec, Spark) could
put bytes at an asset's path. :func:`load` therefore unpickles only what the IO manager wrote
itself: format ``pickle`` *and* its content type *and* the run-id metadata it sets, and, when
the IO manager has a ``pickle_secret``, an HMAC-SHA256 of the bytes under that secret
(``dagster/pickle-hmac``), which no other writer can forge. An object without ``dagster/format``
metadata is refused with an error naming its path; Parquet uploaded by other tools loads when
it carries ``dagster/format`` = ``pandas``, ``polars`` or ``pyarrow`` (reading Parquet runs no
code).
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import io
import pickle
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graveler.errors import InvalidArgument

FORMAT_KEY = "dagster/format"
RUN_ID_KEY = "dagster/run_id"  # set on every output (graveler_dagster.runs uses it too)
SIGNATURE_KEY = "dagster/pickle-hmac"
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
    signature: str | None = None  # HMAC of a pickle under the IO manager's pickle_secret

    def metadata(self, run_id: str) -> dict[str, str]:
        """The user metadata the IO manager stores with these bytes."""
        meta = {RUN_ID_KEY: run_id, FORMAT_KEY: self.format}
        if self.signature is not None:
            meta[SIGNATURE_KEY] = self.signature
        return meta


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


def encode(value: Any, secret: str | None = None) -> Encoded:
    """Serialize ``value`` (a pickle is signed with ``secret`` when given); raises
    InvalidArgument when it cannot be pickled."""
    fmt = frame_format(value)
    if fmt is None:
        try:
            data = pickle.dumps(value, protocol=5)
        except Exception as exc:
            raise InvalidArgument(f"cannot pickle a {type(value).__name__}: {exc}") from exc
        signature = _sign(data, secret) if secret else None
        return Encoded(data, "pickle", PICKLE_TYPE, None, signature)
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


def load(
    data: bytes,
    metadata: Mapping[str, str],
    content_type: str,
    where: str,
    wanted: str | None = None,
    secret: str | None = None,
) -> Any:
    """The value stored as ``data`` with ``metadata`` and ``content_type`` at ``where`` (a
    ``graveler://`` URI, for errors), after checking it may be decoded (module docstring)."""
    written = metadata.get(FORMAT_KEY)
    if written is None:
        raise InvalidArgument(
            f"{where} has no {FORMAT_KEY!r} metadata, so GravelerIOManager will not load it: "
            "it loads only values it wrote itself. Materialize the asset through the IO "
            f"manager, or upload a Parquet file with metadata {FORMAT_KEY}=pandas (or polars, "
            "pyarrow)"
        )
    if written == "pickle":
        _check_own_pickle(data, metadata, content_type, where, secret)
        return decode(data, written, wanted, trusted_pickle=True)
    return decode(data, written, wanted)


def _check_own_pickle(
    data: bytes, metadata: Mapping[str, str], content_type: str, where: str, secret: str | None
) -> None:
    if content_type != PICKLE_TYPE or RUN_ID_KEY not in metadata:
        raise InvalidArgument(
            f"{where} is marked {FORMAT_KEY}=pickle but was not written by GravelerIOManager "
            f"(no {RUN_ID_KEY!r} metadata or content type {content_type!r}); unpickling runs "
            "code, so only the IO manager's own outputs are unpickled. Materialize the asset "
            "through the IO manager, or store tables as Parquet"
        )
    if secret and not hmac.compare_digest(metadata.get(SIGNATURE_KEY, ""), _sign(data, secret)):
        raise InvalidArgument(
            f"{where} is a pickle without a valid signature for this IO manager's "
            "pickle_secret (written by another writer or under another secret); refusing to "
            "unpickle it. Materialize the asset again through the IO manager"
        )


def _sign(data: bytes, secret: str) -> str:
    return hmac.new(secret.encode(), data, hashlib.sha256).hexdigest()


def decode(
    data: bytes, written: str, wanted: str | None = None, *, trusted_pickle: bool = False
) -> Any:
    """Deserialize bytes written as ``written``, as frame format ``wanted`` if given. A pickle
    is refused unless the caller checked its origin (``trusted_pickle``; see :func:`load`)."""
    if written == "pickle":
        if not trusted_pickle:
            raise InvalidArgument("refusing to unpickle bytes whose origin was not checked")
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
