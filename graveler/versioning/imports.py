"""Import: commit objects that already exist outside the repository, without copying them.

``Repository.import_data("main", "s3://bucket/raw/", "raw/")`` lists the source and commits on
the branch one entry per object, whose address is *external* (the object's full URI; see
:mod:`graveler.storage.entry`). Several sources, prefixes and single objects
(:class:`~graveler.versioning.import_sources.ImportSource`), go into one commit. As in lakeFS:

* the import is one commit on the branch (pre-commit and post-commit hooks run), recording
  ``.lakefs.merge.strategy: source-wins``; the branch must have no uncommitted changes, and
  nothing may block commits on it (protection);
* everything under each prefix source's destination is replaced by the imported objects
  (objects there that the source does not hold are removed); an object source replaces its
  one path; when two sources land on one path, the later source wins;
* no source may overlap the storage namespace of any repository of this deployment.

It runs in two phases. *Ingest* lists the sources and reads each object once to record its
SHA-256, a batch at a time, into a temporary file on local disk (:class:`graveler.storage.
spill.Spill`: memory stays bounded however many objects there are); after every batch it
reports how many objects it has ingested (``progress``) and stops if ``canceled`` says so.
*Commit* builds the tree from the spilled entries over the branch head and moves the branch.
A canceled or failed import commits nothing, stages nothing and removes its temporary file;
tree files it may have written are unreferenced and left to garbage collection, as those of
any commit that did not land.

Garbage collection never deletes an imported object: it only ever lists and deletes inside the
repository's own namespace. fsck checks that each imported object still exists with its
recorded size (and, with ``verify_objects``, its SHA-256); reads verify both, so an object
changed at the source after the import is refused as corrupt rather than served.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from graveler.core import validate
from graveler.core.errors import ImportCanceled, InvalidArgument, NoChanges
from graveler.core.hookevents import EventRecord, HookEvent
from graveler.core.model import Commit
from graveler.storage.committed.apply import Change
from graveler.storage.committed.record import ValueRecord
from graveler.storage.spill import Spill
from graveler.versioning.cherrypick import clean_branch
from graveler.versioning.commit import _committer, advance_branch, retry_moved
from graveler.versioning.conflicts import LAKEFS_MERGE_STRATEGY_KEY
from graveler.versioning.import_sources import ImportKind, ImportSource, Located, checked, entries
from graveler.views.context import RepoContext, hooked
from graveler.views.history import make_commit

IMPORT_SOURCE_KEY = ".graveler.import.source"
#: Objects ingested between two progress reports (and cancellation checks).
BATCH = 500


@dataclass(frozen=True, slots=True)
class ImportResult:
    """The import commit, how many paths it imported, and its sources (``source`` and
    ``destination``: the first one's)."""

    commit: Commit
    objects: int
    source: str
    destination: str
    sources: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ImportControl:
    """How a caller follows and steers an import: ``progress`` gets the number of objects
    ingested so far after each batch, ``canceled`` is asked between batches (True stops the
    import: ImportCanceled), ``before_commit`` sees the proposed commit just before the branch
    moves (it may raise to stop the import; nothing is committed then)."""

    progress: Callable[[int], object] | None = None
    canceled: Callable[[], bool] | None = None
    before_commit: Callable[[Commit], object] | None = None

    def check(self) -> None:
        if self.canceled is not None and self.canceled():
            raise ImportCanceled("the import was canceled: nothing was committed")


def import_data(
    repo: RepoContext,
    branch: str,
    source: str | ImportSource | Sequence[ImportSource],
    destination: str = "",
    *,
    message: str | None = None,
    metadata: Mapping[str, str] | None = None,
    committer: str | None = None,
    control: ImportControl | None = None,
) -> ImportResult:
    """Import ``source`` (a ``file:///dir`` or ``s3://bucket/prefix`` URI imported to the
    ``destination`` prefix, or :class:`ImportSource` values: prefixes and single objects,
    each with its destination) into ``branch`` as one commit; see the module docstring.
    Raises InvalidURI / InvalidArgument (bad source, overlap with a namespace, bad key),
    DirtyBranch, ProtectedBranch, NoChanges, HookAborted, ImportCanceled; nothing changes
    then."""
    ctl = control or ImportControl()
    located = checked(repo, _sources(source, destination))
    fields = (*_commit_fields(located, message, metadata), _committer(committer))
    clean_branch(repo, branch, "import")
    with Spill(prefix="graveler-import-") as spill:
        _ingest(repo, located, spill, ctl)
        attempt = partial(_commit, repo, branch, located, spill, fields, ctl)
        commit = retry_moved(attempt, f"import into {branch!r}")
        count = len(spill)
    first = located[0]
    return ImportResult(commit, count, first.uri, first.destination, tuple(s.uri for s in located))


def _sources(
    source: str | ImportSource | Sequence[ImportSource], destination: str
) -> list[ImportSource]:
    if isinstance(source, str):
        return [ImportSource.prefix(source, destination)]
    if destination:
        raise InvalidArgument("give each ImportSource its destination (not destination=)")
    return [source] if isinstance(source, ImportSource) else list(source)


def _ingest(repo: RepoContext, located: list[Located], spill: Spill, ctl: ImportControl) -> int:
    """Phase one: every source's entries into ``spill``, a batch at a time; returns how many
    objects were read."""
    done = 0
    batch: list[tuple[bytes, bytes]] = []
    ctl.check()
    for src in located:
        for entry in entries(repo, src):
            batch.append((entry.key, _pack(entry.to_record())))
            if len(batch) == BATCH:
                done = _flush(spill, batch, done, ctl)
    _flush(spill, batch, done, ctl)
    return done + len(batch)


def _flush(spill: Spill, batch: list[tuple[bytes, bytes]], done: int, ctl: ImportControl) -> int:
    spill.put_many(batch)
    done += len(batch)
    batch.clear()
    if ctl.progress is not None:
        ctl.progress(done)
    ctl.check()
    return done


def _commit(
    repo: RepoContext,
    branch: str,
    located: list[Located],
    spill: Spill,
    fields: tuple[str, dict[str, str], str],
    ctl: ImportControl,
) -> Commit:
    """Phase two, one try: the tree of the spilled entries over the branch's current head,
    committed."""
    text, meta, who = fields
    b = clean_branch(repo, branch, "import")
    head = repo.get_commit(b.commit_id)
    changes = _replacing(repo, head.metarange_id, _replaced(located), spill, ctl)
    tree, _ = repo.committed.apply(head.metarange_id, changes)
    if tree == head.metarange_id:
        raise NoChanges(f"importing into {branch!r} changes nothing")
    proposed = make_commit([head], tree, text, who, meta)
    ctl.check()
    if ctl.before_commit is not None:
        ctl.before_commit(proposed)
    event = EventRecord(HookEvent.PRE_COMMIT, proposed, branch=branch, source_ref=branch)
    with hooked(repo, event):
        new = advance_branch(repo, b, proposed)
    return new


def _commit_fields(
    located: list[Located], message: str | None, metadata: Mapping[str, str] | None
) -> tuple[str, dict[str, str]]:
    meta = validate.metadata(metadata)
    meta[LAKEFS_MERGE_STRATEGY_KEY] = "source-wins"
    uris = [s.uri for s in located]
    meta[IMPORT_SOURCE_KEY] = uris[0] if len(uris) == 1 else json.dumps(uris)
    text = message if message is not None else f"Import from {', '.join(uris)}"[:1000]
    if not isinstance(text, str) or not text.strip():
        raise InvalidArgument("an import needs a non-empty message")
    return validate.text(text, "commit message"), meta


def _replaced(located: list[Located]) -> list[bytes]:
    """The prefixes whose existing keys the import replaces, sorted, none inside another."""
    prefixes = sorted({s.replaces() for s in located if s.kind is ImportKind.PREFIX})
    kept: list[bytes] = []
    for p in prefixes:
        if not kept or not p.startswith(kept[-1]):
            kept.append(p)
    return kept


def _replacing(
    repo: RepoContext, metarange_id: str, prefixes: list[bytes], spill: Spill, ctl: ImportControl
) -> Iterator[Change]:
    """The imported entries, plus the removal of every existing key under a replaced prefix
    that the import does not hold, in key order; checks ``ctl`` every batch."""
    existing = (r.key for p in prefixes for r in repo.committed.iterate(metarange_id, prefix=p))
    old = next(existing, None)
    for n, (key, packed) in enumerate(spill.items(), 1):
        if n % BATCH == 0:
            ctl.check()
        while old is not None and old < key:
            yield Change(old, None)
            old = next(existing, None)
        if old == key:
            old = next(existing, None)
        yield Change(key, _unpack(key, packed))
    while old is not None:
        yield Change(old, None)
        old = next(existing, None)


def _pack(record: ValueRecord) -> bytes:
    """A record's identity and value as one spilled value (the key is the spill's key)."""
    return struct.pack(">I", len(record.identity)) + record.identity + record.value


def _unpack(key: bytes, packed: bytes) -> ValueRecord:
    (size,) = struct.unpack_from(">I", packed)
    return ValueRecord(key, packed[4 : 4 + size], packed[4 + size :])
