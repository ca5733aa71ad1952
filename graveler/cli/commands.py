"""Command handlers: each takes parsed arguments and an :class:`Output`, returns an exit code."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from graveler import uri as uris
from graveler.cli import gc as gc_command
from graveler.cli import maintenance
from graveler.cli.output import (
    Output,
    branch_doc,
    diff_doc,
    entry_doc,
    repo_doc,
    tag_doc,
)
from graveler.client import Graveler
from graveler.entry import ObjectEntry
from graveler.errors import InvalidArgument, InvalidURI
from graveler.repository import Repository

Handler = Callable[[Graveler, argparse.Namespace, Output], int]


def dispatch(args: argparse.Namespace, out: Output) -> int:
    name = args.command + ("_" + args.action if getattr(args, "action", None) else "")
    handler: Handler = HANDLERS[name]
    with Graveler(home=args.home, database_url=args.database_url) as gv:
        return handler(gv, args, out)


def _repo(gv: Graveler, text: str) -> tuple[Repository, uris.GravelerURI]:
    parsed = uris.parse(text)
    return gv.repository(parsed.repository), parsed


def _ref_uri(gv: Graveler, text: str) -> tuple[Repository, str, str]:
    """(repository, ref, path-or-empty) of a graveler://REPO/REF[/PATH] argument."""
    repo, parsed = _repo(gv, text)
    if parsed.ref is None:
        raise InvalidURI(f"{text!r} needs a ref: graveler://REPO/REF")
    return repo, parsed.ref, parsed.path or ""


def _same_repo(repo: Repository, text: str) -> str:
    parsed = uris.require(text, ref=True)
    if parsed.repository != repo.name:
        raise InvalidArgument(f"{text!r} is in another repository than {repo.name!r}")
    assert parsed.ref is not None
    return parsed.ref


# --- repo ----------------------------------------------------------------------------------------


def repo_create(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    parsed = uris.parse(a.uri)
    repo = gv.create_repository(parsed.repository, a.namespace, default_branch=a.default_branch)
    if out.as_json:
        out.json(repo_doc(repo.info))
    else:
        out.message(
            f"Repository [bold]{repo.name}[/bold] created at {repo.info.storage_namespace} "
            f"(default branch '{repo.info.default_branch}')"
        )
    return 0


def repo_list(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repos = gv.list_repositories()
    if out.as_json:
        out.json([repo_doc(r) for r in repos])
    else:
        out.table(
            None,
            ["REPOSITORY", "DEFAULT BRANCH", "STORAGE NAMESPACE", "CREATED"],
            [
                (
                    r.name,
                    r.default_branch,
                    r.storage_namespace,
                    f"{r.creation_date:%Y-%m-%d %H:%M:%S}",
                )
                for r in repos
            ],
        )
    return 0


def repo_delete(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    name = uris.parse(a.uri).repository
    gv.delete_repository(name)
    _done(out, {"deleted": name}, f"Repository {name} deleted (object data left in place)")
    return 0


# --- branch --------------------------------------------------------------------------------------


def branch_create(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, _ = _repo(gv, a.uri)
    name = uris.require(a.uri, ref=True).ref
    assert name is not None
    b = repo.create_branch(name, _same_repo(repo, a.source))
    _done(out, branch_doc(b), f"Branch {b.name} created at {b.commit_id[:12]}")
    return 0


def branch_list(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, _ = _repo(gv, a.uri)
    branches = repo.list_branches()
    if out.as_json:
        out.json([branch_doc(b) for b in branches])
    else:
        out.table(
            None,
            ["BRANCH", "COMMIT", "PROTECTED"],
            [(b.name, b.commit_id[:12], "yes" if b.protected else "") for b in branches],
        )
    return 0


def branch_delete(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, name, _ = _ref_uri(gv, a.uri)
    repo.delete_branch(name)
    _done(out, {"deleted": name}, f"Branch {name} deleted")
    return 0


def branch_reset(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, name, _ = _ref_uri(gv, a.uri)
    repo.reset(name, a.prefix)
    scope = f" under {a.prefix!r}" if a.prefix else ""
    _done(out, {"reset": name, "prefix": a.prefix}, f"Uncommitted changes{scope} on {name} dropped")
    return 0


def branch_protect(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, name, _ = _ref_uri(gv, a.uri)
    b = repo.protect_branch(name)
    _done(out, branch_doc(b), f"Branch {name} is protected: it accepts merges only")
    return 0


# --- tag -----------------------------------------------------------------------------------------


def tag_create(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, name, _ = _ref_uri(gv, a.uri)
    t = repo.create_tag(name, _same_repo(repo, a.ref))
    _done(out, tag_doc(t), f"Tag {t.name} -> {t.commit_id[:12]}")
    return 0


def tag_list(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, _ = _repo(gv, a.uri)
    tags = repo.list_tags()
    if out.as_json:
        out.json([tag_doc(t) for t in tags])
    else:
        out.table(None, ["TAG", "COMMIT"], [(t.name, t.commit_id[:12]) for t in tags])
    return 0


def tag_delete(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, name, _ = _ref_uri(gv, a.uri)
    repo.delete_tag(name)
    _done(out, {"deleted": name}, f"Tag {name} deleted")
    return 0


# --- fs ------------------------------------------------------------------------------------------


def fs_upload(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, branch, path = _ref_uri(gv, a.uri)
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
        _done(out, entry_doc(entry, repo.physical_uri(entry)), f"Uploaded {local} -> {target}")
        return 0
    files = sorted(p for p in local.rglob("*") if p.is_file())
    prefix = path if not path or path.endswith("/") else path + "/"
    docs = []
    with _progress(out, "Uploading", len(files)) as advance:
        for f in files:
            with f.open("rb") as fh:
                entry = repo.put(branch, prefix + f.relative_to(local).as_posix(), fh)
            docs.append(entry_doc(entry, repo.physical_uri(entry)))
            advance()
    _done(out, docs, f"Uploaded {len(files)} file(s) to {prefix or '/'} on {branch}")
    return 0


def fs_cat(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, ref, path = _ref_uri(gv, a.uri)
    if not path:
        raise InvalidURI(f"{a.uri!r} needs a path: graveler://REPO/REF/PATH")
    with repo.open(ref, path) as fh:
        while chunk := fh.read(1 << 20):
            sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()
    return 0


def fs_stat(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, ref, path = _ref_uri(gv, a.uri)
    if not path:
        raise InvalidURI(f"{a.uri!r} needs a path: graveler://REPO/REF/PATH")
    entry = repo.stat(ref, path)
    doc = entry_doc(entry, repo.physical_uri(entry))
    out.json(doc) if out.as_json else out.mapping(doc)
    return 0


def fs_ls(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, ref, prefix = _ref_uri(gv, a.uri)
    rows: list[tuple[str, str, str, str]] = []
    docs: list[dict[str, object]] = []
    for item in _listing(repo, ref, prefix, a.recursive):
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
    repo: Repository, ref: str, prefix: str, recursive: bool
) -> Iterator[str | ObjectEntry]:
    """Objects (and, unless recursive, common prefixes as strings) in path order."""
    if recursive:
        yield from repo.iter_objects(ref, prefix)
        return
    after = ""
    while True:
        page = repo.list(ref, prefix, delimiter="/", after=after)
        items: list[str | ObjectEntry] = [*page.common_prefixes, *page.objects]
        yield from sorted(items, key=lambda x: x if isinstance(x, str) else x.path)
        if page.next_after is None:
            return
        after = page.next_after


def fs_rm(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, branch, path = _ref_uri(gv, a.uri)
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
    _done(out, {"deleted": paths}, f"Deleted {len(paths)} object(s) on {branch} (staged)")
    return 0


# --- versioning ----------------------------------------------------------------------------------


def commit(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, branch, _ = _ref_uri(gv, a.uri)
    meta = dict(_key_value(kv) for kv in a.meta)
    with _status(out, f"Committing {branch} ..."):
        c = repo.commit(branch, a.message, metadata=meta)
    out.commit(c, heading=f"Branch {branch} committed:")
    return 0


def log(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, ref, _ = _ref_uri(gv, a.uri)
    commits = list(repo.log(ref, a.amount))
    if out.as_json:
        from graveler.cli.output import commit_doc

        out.json([commit_doc(c) for c in commits])
    else:
        for c in commits:
            out.commit(c)
    return 0


def show(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, ref, _ = _ref_uri(gv, a.uri)
    out.commit(repo.resolve(ref).commit)
    return 0


def diff(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, left, _ = _ref_uri(gv, a.left)
    if a.right is None:
        changes = repo.diff_uncommitted(left)
    else:
        changes = repo.diff(left, _same_repo(repo, a.right))
    docs = [diff_doc(d) for d in changes]
    if out.as_json:
        out.json(docs)
    else:
        signs = {
            "added": "[green]+ added  [/green]",
            "removed": "[red]- removed[/red]",
            "changed": "[yellow]~ changed[/yellow]",
        }
        for d in docs:
            out.message(f"{signs[d['type']]} {d['path']}")
        if not docs:
            out.message("No differences.")
    return 0


def merge(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, source, _ = _ref_uri(gv, a.source)
    dest = _same_repo(repo, a.dest)
    with _status(out, f"Merging {source} into {dest} ..."):
        c = repo.merge(source, dest, strategy=a.strategy, message=a.message)
    out.commit(c, heading=f"Merged {source} into {dest}:")
    return 0


def revert(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, branch, _ = _ref_uri(gv, a.branch)
    c = repo.revert(branch, _same_repo(repo, a.ref), parent_number=a.parent_number)
    out.commit(c, heading=f"Reverted on {branch}:")
    return 0


def gc(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, _ = _repo(gv, a.uri)
    return gc_command.run(repo, a, out, interactive=_interactive(out))


# --- helpers -------------------------------------------------------------------------------------


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise InvalidArgument(f"--meta expects KEY=VALUE, got {text!r}")
    return key, value


def _done(out: Output, doc: object, text: str) -> None:
    out.json(doc) if out.as_json else out.message(text)


@contextmanager
def _status(out: Output, text: str) -> Iterator[None]:
    """A spinner on stderr for long single operations (only on a terminal, never with --json)."""
    if not _interactive(out):
        yield
        return
    with out.err.status(text):
        yield


@contextmanager
def _progress(out: Output, text: str, total: int) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr for multi-item work; yields an ``advance()`` callable."""
    if not _interactive(out):
        yield lambda: None
        return
    columns = (TextColumn(text), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=out.err, transient=True) as bar:
        task = bar.add_task(text, total=total)
        yield lambda: bar.advance(task)


def _interactive(out: Output) -> bool:
    return not out.as_json and out.err.is_terminal and os.environ.get("CI") != "true"


HANDLERS: dict[str, Handler] = {
    "repo_create": repo_create,
    "repo_list": repo_list,
    "repo_delete": repo_delete,
    "branch_create": branch_create,
    "branch_list": branch_list,
    "branch_delete": branch_delete,
    "branch_reset": branch_reset,
    "branch_protect": branch_protect,
    "tag_create": tag_create,
    "tag_list": tag_list,
    "tag_delete": tag_delete,
    "fs_upload": fs_upload,
    "fs_cat": fs_cat,
    "fs_stat": fs_stat,
    "fs_ls": fs_ls,
    "fs_rm": fs_rm,
    "commit": commit,
    "log": log,
    "show": show,
    "diff": diff,
    "merge": merge,
    "revert": revert,
    **maintenance.HANDLERS,
    "gc": gc,
}
