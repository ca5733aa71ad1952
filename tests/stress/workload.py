"""A writer process for the stress and crash-safety tests.

``python -m tests.stress.workload CONFIG_JSON`` opens the repository, prints ``ready`` and runs
random operations on shared branches until ``max_ops`` or until it is killed:

* put (60%): a new key ``<worker>/<n>`` on a write branch ``w0``..``w3``, or an overwrite of one
  of its own earlier keys on the same branch (so "the latest acknowledged value" is well
  defined); every 8th object is 2.5 MiB, streamed in several chunks;
* commit (20%) of a write branch;
* merge (20%) of a write branch into ``main``, or of ``main`` into ``stable``. Keys are unique
  per worker, so merges never conflict; a MergeConflict would be a bug and ends the worker.

Every operation is journaled (JSON lines, flushed per line, so SIGKILL loses nothing that was
written): ``begin`` before it starts, then the acknowledgement (``put``, ``commit``, ``merge``)
or its typed, expected outcome (``end``: no-changes / contention) after it returns.

A *kill point* (``kill: [kind, n]``) makes the process SIGKILL itself at the n-th event of a
kind: ``sql`` (before a SQL statement, so inside transactions), ``store.put`` (right after an
object or tree file is written, before it is recorded), ``data.read`` (while an object's bytes
are being streamed to the store). Kills from the outside need no configuration.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import signal
import sqlite3
import sys
from dataclasses import dataclass, field
from typing import Any, BinaryIO, TextIO, cast

from sqlalchemy import event

from graveler.client import Graveler
from graveler.core.errors import BranchMoved, NoChanges
from graveler.repository import Repository
from graveler.storage.refs import sqlite_conn

WRITE_BRANCHES = ("w0", "w1", "w2", "w3")
BIG_OBJECT = 5 << 19  # 2.5 MiB: three chunks of the stores' 1 MiB reads
BIG_EVERY = 8


@dataclass
class Config:
    home: str
    database_url: str
    repo: str
    worker: str  # unique label; prefixes every key the worker writes
    seed: int
    journal: str
    max_ops: int
    kill: list[Any] | None = None  # [kind, n]


@dataclass
class _State:
    mine: list[tuple[str, str]] = field(default_factory=list)  # (branch, path) written so far
    puts: int = 0


class KillPoint:
    """SIGKILLs this process at the n-th ``tick`` of ``kind``."""

    def __init__(self, kind: str, n: int) -> None:
        self.kind = kind
        self.remaining = n

    def tick(self, kind: str) -> None:
        if kind != self.kind:
            return
        self.remaining -= 1
        if self.remaining <= 0:
            os.kill(os.getpid(), signal.SIGKILL)


class _TickingReader(io.RawIOBase):
    """A stream over ``data`` that ticks ``data.read`` on every read."""

    def __init__(self, data: bytes, kill: KillPoint | None) -> None:
        self._src = io.BytesIO(data)
        self._kill = kill

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self._kill is not None:
            self._kill.tick("data.read")
        return self._src.read(n)


def install_kill_point(gv: Graveler, repo: Repository, kill: KillPoint) -> None:
    """Hook the kill point into SQL statements and object-store writes of this process
    (``put`` of tree files, ``open_writer`` commits of object bytes)."""
    db = gv.metadata._db  # type: ignore[attr-defined]
    if hasattr(db, "engine"):  # SQLAlchemy (PostgreSQL)
        event.listen(db.engine, "before_cursor_execute", lambda *a: kill.tick("sql"))
    else:  # the embedded SQLite store: every statement of its connections
        real = sqlite_conn.connect

        def tracing(*args: Any, **kwargs: Any) -> sqlite3.Connection:
            conn = real(*args, **kwargs)
            conn.set_trace_callback(lambda _statement: kill.tick("sql"))
            return conn

        sqlite_conn.connect = tracing  # type: ignore[assignment]
        db._conns.close()  # connections open already are reopened with the callback
    store = repo.store
    put = store.put

    def killing_put(key: str, data: bytes | BinaryIO) -> Any:
        info = put(key, data)
        kill.tick("store.put")
        return info

    store.put = killing_put  # type: ignore[method-assign]
    open_writer = store.open_writer

    def killing_open_writer(key: str, **options: Any) -> Any:
        writer = open_writer(key, **options)
        commit = writer.commit

        def killing_commit() -> Any:
            info = commit()
            kill.tick("store.put")
            return info

        writer.commit = killing_commit  # type: ignore[method-assign]
        return writer

    store.open_writer = killing_open_writer  # type: ignore[method-assign]


class Journal:
    def __init__(self, path: str) -> None:
        self._fh: TextIO = open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115

    def write(self, **record: Any) -> None:
        self._fh.write(json.dumps(record, sort_keys=True) + "\n")

    def close(self) -> None:
        self._fh.close()


def do_put(
    repo: Repository,
    cfg: Config,
    rng: random.Random,
    st: _State,
    j: Journal,
    kill: KillPoint | None,
) -> None:
    if st.mine and rng.random() < 0.15:
        branch, path = rng.choice(st.mine)
    else:
        branch, path = rng.choice(WRITE_BRANCHES), f"{cfg.worker}/{len(st.mine):05d}"
        st.mine.append((branch, path))
    st.puts += 1
    size = BIG_OBJECT if st.puts % BIG_EVERY == 0 else rng.randint(1, 4000)
    data = rng.randbytes(size)
    checksum = hashlib.sha256(data).hexdigest()
    j.write(op="begin", kind="put", branch=branch, path=path, checksum=checksum)
    stream = cast(BinaryIO, _TickingReader(data, kill))
    repo.put(branch, path, stream, metadata={"worker": cfg.worker})
    j.write(op="put", branch=branch, path=path, checksum=checksum)


def do_commit(repo: Repository, cfg: Config, rng: random.Random, j: Journal, n: int) -> None:
    branch = rng.choice(WRITE_BRANCHES)
    j.write(op="begin", kind="commit", branch=branch)
    try:
        c = repo.commit(branch, f"{cfg.worker} op {n}", metadata={"worker": cfg.worker})
    except (NoChanges, BranchMoved) as exc:
        j.write(op="end", kind="commit", outcome=type(exc).__name__)
        return
    j.write(op="commit", branch=branch, id=c.id)


def do_merge(repo: Repository, cfg: Config, rng: random.Random, j: Journal, n: int) -> None:
    if rng.random() < 0.8:
        source, dest = rng.choice(WRITE_BRANCHES), "main"
    else:
        source, dest = "main", "stable"
    j.write(op="begin", kind="merge", source=source, dest=dest)
    try:
        m = repo.merge(source, dest, message=f"{cfg.worker} op {n}: {source} -> {dest}").commit
    except (NoChanges, BranchMoved) as exc:
        j.write(op="end", kind="merge", outcome=type(exc).__name__)
        return
    j.write(op="merge", source=source, dest=dest, id=m.id)


def run(cfg: Config) -> None:
    rng = random.Random(cfg.seed)
    journal = Journal(cfg.journal)
    with Graveler(home=cfg.home, database_url=cfg.database_url) as gv:
        repo = gv.repository(cfg.repo)
        kill = KillPoint(*cfg.kill) if cfg.kill else None
        if kill is not None:
            install_kill_point(gv, repo, kill)
        print("ready", flush=True)
        state = _State()
        for n in range(cfg.max_ops):
            roll = rng.random()
            if roll < 0.6:
                do_put(repo, cfg, rng, state, journal, kill)
            elif roll < 0.8:
                do_commit(repo, cfg, rng, journal, n)
            else:
                do_merge(repo, cfg, rng, journal, n)
    journal.close()


def main(argv: list[str]) -> int:
    run(Config(**json.loads(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
