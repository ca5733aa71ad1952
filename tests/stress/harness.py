"""Parent side of the stress and crash tests: setting up the shared repository, spawning
workload processes, reading their journals, and checking the invariants.

Invariants (``check_invariants``), all against the refs database and the namespace:

* fsck (with object checksums) is clean: every branch and tag points at an existing commit,
  every reachable commit is complete (metarange and ranges present and hashing to their names)
  and every committed or staged entry's object is there with the recorded bytes;
* every acknowledged put is visible on its branch, committed or still staged, with the latest
  acknowledged content (or with the content of a put that was in flight when its writer died);
* every acknowledged commit is in its branch's history, every acknowledged merge in its
  destination's history (a branch only moves forward: nothing acknowledged is ever unwound).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from graveler.client import Graveler
from graveler.maintenance.fsck import fsck
from graveler.repository import Repository
from tests.stress.workload import WRITE_BRANCHES, Config

ROOT = Path(__file__).resolve().parents[2]
REPO = "lake"


def create_repository(gv: Graveler, namespace: str) -> Repository:
    repo = gv.create_repository(REPO, namespace)
    for name in (*WRITE_BRANCHES, "stable"):
        repo.create_branch(name, "main")
    return repo


def spawn(cfg: Config) -> subprocess.Popen[str]:
    """Start a workload process; it prints ``ready`` once it has opened the repository."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "providers")])
    return subprocess.Popen(
        [sys.executable, "-m", "tests.stress.workload", json.dumps(asdict(cfg))],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@dataclass
class Ledger:
    """What the journals say was acknowledged (and what was in flight)."""

    latest: dict[tuple[str, str], str] = field(default_factory=dict)  # (branch, path) -> sha
    in_flight: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    commits: list[tuple[str, str]] = field(default_factory=list)  # (branch, commit id)
    merges: list[tuple[str, str]] = field(default_factory=list)  # (dest, commit id)
    counts: Counter[str] = field(default_factory=Counter)  # acked ops and typed outcomes
    unfinished: Counter[str] = field(default_factory=Counter)  # op kinds cut off by a kill

    def read(self, path: Path) -> None:
        """Add one journal. The last ``begin`` without an outcome is the op a kill cut off."""
        pending: dict[str, Any] | None = None
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            op = rec["op"]
            if op == "begin":
                pending = rec
                if rec["kind"] == "put":
                    key = (rec["branch"], rec["path"])
                    self.in_flight.setdefault(key, set()).add(rec["checksum"])
                continue
            pending = None
            self._acknowledge(rec)
        if pending is not None:
            self.unfinished[pending["kind"]] += 1

    def _acknowledge(self, rec: dict[str, Any]) -> None:
        op = rec["op"]
        if op == "put":
            key = (rec["branch"], rec["path"])
            self.latest[key] = rec["checksum"]
            self.in_flight[key] = set()  # earlier attempts were superseded by this ack
        elif op == "commit":
            self.commits.append((rec["branch"], rec["id"]))
        elif op == "merge":
            self.merges.append((rec["dest"], rec["id"]))
        self.counts[op if op != "end" else f"{rec['kind']}:{rec['outcome']}"] += 1


def ancestors(known: dict[str, Any], head: str) -> set[str]:
    seen: set[str] = set()
    stack = [head]
    while stack:
        cid = stack.pop()
        if cid not in seen:
            seen.add(cid)
            stack.extend(known[cid].parents)
    return seen


@dataclass
class Verdict:
    """What ``check_invariants`` checked and every violation it found (all must be zero)."""

    keys_checked: int
    objects_checked: int
    fsck_problems: list[Any]
    lost_puts: list[tuple[str, str]]
    unwound: list[tuple[str, str]]  # acknowledged (branch, commit) not in the branch's history

    @property
    def data_lost(self) -> int:
        return len(self.lost_puts) + len(self.unwound)

    def assert_ok(self, context: str = "") -> None:
        assert not self.fsck_problems, f"{context}fsck found problems: {self.fsck_problems[:5]}"
        assert not self.lost_puts, f"{context}acknowledged puts lost: {self.lost_puts[:5]}"
        assert not self.unwound, f"{context}acknowledged commits unwound: {self.unwound[:5]}"


def check_invariants(repo: Repository, ledger: Ledger) -> Verdict:
    """Check every invariant of the module docstring (call ``assert_ok`` on the result)."""
    report = fsck(repo, verify_objects=True)
    views = {b: {e.path: e.checksum for e in repo.iter_objects(b)} for b in WRITE_BRANCHES}
    lost = [
        key
        for key, sha in ledger.latest.items()
        if views[key[0]].get(key[1]) not in {sha} | ledger.in_flight.get(key, set())
    ]
    known = {c.id: c for c in repo.refs.iter_commits(repo.name)}
    heads = {b.name: b.commit_id for b in repo.list_branches()}
    history = {name: ancestors(known, head) for name, head in heads.items() if head in known}
    unwound = [(b, c) for b, c in ledger.commits + ledger.merges if c not in history.get(b, set())]
    return Verdict(len(ledger.latest), report.objects, report.problems, lost, unwound)
