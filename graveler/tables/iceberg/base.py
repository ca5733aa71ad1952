"""What the catalog's namespace and table operations share: the repository, how a change
becomes a commit (with the catalog's labels), and the checks every operation makes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from graveler.core import validate
from graveler.core.errors import AlreadyExists, InvalidArgument
from graveler.core.model import Commit
from graveler.tables.iceberg import state as st
from graveler.tables.iceberg.commit import Edit, commit_message, commit_on_branch
from graveler.tables.iceberg.fileio import NamespaceIO
from graveler.tables.iceberg.names import POINTER, TableName, check_levels, marker_key
from graveler.versioning.writes import store_object
from graveler.views.context import RepoContext


class CatalogBase:
    """The Iceberg namespaces and tables of ``repo`` (see
    :class:`graveler.tables.iceberg.catalog.IcebergCatalog`); ``committer`` names the
    commits it makes; ``labels`` (user metadata) are recorded on those commits and on the
    pointer entries it writes (an orchestrator names the run that wrote a table with them)."""

    def __init__(
        self,
        repo: RepoContext,
        *,
        committer: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> None:
        self.repo = repo
        self.committer = committer
        self.labels = validate.metadata(labels)
        #: The commit the last change through this catalog made (or found, when it changed
        #: nothing), for callers that record which version they wrote.
        self.last_commit: str | None = None
        self.storage = repo.info.storage_namespace

    def io(self) -> NamespaceIO:
        return NamespaceIO(self.repo.store, self.storage)

    def at(self, ref: str) -> st.RefAt:
        return st.resolve_ref(self.repo, ref)

    def _commit(self, branch: str, build: Any) -> tuple[Commit, Edit]:
        def labelled(head: Commit) -> Edit:
            edit: Edit = build(head)
            if self.labels:
                edit.metadata = {**self.labels, **edit.metadata}
                for key, entry in edit.changes.items():
                    if entry is not None and key.endswith("/" + POINTER):
                        metadata = {**entry.metadata, **self.labels}
                        edit.changes[key] = replace(entry, metadata=metadata)
            return edit

        done = commit_on_branch(self.repo, branch, labelled, committer=self.committer)
        self.last_commit = done[0].id
        return done

    def _new_namespace(self, levels: Sequence[str]) -> tuple[str, ...]:
        path = check_levels(tuple(levels))
        if not path:
            raise AlreadyExists("the ref level of a namespace is a branch: create the branch")
        return path

    def _require_namespace(self, head: Commit, ref: str, levels: tuple[str, ...]) -> None:
        st.require_namespace(self.repo, st.RefAt(ref, head, None), levels)

    def _namespace_props(self, head: Commit, ref: str, levels: tuple[str, ...]) -> dict[str, str]:
        return st.namespace_properties(self.repo, st.RefAt(ref, head, None), levels)

    def _require_table(self, head: Commit, ref: str, name: TableName) -> st.TableState:
        return st.require_table(self.repo, st.RefAt(ref, head, None), name)

    def _check_new_table(self, head: Commit, ref: str, name: TableName) -> None:
        """The namespace exists, and neither a table nor a namespace has the name."""
        self._require_namespace(head, ref, name.namespace)
        if st.read_table(self.repo, head.id, name) is not None:
            raise AlreadyExists(f"table {name} already exists at {ref!r}")
        if st.namespace_exists(self.repo, head.id, (*name.namespace, name.name)):
            raise AlreadyExists(f"a namespace named {name} exists at {ref!r}")

    def _marker_edit(self, path: tuple[str, ...], props: dict[str, str], what: str) -> Edit:
        key = marker_key(path)
        entry = store_object(self.repo, key, st.encode_properties(props))
        shown = ".".join(path)
        return Edit({key: entry}, commit_message(what, shown, {}), {"iceberg.namespace": shown})


def checked_properties(values: Mapping[str, str] | None) -> dict[str, str]:
    if values is not None and not isinstance(values, Mapping):
        raise InvalidArgument("properties must map strings to strings")
    out: dict[str, str] = {}
    for k, v in (values or {}).items():
        if not isinstance(k, str) or not k or not isinstance(v, str):
            raise InvalidArgument(f"properties must map strings to strings: {k!r:.60}")
        out[validate.text(k, "property name")] = validate.text(v, f"property {k!r:.40}")
    return out
