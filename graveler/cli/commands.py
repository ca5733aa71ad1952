"""Command handlers of repositories, branches, tags, commit, show, diff, merge and gc: each
takes the client, the parsed arguments and an :class:`Output`, and returns an exit code
(:mod:`graveler.cli.registry` says which function runs which command). What only one command
needs is imported inside it."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from graveler.cli.output import Output, branch_doc, diff_doc, tag_doc
from graveler.cli.quick import repo_doc
from graveler.cli.shared import (
    done,
    interactive,
    key_value,
    ref_uri,
    repo_of,
    same_repo,
    status,
)
from graveler.core import uri as uris
from graveler.core.errors import InvalidArgument

if TYPE_CHECKING:
    from graveler.client import Graveler


# --- repo ----------------------------------------------------------------------------------------


def repo_create(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    parsed = uris.parse(a.uri)
    repo = gv.create_repository(parsed.repository, a.namespace, default_branch=a.default_branch)
    if out.as_json:
        out.json(repo_doc(repo.info))
    else:
        info = repo.info
        where = f"created at {info.storage_namespace} (default branch '{info.default_branch}')"
        out.styled(
            f"Repository [bold]{repo.name}[/bold] {where}", f"Repository {repo.name} {where}"
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
    done(out, {"deleted": name}, f"Repository {name} deleted (object data left in place)")
    return 0


# --- branch --------------------------------------------------------------------------------------


def branch_create(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, _ = repo_of(gv, a.uri)
    name = uris.require(a.uri, ref=True).ref
    assert name is not None
    b = repo.create_branch(name, same_repo(repo, a.source))
    done(out, branch_doc(b), f"Branch {b.name} created at {b.commit_id[:12]}")
    return 0


def branch_list(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, _ = repo_of(gv, a.uri)
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
    repo, name, _ = ref_uri(gv, a.uri)
    repo.delete_branch(name)
    done(out, {"deleted": name}, f"Branch {name} deleted")
    return 0


def branch_reset(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, name, _ = ref_uri(gv, a.uri)
    if a.hard is not None:
        if a.prefix:
            raise InvalidArgument("--hard resets the whole branch: drop --prefix")
        from graveler.cli import history

        return history.reset_hard(repo, name, a.hard, out)
    repo.reset(name, a.prefix)
    scope = f" under {a.prefix!r}" if a.prefix else ""
    done(out, {"reset": name, "prefix": a.prefix}, f"Uncommitted changes{scope} on {name} dropped")
    return 0


def branch_protect(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, name, _ = ref_uri(gv, a.uri)
    b = repo.protect_branch(name)
    done(out, branch_doc(b), f"Branch {name} is protected: it accepts merges only")
    return 0


def branch_prune(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    from graveler.versioning import runs

    repo, _ = repo_of(gv, a.uri)
    age = runs.parse_age(a.older_than)
    found = runs.prune(repo, prefix=a.prefix, older_than=age, dry_run=a.dry_run)
    if out.as_json:
        out.json(
            {
                "dry_run": a.dry_run,
                "branches": [
                    {
                        "name": b.name,
                        "commit_id": b.commit_id,
                        "idle_since": b.idle_since.isoformat(),
                    }
                    for b in found
                ],
            }
        )
        return 0
    verb = "Would delete" if a.dry_run else "Deleted"
    out.table(
        None,
        ["BRANCH", "COMMIT", "IDLE SINCE"],
        [(b.name, b.commit_id[:12], f"{b.idle_since:%Y-%m-%d %H:%M:%S}") for b in found],
    )
    out.message(f"{verb} {len(found)} branches of {repo.name} idle for over {a.older_than}")
    return 0


# --- tag -----------------------------------------------------------------------------------------


def tag_create(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, name, _ = ref_uri(gv, a.uri)
    t = repo.create_tag(name, same_repo(repo, a.ref))
    done(out, tag_doc(t), f"Tag {t.name} -> {t.commit_id[:12]}")
    return 0


def tag_list(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, _ = repo_of(gv, a.uri)
    tags = repo.list_tags()
    if out.as_json:
        out.json([tag_doc(t) for t in tags])
    else:
        out.table(None, ["TAG", "COMMIT"], [(t.name, t.commit_id[:12]) for t in tags])
    return 0


def tag_delete(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, name, _ = ref_uri(gv, a.uri)
    repo.delete_tag(name)
    done(out, {"deleted": name}, f"Tag {name} deleted")
    return 0


# --- versioning ----------------------------------------------------------------------------------


def commit(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, branch, _ = ref_uri(gv, a.uri)
    meta = dict(key_value(kv) for kv in a.meta)
    with status(out, f"Committing {branch} ..."):
        c = repo.commit(branch, a.message, metadata=meta)
    out.commit(c, heading=f"Branch {branch} committed:")
    return 0


def show(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, ref, _ = ref_uri(gv, a.uri)
    out.commit(repo.resolve(ref).commit)
    return 0


def diff(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    """Committed differences between two refs (a table as a table unless ``--files``), or
    a branch's uncommitted changes."""
    from graveler.cli.tables import table_doc, table_lines, tables_in

    repo, left, _ = ref_uri(gv, a.left)
    tables = []
    if a.right is None:
        changes = list(repo.diff_uncommitted(left))
    else:
        right = same_repo(repo, a.right)
        changes = list(repo.diff(left, right))
        tables = [] if a.files else tables_in(repo, left, right, changes)
    roots = tuple(t.root for t in tables)
    files = [d for d in changes if not (roots and d.path.startswith(roots))]
    docs = sorted(
        [*(table_doc(t) for t in tables), *(diff_doc(d) for d in files)], key=lambda d: d["path"]
    )
    if out.as_json:
        out.json(docs)
        return 0
    by_root = {t.root: t for t in tables}
    for d in docs:
        if d["type"] == "table":
            for markup, text in table_lines(by_root[d["path"]]):
                out.styled(markup, text)
        else:
            markup, text = _DIFF_SIGNS[d["type"]]
            out.styled(f"{markup} {d['path']}", f"{text} {d['path']}")
    if not docs:
        out.message("No differences.")
    return 0


#: How a human reads a difference: (rich markup, the plain text it prints).
_DIFF_SIGNS = {
    "added": ("[green]+ added  [/green]", "+ added  "),
    "removed": ("[red]- removed[/red]", "- removed"),
    "changed": ("[yellow]~ changed[/yellow]", "~ changed"),
}


def merge(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    from graveler.versioning.conflicts import load_resolver

    repo, source, _ = ref_uri(gv, a.source)
    dest = same_repo(repo, a.dest)
    resolver = load_resolver(a.resolver) if a.resolver else None
    meta = dict(key_value(kv) for kv in a.meta)
    with status(out, f"Merging {source} into {dest} ..."):
        merged = repo.merge(
            source,
            dest,
            strategy=a.strategy,
            message=a.message,
            metadata=meta,
            resolver=resolver,
            fast_forward=a.fast_forward,
            ff_only=a.ff_only,
            squash=a.squash,
            allow_empty=a.allow_empty,
        )
    out.commit(merged.commit, heading=f"Merged {source} into {dest}:")
    return 0


def gc(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    from graveler.cli import gc as gc_command

    repo, _ = repo_of(gv, a.uri)
    return gc_command.run(repo, a, out, interactive=interactive(out))
