"""One page of a list of changes (a comparison, a commit's changes, a branch's uncommitted
changes), its rows grouped by the prefix (folder) they sit in.

A page reads at most ``amount + 1`` differences from a diff that starts past the previous
page's last path, so a page costs the same whether the comparison holds ten changes or a
million.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import groupby, islice

from graveler.server.ui.summary import Summary
from graveler.views.diff import Difference


def folder_of(path: str) -> str:
    """The prefix up to the last ``/`` of ``path`` (``""`` at the top)."""
    cut = path.rfind("/")
    return path[: cut + 1]


@dataclass(frozen=True)
class ChangeGroup:
    """Consecutive changes of one page under one folder."""

    folder: str
    rows: list[Difference]


@dataclass(frozen=True)
class ChangePage:
    """A page of changes: ``next_after`` continues the listing (None on the last page)."""

    groups: list[ChangeGroup]
    next_after: str | None
    count: int

    def summary(self, prefix: str) -> Summary | None:
        """The counts of the whole listing when this page holds all of it (no further page
        and not itself a continuation), else None."""
        if self.next_after is not None:
            return None
        found = Summary(prefix)
        found.count(row for group in self.groups for row in group.rows)
        return found


def page_of(diffs: Iterator[Difference], amount: int) -> ChangePage:
    """The next ``amount`` differences of ``diffs``, grouped by folder."""
    rows = list(islice(diffs, amount + 1))
    more = len(rows) > amount
    rows = rows[:amount]
    groups = [ChangeGroup(folder, list(items)) for folder, items in groupby(rows, _folder)]
    return ChangePage(groups, rows[-1].path if more else None, len(rows))


def _folder(d: Difference) -> str:
    return folder_of(d.path)
