"""Merging a ref into a branch, with lakectl's options.

A merge lands on the destination in one of three shapes:

* a **fast-forward**: the destination simply moves to the source commit (possible when the
  destination's head is an ancestor of the source); no commit is made, so no message or
  metadata is recorded;
* a **merge commit** with two parents (destination head, source), whose tree is the three-way
  merge of both over their merge base;
* a **squash** commit: the same tree, with the destination head as its only parent (lakectl's
  ``--squash``): the destination's history does not include the source's commits.

:class:`MergeOptions` chooses: by default a merge fast-forwards when it can and makes a merge
commit otherwise; ``fast_forward=False`` (``--no-ff``) always makes a commit; ``ff_only``
(``--ff-only``) merges only by fast-forward and otherwise raises NotFastForward; ``squash``
makes a squash commit. A source already merged (it is an ancestor of the destination) raises
NoChanges, unless ``allow_empty`` (``--allow-empty``): then a commit is made all the same (its
tree is the destination's; it has one parent when source and destination are the same
commit), recording the merge and its metadata, as lakeFS does when asked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graveler.core import validate
from graveler.core.errors import DirtyBranch, InvalidArgument, InvalidRef, NoChanges, NotFastForward
from graveler.core.hookevents import EventRecord, HookEvent
from graveler.core.model import Branch, Commit, MergeResult
from graveler.storage.committed.merge import MergeStrategy
from graveler.versioning.commit import _committer, advance_branch, retry_moved
from graveler.versioning.conflicts import (
    LAKEFS_MERGE_STRATEGY_KEY,
    ConflictResolver,
    lakefs_strategy_name,
    record_resolver,
)
from graveler.views.context import RepoContext, hooked
from graveler.views.history import make_commit, merge_base
from graveler.views.refexpr import parse_ref

#: Commit metadata key recording the strategy of a merge commit (when one was given).
MERGE_STRATEGY_KEY = ".graveler.merge.strategy"
#: ... and the tables' strategy, when it differs (``table_strategy``).
TABLE_STRATEGY_KEY = ".graveler.merge.table_strategy"
#: ``table_strategy``'s default: a table is settled by ``strategy``, as files are.
SAME_STRATEGY = "same"


@dataclass(frozen=True, slots=True)
class MergeOptions:
    """How a merge lands (module docstring). Contradictory combinations raise
    InvalidArgument: ``ff_only`` with ``fast_forward=False``, ``squash`` or ``allow_empty``
    (each of those makes a commit, which ``ff_only`` never does)."""

    fast_forward: bool = True
    ff_only: bool = False
    squash: bool = False
    allow_empty: bool = False

    def __post_init__(self) -> None:
        for name in ("fast_forward", "ff_only", "squash", "allow_empty"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidArgument(f"merge option {name} must be True or False")
        if self.ff_only:
            clash = [
                flag
                for flag, on in (
                    ("--no-ff (fast_forward=False)", not self.fast_forward),
                    ("--squash", self.squash),
                    ("--allow-empty", self.allow_empty),
                )
                if on
            ]
            if clash:
                raise InvalidArgument(
                    f"--ff-only never makes a commit, and {' and '.join(clash)} always does: "
                    "choose one"
                )

    @property
    def may_fast_forward(self) -> bool:
        return self.fast_forward and not self.squash


def merge(
    repo: RepoContext,
    source: str,
    dest: str,
    *,
    strategy: str | None = None,
    message: str | None = None,
    metadata: Mapping[str, str] | None = None,
    committer: str | None = None,
    fast_forward: bool = True,
    ff_only: bool = False,
    squash: bool = False,
    allow_empty: bool = False,
    resolver: ConflictResolver | None = None,
    table_strategy: str | None = SAME_STRATEGY,
) -> MergeResult:
    """Merge the commit ``source`` resolves to into branch ``dest``; returns dest's head
    before and after. ``fast_forward``, ``ff_only``, ``squash`` and ``allow_empty`` are
    :class:`MergeOptions` (module docstring). Conflicting keys go to ``resolver`` first (see
    :mod:`graveler.versioning.conflicts`), then to ``strategy``. A table (Delta Lake...) both sides
    changed is merged by its format (:mod:`graveler.tables`); when that conflicts,
    ``table_strategy`` takes it whole from one side (default: the same as ``strategy``;
    None raises TableConflict). A new commit records the strategy under
    lakeFS's key ``.lakefs.merge.strategy`` (``default`` when none) as well as ``metadata``.
    Raises NoChanges when ``source`` is already merged (unless ``allow_empty``),
    NotFastForward (``ff_only``), MergeConflict (with the conflicting paths) when neither
    resolver nor strategy decides a conflict, DirtyBranch when ``dest`` has uncommitted
    changes, HookAborted when a pre-merge hook fails, InvalidArgument for contradictory
    options and InvalidRef for a destination that is not a plain branch name (``main$``)."""
    options = MergeOptions(fast_forward, ff_only, squash, allow_empty)
    job = _Merge(repo, source, dest, options, resolver)
    job.prepare(strategy, message, metadata, committer, table_strategy)
    return retry_moved(job.attempt, f"merge into {dest!r}")


class _Merge:
    """One merge call: what is fixed before the first attempt, and one attempt."""

    def __init__(
        self,
        repo: RepoContext,
        source: str,
        dest: str,
        options: MergeOptions,
        resolver: ConflictResolver | None,
    ) -> None:
        self.repo, self.source, self.dest, self.options = repo, source, dest, options
        self.records = record_resolver(resolver)

    def prepare(
        self,
        strategy: str | None,
        message: str | None,
        metadata: Mapping[str, str] | None,
        committer: str | None,
        table_strategy: str | None = SAME_STRATEGY,
    ) -> None:
        if not parse_ref(self.dest).is_plain:
            raise InvalidRef(
                f"cannot merge into {self.dest!r}: the destination is a branch name, "
                "without modifiers such as '@' or '$'"
            )
        self.strategy = MergeStrategy.parse(strategy)
        self.meta = validate.metadata(metadata)
        if message is not None:
            validate.text(message, "merge message")
        self.who = _committer(committer)
        self.src = self.repo.resolve(self.source).commit
        if self.strategy is not MergeStrategy.NONE:
            self.meta[MERGE_STRATEGY_KEY] = self.strategy.value
        self.meta[LAKEFS_MERGE_STRATEGY_KEY] = lakefs_strategy_name(self.strategy)
        self.table_strategy = self.strategy
        if table_strategy != SAME_STRATEGY:
            self.table_strategy = MergeStrategy.parse(table_strategy)
        if self.table_strategy is not self.strategy:
            self.meta[TABLE_STRATEGY_KEY] = self.table_strategy.value
        self.text = message or f"Merge '{self.source}' into '{self.dest}'"

    def attempt(self) -> MergeResult:
        repo, src = self.repo, self.src
        b = _clean_branch(repo, self.dest, "merge into")
        head = repo.get_commit(b.commit_id)
        base = merge_base(repo.get_commit, src, head)
        fast = self._fast_forward(base, head)
        proposed = src if fast else self._commit(base, head)
        event = EventRecord(
            HookEvent.PRE_MERGE,
            proposed,
            branch=self.dest,
            source_ref=src.id,
            merge_source=self.source,
        )
        with hooked(repo, event):
            merged = advance_branch(repo, b, proposed, record=not fast)
        return MergeResult(head, merged, fast)

    def _fast_forward(self, base: Commit | None, head: Commit) -> bool:
        """Whether this attempt fast-forwards; raises NoChanges or NotFastForward."""
        merged = base is not None and base.id == self.src.id
        if merged and not self.options.allow_empty:
            raise NoChanges(f"{self.source!r} is already merged into {self.dest!r}")
        possible = base is not None and base.id == head.id and not merged
        if self.options.ff_only and not possible:
            raise NotFastForward(
                f"cannot fast-forward {self.dest!r} to {self.source!r}: {self.dest!r} has "
                "commits the source does not (--ff-only); merge without --ff-only, or rebase "
                "the source on it"
            )
        return possible and self.options.may_fast_forward

    def _commit(self, base: Commit | None, head: Commit) -> Commit:
        """The merge (or squash) commit of this attempt; tables both sides changed are merged
        as tables (by the repository's table planner, see
        :class:`graveler.views.context.TableMerges`), the rest key by key."""
        src = self.src
        base_tree = base.metarange_id if base is not None else ""
        plan = self.repo.table_merges
        tables = (
            None
            if plan is None
            else plan(
                self.repo,
                base,
                src,
                head,
                self.table_strategy,
                source_ref=self.source,
                dest_ref=self.dest,
            )
        )
        tree, _ = self.repo.committed.merge(
            base_tree, src.metarange_id, head.metarange_id, self.strategy, self.records, tables
        )
        parents = [head] if self.options.squash or src.id == head.id else [head, src]
        return make_commit(parents, tree, self.text, self.who, self.meta)


def _clean_branch(repo: RepoContext, name: str, what: str) -> Branch:
    view = repo.staging.branch_view(repo.name, name)
    if not view.clean:
        raise DirtyBranch(
            f"cannot {what} {name!r}: it has uncommitted changes; commit or reset them first"
        )
    return view.branch
