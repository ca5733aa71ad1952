"""Hooks that action files in the lakeFS API tests name (the server is started with this
module allowed in ``GRAVELER_HOOK_MODULES``)."""

from __future__ import annotations

from typing import Any


def require_key(ctx: Any) -> str:
    """Fail unless the commit's metadata has the key named by the ``key`` parameter; the
    hook's output names the value found."""
    key = ctx.params["key"]
    if key not in ctx.commit.metadata:
        raise ValueError(f"commits need a {key!r} metadata key")
    return f"{key} is {ctx.commit.metadata[key]}"
