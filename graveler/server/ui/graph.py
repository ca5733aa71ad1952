"""The log as a graph of merges: the first-parent lane of a ref, and beside each merge commit
the commits it merged in.

Lane 0 is the ref's first-parent history (what ``main`` went through, one commit per
publication). After a merge commit come, on lane 1, the commits of the merged branch that
lane 0 did not have: the merged parent's first-parent chain down to the merge base of the
two parents (at most ``SIDE_LIMIT`` of them). That is how a pipeline's history reads:
``main`` as a line of merges, each with the run's own commits beside it.

A page is ``amount`` lane-0 commits starting at a commit ID, so pages never overlap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice

from graveler.core.model import Commit
from graveler.repository import Repository
from graveler.views.history import merge_base

#: Merged-branch commits shown beside one merge commit.
SIDE_LIMIT = 20


@dataclass(frozen=True)
class GraphRow:
    """One row of the drawing. ``lane`` is 0 (first parents) or 1 (a merged branch).
    ``up`` / ``down``: the row's lane line continues above / below the commit's dot;
    ``fork``: a merge commit whose merged commits follow on lane 1; ``join``: the last
    merged commit shown, whose line bends back to lane 0. ``hidden`` counts merged
    commits left out after this row (only on a ``join`` row)."""

    commit: Commit
    lane: int
    up: bool
    down: bool
    fork: bool = False
    join: bool = False
    hidden: int = 0


@dataclass(frozen=True)
class GraphPage:
    rows: list[GraphRow]
    next_commit: str | None


def graph_page(repo: Repository, start: str, amount: int, continued: bool = False) -> GraphPage:
    """``amount`` first-parent commits from ``start`` (a ref or commit ID), each merge
    commit followed by the commits it merged in. ``continued``: ``start`` is where the
    previous page ended (the lane then comes from above)."""
    lane0 = list(repo.log(start, amount=amount + 1, first_parent=True))
    shown, following = lane0[:amount], lane0[amount:]
    rows: list[GraphRow] = []
    for i, commit in enumerate(shown):
        side = _merged(repo.get_commit, commit) if len(commit.parents) > 1 else []
        up = i > 0 or continued
        rows.append(GraphRow(commit, 0, up=up, down=bool(commit.parents), fork=bool(side)))
        rows.extend(_side_rows(side))
    return GraphPage(rows, following[0].id if following else None)


def _merged(get: Callable[[str], Commit], merge: Commit) -> list[Commit]:
    """The merged branch's commits (newest first) down to the merge base, at most
    SIDE_LIMIT + 1 of them (one more than shown, to know that some are hidden)."""
    first, second = get(merge.parents[0]), get(merge.parents[1])
    base = merge_base(get, first, second)
    stop = base.id if base is not None else None
    return list(islice(_chain(get, second, stop), SIDE_LIMIT + 1))


def _chain(get: Callable[[str], Commit], commit: Commit, stop: str | None) -> Iterator[Commit]:
    """``commit`` and its first parents, up to (without) ``stop``."""
    while commit.id != stop:
        yield commit
        if not commit.parents:
            return
        commit = get(commit.parents[0])


def _side_rows(side: list[Commit]) -> list[GraphRow]:
    shown = side[:SIDE_LIMIT]
    hidden = len(side) - len(shown)
    last = len(shown) - 1
    return [
        GraphRow(c, 1, up=True, down=i < last, join=i == last, hidden=hidden if i == last else 0)
        for i, c in enumerate(shown)
    ]
