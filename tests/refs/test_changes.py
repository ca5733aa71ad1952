"""The SQLite change marker (``graveler.refs.changes``): it moves on every commit by any
connection or process, and stays put otherwise; the ``PRAGMA data_version`` fallback too."""

from __future__ import annotations

import itertools
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from graveler.refs.changes import ChangeMarker, sqlite_marker


def _database(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (x)")
    return conn


@pytest.mark.parametrize("uri", [False, True], ids=["wal-index", "data_version"])
def test_marker_moves_on_every_commit_and_only_then(tmp_path: Path, uri: bool) -> None:
    path = tmp_path / "db.sqlite"
    writer = _database(path)
    marker: ChangeMarker = sqlite_marker(f"file:{path}" if uri else str(path), 5.0)
    seen = [marker.probe()]
    assert marker.probe() == seen[-1]  # nothing committed: no change
    writer.execute("INSERT INTO t VALUES (1)")
    seen.append(marker.probe())
    script = (
        f"import sqlite3; c = sqlite3.connect({str(path)!r}); "
        "c.execute('INSERT INTO t VALUES (2)'); c.commit()"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
    seen.append(marker.probe())
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the WAL starts over
    writer.execute("INSERT INTO t VALUES (3)")
    seen.append(marker.probe())
    assert all(a != b for a, b in itertools.pairwise(seen))
    writer.execute("SELECT count(*) FROM t").fetchone()  # reads change nothing
    assert marker.probe() == seen[-1]
    marker.close()
    writer.close()


def test_a_truncated_wal_index_is_read_as_a_change_not_a_crash(tmp_path: Path) -> None:
    """SQLite truncates the ``-shm`` file when a connection finds itself its first user (no
    other process holds it); a probe that outlived its process's connections (a view cache
    still holding it after the database closed) must not die then. It runs in a child
    process: a memory mapping of the header read after the truncation is a SIGBUS, which
    would kill the test run itself."""
    script = f"""
import os, sqlite3, sys
from graveler.refs.changes import sqlite_marker
path = {str(tmp_path / "db.sqlite")!r}
writer = sqlite3.connect(path, isolation_level=None)
writer.execute("PRAGMA journal_mode = WAL")
writer.execute("CREATE TABLE t (x)")
marker = sqlite_marker(path, 5.0)
before = marker.probe()
os.truncate(path + "-shm", 0)
after = [marker.probe(), marker.probe()]
assert after[0] != before and after[0] != after[1], (before, after)
print("survived", flush=True)
os._exit(0)  # SQLite's own connections, mapped too, would not survive closing now
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == "survived"


def test_a_closed_marker_never_answers_the_same_twice(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    writer = _database(path)
    marker = sqlite_marker(str(path), 5.0)
    probe = marker.probe  # held, as the branch views hold it
    marker.close()
    assert probe() != probe()
    marker.close()  # twice is fine
    writer.close()
