"""Moving a Delta table between a graveler ref and a local directory, so that real Delta
engines (delta-rs here, delta-spark in its own environment) write and read it: the way a
pipeline task works on its run branch."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from graveler.repository import Repository


def checkout(repo: Repository, ref: str, root: str, directory: Path) -> Path:
    """Copy the table at ``root`` (``"t/"``) of ``ref`` into ``directory`` (created)."""
    directory.mkdir(parents=True, exist_ok=True)
    for entry in repo.iter_objects(ref, prefix=root):
        target = directory / entry.path[len(root) :]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(repo.read_entry(entry))
    return directory


def publish(repo: Repository, branch: str, root: str, directory: Path, message: str) -> None:
    """Make the branch's table at ``root`` what ``directory`` holds, and commit."""
    present = {e.path: e.checksum for e in repo.iter_objects(branch, prefix=root)}
    local = set()
    for dirpath, _, names in os.walk(directory):
        for name in names:
            full = Path(dirpath, name)
            path = root + full.relative_to(directory).as_posix()
            local.add(path)
            data = full.read_bytes()
            if present.get(path) != hashlib.sha256(data).hexdigest():
                repo.put(branch, path, data)
    for path in set(present) - local:
        repo.delete(branch, path)
    repo.commit(branch, message)
