"""``graveler fs``: upload, cat, stat, ls and rm objects on a ref."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from graveler.cli.output import Output, entry_doc
from graveler.cli.shared import done, progress, ref_uri
from graveler.core.errors import InvalidArgument, InvalidURI

if TYPE_CHECKING:
    from graveler.client import Graveler
    from graveler.repository import Repository
    from graveler.storage.entry import ObjectEntry


def fs_upload(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    """One file with ``put``; a directory (``--recursive``) with ``upload_many``: its files
    written in parallel and staged in one transaction (all or nothing)."""
    repo, branch, path = ref_uri(gv, a.uri)
    local = Path(a.local)
    if local.is_dir() and not a.recursive:
        raise InvalidArgument(f"{local} is a directory: pass --recursive to upload its files")
    if not local.exists():
        raise InvalidArgument(f"{local} does not exist")
    if not local.is_dir():
        target = path or local.name
        if path.endswith("/"):
            target = path + local.name
        with local.open("rb") as fh:
            entry = repo.put(branch, target, fh)
        done(out, entry_doc(entry, repo.physical_uri(entry)), f"Uploaded {local} -> {target}")
        return 0
    files = sorted(local_files(str(local)))
    prefix = path if not path or path.endswith("/") else path + "/"
    items = [(prefix + rel, Path(full)) for rel, full in files]
    with progress(out, "Uploading", len(items)) as advance:
        entries = repo.upload_many(branch, items, progress=lambda _: advance())
    docs = [entry_doc(e, repo.physical_uri(e)) for e in entries]
    done(out, docs, f"Uploaded {len(entries)} file(s) to {prefix or '/'} on {branch}")
    return 0


def local_files(root: str, rel: str = "") -> Iterator[tuple[str, str]]:
    """(path relative to ``root`` with ``/`` separators, full path) of every regular file
    under ``root``, following no symbolic link to a directory."""
    with os.scandir(root) as entries:
        for entry in entries:
            name = rel + entry.name
            if entry.is_dir(follow_symlinks=False):
                yield from local_files(entry.path, name + "/")
            elif entry.is_file():
                yield name, entry.path


def fs_cat(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, ref, path = ref_uri(gv, a.uri)
    if not path:
        raise InvalidURI(f"{a.uri!r} needs a path: graveler://REPO/REF/PATH")
    with repo.open(ref, path) as fh:
        while chunk := fh.read(1 << 20):
            sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()
    return 0


def fs_stat(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, ref, path = ref_uri(gv, a.uri)
    if not path:
        raise InvalidURI(f"{a.uri!r} needs a path: graveler://REPO/REF/PATH")
    entry = repo.stat_staged(ref, path) if a.staged else repo.stat(ref, path)
    doc = entry_doc(entry, repo.physical_uri(entry))
    out.json(doc) if out.as_json else out.mapping(doc)
    return 0


def fs_ls(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, ref, prefix = ref_uri(gv, a.uri)
    rows: list[tuple[str, str, str, str]] = []
    docs: list[dict[str, object]] = []
    for item in _listing(repo, ref, prefix, a.recursive, a.staged):
        if isinstance(item, str):
            docs.append({"type": "common_prefix", "path": item})
            rows.append(("dir", item, "", ""))
        else:
            docs.append({"type": "object", **entry_doc(item, repo.physical_uri(item))})
            rows.append(("obj", item.path, str(item.size), f"{item.mtime:%Y-%m-%d %H:%M:%S}"))
    if out.as_json:
        out.json(docs)
    else:
        out.table(None, ["", "PATH", "SIZE", "MODIFIED"], rows)
    return 0


def _listing(
    repo: Repository, ref: str, prefix: str, recursive: bool, staged: bool = False
) -> Iterator[str | ObjectEntry]:
    """Objects (and, unless recursive, common prefixes as strings) in path order; with
    ``staged``, only what is staged on branch ``ref``."""
    if recursive:
        yield from (repo.iter_staged if staged else repo.iter_objects)(ref, prefix)
        return
    after = ""
    lister = repo.list_staged if staged else repo.list
    while True:
        page = lister(ref, prefix, delimiter="/", after=after)
        items: list[str | ObjectEntry] = [*page.common_prefixes, *page.objects]
        yield from sorted(items, key=lambda x: x if isinstance(x, str) else x.path)
        if page.next_after is None:
            return
        after = page.next_after


def fs_rm(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, branch, path = ref_uri(gv, a.uri)
    if a.recursive:
        paths = [e.path for e in repo.iter_objects(branch, path)]
        if not paths:
            raise InvalidArgument(f"nothing under {path!r} on {branch!r}")
        repo.delete_many(branch, paths)
    else:
        if not path:
            raise InvalidURI(f"{a.uri!r} needs a path (or --recursive with a prefix)")
        repo.delete(branch, path)
        paths = [path]
    done(out, {"deleted": paths}, f"Deleted {len(paths)} object(s) on {branch} (staged)")
    return 0
