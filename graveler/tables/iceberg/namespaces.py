"""Iceberg namespaces: folders of a ref's tree with a marker holding their properties
(:mod:`graveler.tables.iceberg.names`). Every change is one commit on the branch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from graveler.core import validate
from graveler.core.errors import AlreadyExists, InvalidArgument, TableNamespaceNotEmpty
from graveler.core.model import Commit
from graveler.tables.iceberg import state as st
from graveler.tables.iceberg.base import CatalogBase, checked_properties
from graveler.tables.iceberg.commit import Edit, commit_message
from graveler.tables.iceberg.names import TableName, check_levels, marker_key


class NamespaceOps(CatalogBase):
    """Listing, reading, creating, changing and dropping namespaces."""

    def list_namespaces(self, ref: str, parent: Sequence[str] = ()) -> list[tuple[str, ...]]:
        at, levels = self.at(ref), check_levels(tuple(parent))
        st.require_namespace(self.repo, at, levels)
        spaces, _ = st.children(self.repo, at.commit.id, levels)
        return [(*levels, s) for s in spaces]

    def load_namespace(self, ref: str, levels: Sequence[str]) -> dict[str, str]:
        return st.namespace_properties(self.repo, self.at(ref), check_levels(tuple(levels)))

    def create_namespace(
        self, ref: str, levels: Sequence[str], properties: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        path, props = self._new_namespace(levels), checked_properties(properties)
        branch = self.at(ref).writable().name

        def build(head: Commit) -> Edit:
            if st.namespace_exists(self.repo, head.id, path):
                raise AlreadyExists(f"namespace {'.'.join(path)!r} already exists at {ref!r}")
            self._require_namespace(head, ref, path[:-1])
            if st.read_table(self.repo, head.id, TableName(path[:-1], path[-1])) is not None:
                raise AlreadyExists(f"a table named {'.'.join(path)!r} exists at {ref!r}")
            return self._marker_edit(path, props, "create namespace")

        self._commit(branch, build)
        return props

    def update_namespace(
        self, ref: str, levels: Sequence[str], removals: Sequence[str], updates: Mapping[str, str]
    ) -> tuple[list[str], list[str], list[str]]:
        """Set and remove properties; returns (updated, removed, missing)."""
        path, new = check_levels(tuple(levels)), checked_properties(updates)
        gone = [validate.text(k, "property name") for k in removals]
        if not path:
            raise InvalidArgument("the ref level of a namespace has no properties to change")
        if set(gone) & set(new):
            raise InvalidArgument(
                f"properties both set and removed: {sorted(set(gone) & set(new))}"
            )
        branch = self.at(ref).writable().name

        def build(head: Commit) -> Edit:
            current = self._namespace_props(head, ref, path)
            edit = self._marker_edit(
                path,
                {k: v for k, v in {**current, **new}.items() if k not in gone},
                "update namespace",
            )
            removed = sorted(k for k in gone if k in current)
            edit.result = (sorted(new), removed, sorted(k for k in gone if k not in current))
            return edit

        _, edit = self._commit(branch, build)
        result: tuple[list[str], list[str], list[str]] = edit.result
        return result

    def drop_namespace(self, ref: str, levels: Sequence[str]) -> None:
        path = check_levels(tuple(levels))
        if not path:
            raise InvalidArgument("the ref level of a namespace is a branch: delete the branch")
        branch = self.at(ref).writable().name

        def build(head: Commit) -> Edit:
            self._require_namespace(head, ref, path)
            spaces, tables = st.children(self.repo, head.id, path)
            if spaces or tables:
                raise TableNamespaceNotEmpty(
                    f"namespace {'.'.join(path)!r} holds {len(tables)} table(s) and "
                    f"{len(spaces)} namespace(s) at {ref!r}"
                )
            message = commit_message("drop namespace", ".".join(path), {})
            return Edit({marker_key(path): None}, message, {"iceberg.namespace": ".".join(path)})

        self._commit(branch, build)
