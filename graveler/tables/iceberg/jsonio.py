"""Iceberg metadata JSON in and out: orjson when installed (the ``tables`` extra has it),
else the json module. A table's metadata file holds every snapshot of its history, and
merges and commits parse and write it whole, so this is where a long history costs."""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - the tables extra installs it
    orjson = None  # type: ignore[assignment]


def loads(data: bytes | str) -> Any:
    """The document ``data`` holds (ValueError when it is not JSON)."""
    if orjson is not None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise ValueError(str(exc)) from None
    return json.loads(data)


def dumps(doc: Any) -> bytes:
    """Compact JSON of ``doc``."""
    if orjson is not None:
        return orjson.dumps(doc)
    return json.dumps(doc, separators=(",", ":")).encode()
