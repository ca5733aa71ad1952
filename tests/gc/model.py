"""A reference model of garbage collection, written from the definition and nothing else.

Retention is computed per commit from whole first-parent chains (no early stops, no shared
"seen" set); reachability is computed through the public API (``iter_objects`` of each
retained commit, ``diff_uncommitted`` of each branch), never through range files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

from graveler.core.model import Branch, Commit, Tag
from graveler.maintenance.gc import RetentionRules
from graveler.repository import Repository


def first_parent_chain(commits: Mapping[str, Commit], head: str) -> list[Commit]:
    chain: list[Commit] = []
    commit = commits.get(head)
    while commit is not None:
        chain.append(commit)
        commit = commits.get(commit.parents[0]) if commit.parents else None
    return chain


def model_retained(
    commits: Mapping[str, Commit],
    branches: Iterable[Branch],
    tags: Iterable[Tag],
    rules: RetentionRules,
    now: datetime,
) -> set[str]:
    keep = {t.commit_id for t in tags}
    on_some_chain: set[str] = set()
    for b in branches:
        keep.add(b.commit_id)
        cutoff = now - timedelta(days=rules.days_for(b.name))
        chain = first_parent_chain(commits, b.commit_id)
        on_some_chain.update(c.id for c in chain)
        for c in chain:  # from the head back to the head as of the cutoff, inclusive
            keep.add(c.id)
            if c.creation_date < cutoff:
                break
    default_cutoff = now - timedelta(days=rules.default_days)
    keep.update(
        c.id
        for c in commits.values()
        if c.id not in on_some_chain and c.creation_date >= default_cutoff
    )
    return keep


def model_garbage(
    repo: Repository, rules: RetentionRules, now: datetime, grace: timedelta
) -> set[str]:
    """Keys GC must delete: old enough, under data/ or _graveler/<64 hex>, and unreferenced."""
    commits = {c.id: c for c in repo.refs.iter_commits(repo.name)}
    branches = repo.list_branches()
    retained = model_retained(commits, branches, repo.list_tags(), rules, now)
    live = staged_addresses(repo)
    for cid in retained:
        live.update(e.physical_address for e in repo.iter_objects(cid))
    trees: set[str] = set()
    for c in commits.values():
        if c.metarange_id:
            trees.add(c.metarange_id)
            trees.update(r.id for r in repo.committed.ranges(c.metarange_id))
    old = (i.key for i in repo.store.list("") if i.mtime < now - grace)
    return {key for key in old if _unreferenced(key, live, trees)}


def _unreferenced(key: str, live: set[str], trees: set[str]) -> bool:
    top, _, rest = key.partition("/")
    if top == "data":
        return key not in live
    return top == "_graveler" and _hex64(rest) and rest not in trees


def staged_addresses(repo: Repository) -> set[str]:
    """What readers of each branch see right now (staged values over the head commit)."""
    return {e.physical_address for b in repo.list_branches() for e in repo.iter_objects(b.name)}


def _hex64(text: str) -> bool:
    return len(text) == 64 and all(ch in "0123456789abcdef" for ch in text)
