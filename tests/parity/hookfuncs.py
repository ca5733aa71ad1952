"""Python hooks that the action files in tests/parity/test_hooks.py name by import path."""

from __future__ import annotations

from graveler import HookContext

CALLS: list[HookContext] = []


def require_owner(ctx: HookContext) -> None:
    """Fails unless the commit's metadata has the key named by the action's params."""
    CALLS.append(ctx)
    key = ctx.params.get("key", "owner")
    if key not in ctx.commit.metadata:
        raise ValueError(f"commit needs metadata {key!r}")


def csv_only(ctx: HookContext) -> None:
    """Fails when the tree the operation publishes holds a non-CSV file under tables/."""
    CALLS.append(ctx)
    bad = [e.path for e in ctx.iter_objects("tables/") if not e.path.endswith(".csv")]
    if bad:
        raise ValueError(f"not CSV: {', '.join(bad)}")


def _private(ctx: HookContext) -> None:
    CALLS.append(ctx)


def prefer_source_for_csv(conflict):  # a conflict resolver, for `graveler merge --resolver`
    return "source" if conflict.path.endswith(".csv") else None
