"""fsck's check of an Iceberg table: every file its current metadata references must be an
entry of the commit, under the table, at the same physical address (the tree then makes GC
keep it and fsck check that it exists)."""

from __future__ import annotations

from collections.abc import Iterator

from graveler.core.errors import CorruptFile, GravelerError
from graveler.tables.iceberg import jsonio
from graveler.tables.iceberg.fileio import NamespaceIO
from graveler.tables.iceberg.files import referenced
from graveler.tables.iceberg.names import POINTER, address_of, key_for
from graveler.views.context import RepoContext
from graveler.views.reads import read_entry, stat_many


def missing_files(repo: RepoContext, commit_id: str, root: str) -> Iterator[tuple[str, str]]:
    """(subject, detail) for each referenced file the commit does not hold."""
    pointer = stat_many(repo, commit_id, [root + POINTER])[0]
    if pointer is None:
        return
    namespace = repo.info.storage_namespace
    io = NamespaceIO(repo.store, namespace)
    try:
        doc = jsonio.loads(read_entry(repo, pointer))
        location = address_of(namespace, doc["location"])
        addresses = [io.address(u) for u in referenced(io, doc)]
        wanted = {key_for(root, location, a): a for a in addresses}
    except (GravelerError, ValueError, KeyError, TypeError) as exc:
        kind = "unreadable" if isinstance(exc, CorruptFile) else "invalid"
        yield root + POINTER, f"table metadata or manifests are {kind}: {exc}"
        return
    keys = sorted(wanted)
    for start in range(0, len(keys), 1000):
        chunk = keys[start : start + 1000]
        for key, entry in zip(chunk, stat_many(repo, commit_id, chunk), strict=True):
            if entry is None or entry.physical_address != wanted[key]:
                yield wanted[key], f"table {root!r} references it, the commit has no entry {key!r}"
