"""Repositories with history for garbage-collection tests: random walks of real operations
(puts, deletes, commits, branches created and deleted, tags, merges, re-linked old objects,
abandoned files and trees), then a clock and retention rules that age some commits out.

Commits happen in real time (microseconds apart); "now" is put 30 days after the last one and
retention windows are chosen to fall between commit times, so every rule boundary is hit.
Some objects get an mtime inside the grace period.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from graveler.core.errors import Conflict
from graveler.maintenance.gc import RetentionRules
from graveler.repository import Repository
from graveler.storage.committed.record import ValueRecord

DAY = timedelta(days=1)
GRACE = timedelta(hours=1)


@dataclass
class Scenario:
    repo: Repository
    now: datetime
    rules: RetentionRules
    grace: timedelta
    young: set[str]  # keys given an mtime inside the grace period


class Walk:
    """Random operations on one repository."""

    def __init__(self, repo: Repository, rng: random.Random) -> None:
        self.repo = repo
        self.rng = rng
        self.n = 0

    def step(self) -> None:
        self.n += 1
        op = self.rng.choices(
            [
                self.put,
                self.delete,
                self.commit,
                self.branch,
                self.drop_branch,
                self.tag,
                self.merge,
                self.relink,
                self.abandon,
            ],
            weights=[8, 3, 5, 2, 1, 1, 2, 1, 1],
        )[0]
        with contextlib.suppress(Conflict):  # merge conflicts, dirty branches, no changes
            op()

    def _branch(self) -> str:
        return self.rng.choice([b.name for b in self.repo.list_branches()])

    def _commit_id(self) -> str:
        return self.rng.choice([c.id for c in self.repo.refs.iter_commits(self.repo.name)])

    def put(self) -> None:
        path = f"p{self.rng.randrange(12)}"
        self.repo.put(self._branch(), path, os.urandom(8) + str(self.n).encode())

    def delete(self) -> None:
        branch = self._branch()
        paths = [e.path for e in self.repo.iter_objects(branch)]
        if paths:
            self.repo.delete(branch, self.rng.choice(paths))

    def commit(self) -> None:
        self.repo.commit(self._branch(), f"step {self.n}")

    def branch(self) -> None:
        self.repo.create_branch(f"b{self.n}", self.rng.choice([self._branch(), self._commit_id()]))

    def drop_branch(self) -> None:
        names = [b.name for b in self.repo.list_branches() if b.name != "main"]
        if names:
            self.repo.delete_branch(self.rng.choice(names))

    def tag(self) -> None:
        self.repo.create_tag(f"t{self.n}", self._commit_id())

    def merge(self) -> None:
        self.repo.merge(self._branch(), self._branch(), message=f"merge {self.n}")

    def relink(self) -> None:
        """Stage, under a new path, an object that only an old commit referenced."""
        old = list(self.repo.iter_objects(self._commit_id()))
        if old:
            e = self.rng.choice(old)
            self.repo.link(self._branch(), f"r{self.n}", e.physical_address, checksum=e.checksum)

    def abandon(self) -> None:
        """A file nothing will reference, and a tree no commit will point at."""
        self.repo.store.put(f"data/zz/abandoned-{self.n}", b"x")
        value = b'{"a":"data/zz/nothing","s":1,"c":"0","m":0,"t":"x"}'
        self.repo.committed.write_records([ValueRecord(f"o{self.n}".encode(), b"i", value)])


def random_scenario(repo: Repository, seed: int, steps: int = 40) -> Scenario:
    rng = random.Random(seed)
    walk = Walk(repo, rng)
    for _ in range(steps):
        walk.step()
    repo.store.put("notes/readme.txt", b"not graveler's")  # outside data/: never collected
    repo.store.put("_graveler/notes.txt", b"not a tree file")
    commits = sorted(c.creation_date for c in repo.refs.iter_commits(repo.name))
    now = commits[-1] + 30 * DAY
    cutoffs = [commits[0] - DAY] + [a + (b - a) / 2 for a, b in itertools.pairwise(commits)]
    cutoffs.append(now)

    def days() -> float:
        return (now - rng.choice(cutoffs)) / DAY

    branch_days = {b.name: days() for b in repo.list_branches() if rng.random() < 0.6}
    rules = RetentionRules(default_days=days(), branch_days=branch_days)
    young = _make_young(repo, rng, now - GRACE / 6)
    return Scenario(repo, now, rules, GRACE, young)


def _make_young(repo: Repository, rng: random.Random, when: datetime) -> set[str]:
    keys = [i.key for p in ("data/", "_graveler/") for i in repo.store.list(p)]
    young = set(rng.sample(keys, k=len(keys) // 5))
    for key in young:
        path = repo.store.local_path(key)
        assert path is not None
        os.utime(path, (when.timestamp(), when.timestamp()))
    return young
