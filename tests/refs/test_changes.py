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
