"""The port a table format implements, and what a format's merge gets to work with.

A format is a small object (one module or package per format, listed in
:mod:`graveler.tables.registry`):

* :meth:`TableFormat.table_root` maps a changed path to the root prefix of the table whose
  *metadata* it is (``"sales/orders/"`` for ``sales/orders/_delta_log/00..1.json``), or None.
  Data files alone do not identify a table: every table commit writes metadata.
* :meth:`TableFormat.merge` gets a :class:`TableMergeContext` for one table that both sides
  changed since the merge base, and returns the changes that turn the destination's table
  into the merged one (:class:`TableChange`, paths under the root), or raises
  :class:`graveler.errors.TableConflict`.

The context reads any of the three sides by path (committed trees only: a merge works on
commits) and writes new objects into the repository's namespace; the merge stages what it
returns in the merge commit, so an object written for a merge that then fails is garbage
that GC collects, never a visible change.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from graveler import entry as entries
from graveler import validate
from graveler.context import RepoContext
from graveler.entry import ObjectEntry
from graveler.errors import ObjectNotFound
from graveler.reads import iter_objects, read_entry, stat_many
from graveler.writes import store_object


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
