"""The port a table format implements, and what a format's merge gets to work with.

A format is a small object (one module or package per format, listed in
:mod:`graveler.tables.registry`):

* :meth:`TableFormat.table_root` maps a changed path to the root prefix of the table whose
  *metadata* it is (``"sales/orders/"`` for ``sales/orders/_delta_log/00..1.json``), or None.
  Data files alone do not identify a table: every table commit writes metadata.
* :meth:`TableFormat.merge` gets a :class:`TableMergeContext` for one table that both sides
  changed since the merge base, and returns the changes that turn the destination's table
  into the merged one (:class:`TableChange`, paths under the root), or raises
  :class:`graveler.core.errors.TableConflict`.
* :meth:`TableFormat.diff` (optional: a format without it shows its tables as files) gets a
  :class:`TableDiffContext` for one table whose metadata differs between two commits and
  describes the difference as table versions (:class:`TableDiff`): the commits or
  snapshots one side has and the other lacks, with their operations, files and rows, and
  the columns whose schema changed.

The context reads any of the three sides by path (committed trees only: a merge works on
commits) and writes new objects into the repository's namespace; the merge stages what it
returns in the merge commit, so an object written for a merge that then fails is garbage
that GC collects, never a visible change.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from graveler.core import validate
from graveler.core.errors import ObjectNotFound
from graveler.storage import entry as entries
from graveler.storage.entry import ObjectEntry
from graveler.versioning.writes import store_object
from graveler.views.context import RepoContext
from graveler.views.reads import iter_objects, read_entry, stat_many

if TYPE_CHECKING:
    from concurrent.futures import Future


class Side(StrEnum):
    """The three commits of a three-way merge."""

    BASE = "base"
    SOURCE = "source"
    DEST = "dest"


@dataclass(frozen=True, slots=True)
class TableChange:
    """The merged table's entry at ``path`` (absolute in the repository, under the table's
    root), or its removal (``entry`` None)."""

    path: str
    entry: ObjectEntry | None


class TableFormat(Protocol):
    """One table format (see the module docstring)."""

    #: A short name shown to users: ``delta``, ``iceberg``.
    name: str

    def table_root(self, path: str) -> str | None:
        """The root prefix (ending in ``/``, or ``""`` for a table at the repository's root)
        of the table whose metadata ``path`` is, or None when ``path`` is not table
        metadata of this format."""
        ...

    def merge(self, ctx: TableMergeContext) -> list[TableChange]:
        """The changes that turn the destination's table into the merge of both sides;
        raises TableConflict when the format's own rules refuse the merge."""
        ...


@runtime_checkable
class TableDiffer(Protocol):
    """A format that can describe a table's difference between two commits."""

    def diff(self, ctx: TableDiffContext) -> TableDiff:
        """How the table at ``ctx.root`` differs from ``ctx.left`` to ``ctx.right``."""
        ...


@dataclass(frozen=True)
class TableMergeContext:
    """One table changed on both sides of a merge: where it lives, and how to read the three
    commits and write new objects. ``base`` is None when the two histories share no
    commit. Reads are at commit IDs, so they are consistent for the whole merge."""

    repo: RepoContext
    format: str
    root: str
    base: str | None
    source: str
    dest: str
    #: The ref expressions the user named (for messages).
    source_ref: str
    dest_ref: str
    #: Objects the format wrote with ``durable=False`` for the changes it returned, being
    #: made durable in the background (each future gives the object's key once it is): the
    #: merge waits for them with its tree's files, before the commit is recorded.
    flushing: list[Future[str]] = field(default_factory=list, compare=False)

    def commit_of(self, side: Side) -> str | None:
        return {Side.BASE: self.base, Side.SOURCE: self.source, Side.DEST: self.dest}[side]

    def list(self, side: Side, prefix: str = "") -> Iterator[ObjectEntry]:
        """Entries under ``root + prefix`` at ``side``, in path order (none at a missing
        base)."""
        commit = self.commit_of(side)
        if commit is None:
            return iter(())
        return iter_objects(self.repo, commit, prefix=self.root + prefix)

    def stat(self, side: Side, path: str) -> ObjectEntry | None:
        """The entry at the absolute ``path`` at ``side``, or None."""
        commit = self.commit_of(side)
        if commit is None:
            return None
        return stat_many(self.repo, commit, [path])[0]

    def read(self, side: Side, path: str) -> bytes:
        """The bytes at the absolute ``path`` at ``side``; ObjectNotFound when absent."""
        entry = self.stat(side, path)
        if entry is None:
            raise ObjectNotFound(f"{path!r} not found at the merge's {side.value}")
        return read_entry(self.repo, entry)

    def changes(self, side: Side) -> Iterator[TableChange]:
        """What ``side`` changed under the root since the base, in path order (the entry
        there, or None where it removed one): a format carries the data files of the side
        it replays with these."""
        commit = self.commit_of(side)
        if commit is None:
            return
        base_mr = self.repo.get_commit(self.base).metarange_id if self.base else ""
        side_mr = self.repo.get_commit(commit).metarange_id
        for d in self.repo.committed.diff(base_mr, side_mr, self.root.encode()):
            entry = entries.decode(d.key, d.right.value) if d.right is not None else None
            yield TableChange(d.key.decode(), entry)

    def write(self, path: str, data: bytes, *, content_type: str | None = None) -> TableChange:
        """Store ``data`` as a new, durable object for ``path`` (not staged: return the change
        from :meth:`TableFormat.merge` to put it in the merge commit)."""
        validate.object_key(path)
        return TableChange(path, store_object(self.repo, path, data, content_type=content_type))


# --- diff ---------------------------------------------------------------------------------


class DiffSide(StrEnum):
    """The two commits of a diff."""

    LEFT = "left"
    RIGHT = "right"


@dataclass(frozen=True, slots=True)
class TableVersion:
    """One version of a table (a Delta commit, an Iceberg snapshot) that one side of a diff
    has and the other lacks; ``version`` identifies it (a Delta commit's version number, an
    Iceberg snapshot's ID). Row counts are None when the writer recorded none."""

    version: int
    operation: str
    timestamp: datetime | None
    files_added: int
    files_removed: int
    rows_added: int | None
    rows_removed: int | None
    parameters: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ColumnChange:
    """A top-level column ``added``, ``removed`` or ``changed`` (type or nullability) from
    the left side's schema to the right side's, types as the format spells them; or
    ``renamed`` (formats that track columns by ID, as Iceberg: ``before`` and ``after`` are
    the names)."""

    column: str
    change: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class TableDiff:
    """How one table differs from the left commit to the right one: the versions only the
    right side has (``added``, oldest first), those only the left side has (``removed``),
    and the schema's column changes."""

    root: str
    format: str
    added: tuple[TableVersion, ...] = ()
    removed: tuple[TableVersion, ...] = ()
    columns: tuple[ColumnChange, ...] = ()

    def total(self, name: str) -> int | None:
        """The sum of ``name`` (``files_added``, ``rows_removed``...) over the added
        versions; None when a row count is unknown."""
        values = [getattr(v, name) for v in self.added]
        return None if any(v is None for v in values) else sum(values)


@dataclass(frozen=True)
class TableDiffContext:
    """One table whose metadata differs between two commits: read either side by path, and
    list what changed under the root."""

    repo: RepoContext
    format: str
    root: str
    left: str
    right: str

    def commit_of(self, side: DiffSide) -> str:
        return self.left if side is DiffSide.LEFT else self.right

    def stat(self, side: DiffSide, path: str) -> ObjectEntry | None:
        return stat_many(self.repo, self.commit_of(side), [path])[0]

    def read(self, side: DiffSide, path: str) -> bytes | None:
        """The bytes at the absolute ``path`` at ``side``, or None when there is none."""
        entry = self.stat(side, path)
        return None if entry is None else read_entry(self.repo, entry)

    def list(self, side: DiffSide, prefix: str = "") -> Iterator[ObjectEntry]:
        return iter_objects(self.repo, self.commit_of(side), prefix=self.root + prefix)

    def changes(self) -> Iterator[tuple[str, ObjectEntry | None, ObjectEntry | None]]:
        """``(path, left entry, right entry)`` of each path under the root that differs."""
        left = self.repo.get_commit(self.left).metarange_id
        right = self.repo.get_commit(self.right).metarange_id
        for d in self.repo.committed.diff(left, right, self.root.encode()):
            yield (
                d.key.decode(),
                entries.decode(d.key, d.left.value) if d.left is not None else None,
                entries.decode(d.key, d.right.value) if d.right is not None else None,
            )
