"""``GravelerFileSystem``: graveler repositories as an fsspec filesystem.

Paths are ``graveler://REPOSITORY/REF/KEY`` (``lakefs://`` too); see
:mod:`graveler_fsspec.paths`. Any ref expression reads (branch, tag, commit ID or prefix,
``main~1``, ``v1^2``); only plain branch names accept writes, anything else raises
:class:`~graveler_fsspec.errors.ReadOnlyRef` (a ``PermissionError``) before a byte is written.

Configuration (the instance's storage options):

* ``client``: an existing :class:`graveler.Graveler`, used as is (never closed by us);
* otherwise ``home``, ``database_url``, ``store_options`` and any other key of
  :mod:`graveler.config` (``s3_endpoint_url``, ...) build one lazily on first use, with the
  same defaults as ``Graveler`` (``GRAVELER_HOME``, ``GRAVELER_DATABASE_URL``).

fsspec caches instances by their options, so ``fsspec.filesystem("graveler", home=...)`` and
``pd.read_parquet("graveler://...", storage_options={"home": ...})`` share one client.
"""

from __future__ import annotations

import os
import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from fsspec.callbacks import DEFAULT_CALLBACK
from fsspec.spec import AbstractFileSystem, make_instance
from fsspec.utils import stringify_path

from graveler import ClientSettings, Graveler, ObjectEntry, Repository, shared_client
from graveler.errors import InvalidArgument
from graveler_fsspec import listing
from graveler_fsspec.bulk import upload_pairs
from graveler_fsspec.dirs import MadeDirs
from graveler_fsspec.errors import PathExists, PathNotFound, ReadOnlyBranch, ReadOnlyRef, translated
from graveler_fsspec.files import GravelerReadFile, GravelerWriteFile
from graveler_fsspec.listing import Info
from graveler_fsspec.paths import PROTOCOLS, GravelerPath, parse_path, require_key, strip_protocol
from graveler_fsspec.transaction import GravelerTransaction

#: Up to this many paths, ``rm`` checks each one; beyond, it scans their common prefix once.
_RM_STAT_LIMIT = 32


class GravelerFileSystem(AbstractFileSystem):  # type: ignore[misc]
    """fsspec filesystem over graveler repositories; see the module docstring."""

    protocol: tuple[str, ...] = PROTOCOLS
    root_marker = ""
    transaction_type = GravelerTransaction

    def __init__(
        self,
        home: str | None = None,
        database_url: str | None = None,
        store_options: Mapping[str, Any] | None = None,
        client: Graveler | None = None,
        **storage_options: Any,
    ) -> None:
        super().__init__(**storage_options)
        explicit = ClientSettings(
            home=home, database_url=database_url, store_options=dict(store_options or {})
        )
        self._settings = explicit.over(ClientSettings.from_mapping(storage_options))
        self._client = client
        self._repos: dict[str, Repository] = {}
        self._made = MadeDirs()  # directories made with mkdir (graveler_fsspec.dirs)
        self._lock = threading.Lock()
        self._collect = threading.local()  # pairs gathered by ``put`` for one bulk upload

    # --- configuration -------------------------------------------------------------------------

    @property
    def client(self) -> Graveler:
        """The graveler client: the one passed in, else the process-wide client of this
        configuration, opened on first use (fsspec makes one instance per thread; they share
        it, and with it the metadata engine and the tree cache)."""
        with self._lock:
            if self._client is None:
                self._client = shared_client(self._settings)
            return self._client

    def repository(self, name: str) -> Repository:
        """A (cached) handle on repository ``name``; PathNotFound if it does not exist."""
        with self._lock:
            repo = self._repos.get(name)
        if repo is None:
            with translated(name):
                repo = self.client.repository(name)
            with self._lock:
                self._repos[name] = repo
        return repo

    def __reduce__(self) -> Any:
        """Pickle by configuration: an explicit client becomes its home, URL and options."""
        client = self._client
        if client is None:
            return super().__reduce__()
        return make_instance, (type(self), (), client.settings.to_mapping())

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        return strip_protocol(stringify_path(path))

    # --- reading -------------------------------------------------------------------------------

    def _entry(self, path: str) -> tuple[Repository, GravelerPath, ObjectEntry]:
        p = require_key(parse_path(path), path)
        repo = self.repository(p.repository)
        with translated(path):
            return repo, p, repo.stat(p.ref, p.key)

    def info(self, path: str, **kwargs: Any) -> Info:
        p = parse_path(path)
        name = str(p)
        if p.level == "root":
            return listing.dir_info("")
        repo = self.repository(p.repository)
        with translated(name):
            if p.level == "repository":
                return listing.dir_info(name)
            if p.level == "ref":
                return listing.dir_info(name, commit_id=repo.resolve(p.ref).commit.id)
            try:
                return listing.file_info(name, repo.stat(p.ref, p.key))
            except LookupError:  # graveler's ObjectNotFound: maybe a directory
                pass
            if listing.has_children(repo, p) or self._made.exists(name):
                return listing.dir_info(name)
        raise PathNotFound(f"no object or directory at {name!r}", name)

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        p = parse_path(path)
        entries = self._list(p)
        if p.level in ("ref", "key"):
            listed = {e["name"] for e in entries}
            made = sorted(self._made.children(str(p)) - listed)
            entries = sorted(entries + [listing.dir_info(d) for d in made], key=_name)
        if not entries and p.level == "key" and not self._made.exists(str(p)):
            entries = [self.info(path)]  # a file lists as itself; raises if nothing is there
        return entries if detail else [e["name"] for e in entries]

    def _list(self, p: GravelerPath) -> list[Info]:
        if p.level == "root":
            return [listing.dir_info(r.name) for r in self.client.list_repositories()]
        repo = self.repository(p.repository)
        with translated(str(p)):
            if p.level == "repository":
                return [listing.dir_info(f"{p.repository}/{b.name}") for b in repo.list_branches()]
            return list(listing.children(repo, p))

    def find(
        self,
        path: str,
        maxdepth: int | None = None,
        withdirs: bool = False,
        detail: bool = False,
        **kwargs: Any,
    ) -> Any:
        """All objects below ``path`` (and, with ``withdirs``, the directories), in one scan of
        the ref when ``path`` is inside a ref and there is no ``maxdepth``."""
        p = parse_path(path)
        if maxdepth is not None or p.level in ("root", "repository"):
            return super().find(path, maxdepth=maxdepth, withdirs=withdirs, detail=detail)
        repo = self.repository(p.repository)
        with translated(str(p)):
            out = dict(listing.walk_files(repo, p, withdirs))
        if withdirs and out and p.level == "key":
            out[str(p)] = listing.dir_info(str(p))
        if withdirs and p.level == "ref":
            out[str(p)] = self.info(str(p))
        if withdirs:
            made = self._made.below(str(p)) | ({str(p)} if self._made.exists(str(p)) else set())
            out.update({d: listing.dir_info(d) for d in made if d not in out})
        if not out and p.level == "key" and self.isfile(str(p)):
            out[str(p)] = self.info(str(p))
        names = sorted(out)
        return {n: out[n] for n in names} if detail else names

    def cat_file(
        self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any
    ) -> bytes:
        repo, _, entry = self._entry(path)
        begin, stop = _byte_range(entry.size, start, end)
        with translated(path):
            if begin == 0 and stop == entry.size:  # a whole object is checked against its SHA-256
                return repo.read_entry(entry)
            return repo.store.read_range(entry.physical_address, begin, max(0, stop - begin))

    def created(self, path: str) -> Any:
        return self.info(path).get("mtime")

    def modified(self, path: str) -> Any:
        return self.info(path).get("mtime")

    # --- opening -------------------------------------------------------------------------------

    def _open(
        self,
        path: str,
        mode: str = "rb",
        block_size: int | None = None,
        autocommit: bool = True,
        cache_options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> GravelerReadFile | GravelerWriteFile:
        """``rb`` reads with ranged requests; ``wb``/``xb`` stream to a branch. ``kwargs`` may
        carry ``content_type`` and ``metadata`` (a str->str map) for writes, ``cache_type``
        for reads."""
        if mode == "rb":
            repo, _, entry = self._entry(path)
            details = listing.file_info(strip_protocol(path), entry)
            opts = {"cache_options": cache_options, **kwargs}
            return GravelerReadFile(self, path, repo, entry, details, block_size=block_size, **opts)
        if mode not in ("wb", "xb"):
            raise InvalidArgument(
                f"mode {mode!r} is not supported: graveler objects are immutable, "
                "open them with 'rb', 'wb' or 'xb'"
            )
        repo, branch, key = self._write_target(path)
        if mode == "xb" and self._object_exists(repo, branch, key):
            raise PathExists(f"{path!r} already exists (opened with mode 'xb')", path)
        return GravelerWriteFile(
            self, path, repo, branch, key, mode=mode, block_size=block_size,
            autocommit=autocommit, **kwargs,
        )  # fmt: skip

    def _write_target(self, path: str) -> tuple[Repository, str, str]:
        """Repository, branch and key of a writable path; ReadOnlyRef / ReadOnlyBranch /
        PathNotFound otherwise. Checked before any byte is written."""
        p = require_key(parse_path(path), path)
        repo = self._writable_repo(p, path)
        return repo, p.ref, p.key

    def _writable_repo(self, p: GravelerPath, path: str) -> Repository:
        if self._intrans and isinstance(self._transaction, GravelerTransaction):
            self._transaction.check_write(p.repository, p.ref)
        repo = self.repository(p.repository)
        with translated(path):
            resolved = repo.resolve(p.ref)
        if resolved.branch is None:
            raise ReadOnlyRef(
                f"cannot write {path!r}: {p.ref!r} is a tag, a commit or a ref expression "
                f"(commit {resolved.commit.id[:12]}), which is read-only; write to a branch",
                path,
            )
        if resolved.branch.protected:
            raise ReadOnlyBranch(
                f"cannot write {path!r}: branch {p.ref!r} is protected; write to another "
                "branch and merge into it",
                path,
            )
        return repo

    @staticmethod
    def _object_exists(repo: Repository, ref: str, key: str) -> bool:
        try:
            repo.stat(ref, key)
            return True
        except LookupError:
            return False

    # --- writing -------------------------------------------------------------------------------

    def mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        """Directories are implicit: this checks that ``path`` could be written and remembers
        it on this instance, so that it exists and lists as empty until objects are written
        below it, as on local disk (DuckDB's partitioned ``COPY ... TO`` makes its output
        directory, then lists it to check that it is empty)."""
        p = parse_path(path)
        if p.level in ("ref", "key"):
            self._writable_repo(p, path)
        if p.level == "key":
            self._made.add(str(p))

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        self.mkdir(path)

    def rmdir(self, path: str) -> None:
        """Directories vanish with their last object; one made with ``mkdir`` is forgotten."""
        self._made.forget(str(parse_path(path)))

    def rm_file(self, path: str) -> None:
        repo, branch, key = self._write_target(path)
        with translated(path):
            repo.delete(branch, key)

    def rm(self, path: Any, recursive: bool = False, maxdepth: int | None = None) -> None:
        """Delete the objects among the expanded paths, one staging transaction per branch.
        Directories are implicit and disappear with their objects; one made with ``mkdir``
        is forgotten when removed (:mod:`graveler_fsspec.dirs`)."""
        targets = self.expand_path(path, recursive=recursive, maxdepth=maxdepth)
        groups: dict[tuple[str, str], list[str]] = defaultdict(list)
        for target in targets:
            p = parse_path(target)
            if p.level == "key":
                groups[(p.repository, p.ref)].append(p.key)
        deleted = 0
        for (repo_name, ref), keys in groups.items():
            where = f"{repo_name}/{ref}"
            repo = self._writable_repo(parse_path(where), where)
            with translated(where):
                deleted += repo.delete_many(ref, _existing(repo, ref, keys))
        forgotten = [self._made.forget(str(parse_path(t))) for t in targets]
        if not deleted and not any(forgotten) and not any(self.isdir(t) for t in targets):
            raise PathNotFound(f"nothing to delete at {path!r}", str(path))

    def put(
        self,
        lpath: Any,
        rpath: Any,
        recursive: bool = False,
        callback: Any = DEFAULT_CALLBACK,
        maxdepth: int | None = None,
        **kwargs: Any,
    ) -> None:
        """Upload local files (a directory with ``recursive=True``). Outside a transaction
        the files bound for one branch are written in parallel and staged in one
        transaction (:mod:`graveler_fsspec.bulk`); inside one, file by file."""
        if self._intrans or set(kwargs) - {"metadata"}:
            super().put(lpath, rpath, recursive, callback, maxdepth, **kwargs)
            return
        pairs: list[tuple[str, str]] = []
        self._collect.pairs = pairs
        try:
            super().put(lpath, rpath, recursive, callback, maxdepth)
        finally:
            self._collect.pairs = None
        upload_pairs(self._write_target, pairs, kwargs.get("metadata"))

    def put_file(
        self, lpath: str, rpath: str, callback: Any = DEFAULT_CALLBACK, **kwargs: Any
    ) -> None:
        """One local file, or (inside :meth:`put`) one pair collected for the bulk upload."""
        pairs = getattr(self._collect, "pairs", None)
        if pairs is None:
            super().put_file(lpath, rpath, callback=callback, **kwargs)
        elif os.path.isdir(lpath):
            self.makedirs(rpath, exist_ok=True)  # remembered, as mkdir does (dirs.py)
        else:
            pairs.append((lpath, rpath))

    def cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        """Copy one object. Inside one repository this is a metadata-only copy (the new key
        points at the same immutable physical object); across repositories bytes stream.
        A directory source makes the target directory (as ``mkdir``), nothing more."""
        src = parse_path(path1)
        if src.level == "key" and self.isdir(path1) and not self.isfile(path1):
            self.mkdir(path2)
            return
        repo, _, entry = self._entry(path1)
        dst_repo, branch, key = self._write_target(path2)
        if dst_repo.info.storage_namespace != repo.info.storage_namespace:
            self._copy_bytes(path1, path2, entry)
            return
        with translated(path2):
            dst_repo.link(
                branch,
                key,
                entry.physical_address,
                checksum=entry.checksum,
                size=entry.size,
                content_type=entry.content_type,
                metadata=entry.metadata,
            )

    def _copy_bytes(self, path1: str, path2: str, entry: ObjectEntry) -> None:
        options = {"content_type": entry.content_type, "metadata": entry.metadata}
        with self.open(path1, "rb") as src, self.open(path2, "wb", **options) as dst:
            while block := src.read(self.blocksize):
                dst.write(block)


def _name(info: Info) -> str:
    return str(info["name"])


def _existing(repo: Repository, ref: str, keys: list[str]) -> list[str]:
    """The keys among ``keys`` that name objects at ``ref`` (directories are not objects)."""
    if len(keys) <= _RM_STAT_LIMIT:
        return [k for k in keys if GravelerFileSystem._object_exists(repo, ref, k)]
    wanted = set(keys)
    prefix = _common_prefix(keys)
    return [e.path for e in repo.iter_objects(ref, prefix) if e.path in wanted]


def _common_prefix(keys: Iterable[str]) -> str:
    keys = sorted(keys)
    first, last = keys[0], keys[-1]
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def _byte_range(size: int, start: int | None, end: int | None) -> tuple[int, int]:
    """fsspec's slice semantics: None for the ends, negative values count from the end."""
    begin = 0 if start is None else (max(0, size + start) if start < 0 else min(start, size))
    stop = size if end is None else (max(0, size + end) if end < 0 else min(end, size))
    return begin, max(begin, stop)
