"""Python hooks that the action files in tests/parity/test_hooks.py name by import path."""

from __future__ import annotations

from graveler import HookContext

CALLS: list[HookContext] = []


def require_owner(ctx: HookContext) -> str:
    """Fails unless the commit's metadata has the key named by the action's params; its
    output (text that rich would read as markup) names the value."""
    CALLS.append(ctx)
    key = ctx.params.get("key", "owner")
    if key not in ctx.commit.metadata:
        raise ValueError(f"commit needs metadata {key!r}")
    return f"[bold]{key}[/bold] is {ctx.commit.metadata[key]}"


def csv_only(ctx: HookContext) -> str:
    """Fails when the tree the operation publishes holds a non-CSV file under tables/; says
    how many files it checked (the hook's output) when it passes."""
    CALLS.append(ctx)
    paths = [e.path for e in ctx.iter_objects("tables/")]
    bad = [p for p in paths if not p.endswith(".csv")]
    if bad:
        raise ValueError(f"not CSV: {', '.join(bad)}")
    return f"{len(paths)} files under tables/, all CSV [ok]"


def _private(ctx: HookContext) -> None:
    CALLS.append(ctx)


def prefer_source_for_csv(conflict):  # a conflict resolver, for `graveler merge --resolver`
    return "source" if conflict.path.endswith(".csv") else None
