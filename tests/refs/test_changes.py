"""The SQLite change marker (``graveler.storage.refs.changes``): it moves on every commit by any
connection or process, and stays put otherwise; the ``PRAGMA data_version`` fallback too."""

from __future__ import annotations

import itertools
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from graveler.storage.refs.changes import ChangeMarker, sqlite_marker


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


_HELD_LOCK = """
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
asked = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 128, 1, 0)  # SQLite's DMS byte
kind, _, _, _, pid = struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, asked))
print(pid if kind == fcntl.F_RDLCK else 0)
"""


def _dms_holder(shm: Path) -> int:
    """The process holding a shared lock on the ``-shm`` file's DMS byte, asked from another
    process (0: none). While one is held, no SQLite connection truncates the file."""
    done = subprocess.run(
        [sys.executable, "-c", _HELD_LOCK, str(shm)], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


def test_markers_never_drop_this_processs_locks_on_the_wal_index(tmp_path: Path) -> None:
    """A POSIX lock belongs to the process, and closing any descriptor of the file drops all
    of them: a marker that closed its own descriptor would leave this process's other
    connections without the lock that stops another process's SQLite from truncating the
    file under their mappings (and the marker's). Markers share one descriptor per file,
    closed only after the last marker's own connection (a store closes its marker after
    its connections)."""
    path = tmp_path / "db.sqlite"
    writer = _database(path)
    shm = Path(str(path) + "-shm")
    first, second = sqlite_marker(str(path), 5.0), sqlite_marker(str(path), 5.0)
    writer.execute("INSERT INTO t VALUES (1)")
    writer.close()
    assert _dms_holder(shm) == os.getpid()  # the markers' own connections
    first.close()
    assert _dms_holder(shm) == os.getpid()  # the second's: the shared descriptor stays open
    assert second.probe() == second.probe()
    second.close()
    assert not shm.exists() or _dms_holder(shm) == 0  # the last connection removes it


def test_a_forked_child_reads_the_header_without_the_mapping(tmp_path: Path) -> None:
    """A forked child inherits the parent's markers and mappings but none of its locks:
    another process may truncate the file then, and a mapping read after that is a SIGBUS.
    In the child the marker reads with pread, where the truncation is a short read, answered
    as a change. It runs in a process of its own: a crash must not take the test run."""
    script = f"""
import os, sqlite3
from graveler.storage.refs.changes import sqlite_marker
path = {str(tmp_path / "db.sqlite")!r}
writer = sqlite3.connect(path, isolation_level=None)
writer.execute("PRAGMA journal_mode = WAL")
writer.execute("CREATE TABLE t (x)")
marker = sqlite_marker(path, 5.0)
before = marker.probe()
assert marker.probe() == before
child = os.fork()
if child == 0:
    assert marker.probe() == before  # pread, the same bytes
    os.truncate(path + "-shm", 0)  # what a first user of the file would do
    after = [marker.probe(), marker.probe()]
    os._exit(0 if after[0] != before and after[0] != after[1] else 3)
_, status = os.waitpid(child, 0)
print("child", os.waitstatus_to_exitcode(status), flush=True)
os._exit(0)  # the file is truncated: SQLite's own mapping here would not survive closing
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == "child 0"


def test_a_closed_marker_never_answers_the_same_twice(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    writer = _database(path)
    marker = sqlite_marker(str(path), 5.0)
    probe = marker.probe  # held, as the branch views hold it
    marker.close()
    assert probe() != probe()
    marker.close()  # twice is fine
    writer.close()
