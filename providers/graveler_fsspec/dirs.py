"""Directories made with ``mkdir``, remembered by the filesystem instance.

Graveler has no directories: ``a/b`` is a directory while some object key starts with
``a/b/``. Tools written for local disks expect more: DuckDB's partitioned ``COPY ... TO``
makes its output directory and then lists it to check that it is empty. So ``mkdir`` (and
copying a directory) records the directory on the instance; it then exists and lists as
empty, with any directory made below it as a child, until ``rm`` or ``rmdir`` removes it, as
on a local disk. Directories that only hold objects stay implicit and vanish with their last
object, as in S3. The record lives in this instance only: nothing is written to the
repository, and another instance or process does not see it.
"""

from __future__ import annotations

import threading


class MadeDirs:
    """A thread-safe set of directory paths (``repo/ref/key``, no slashes at either end)."""

    def __init__(self) -> None:
        self._dirs: set[str] = set()
        self._lock = threading.Lock()

    def add(self, name: str) -> None:
        with self._lock:
            self._dirs.add(name)

    def exists(self, name: str) -> bool:
        """Whether ``name`` was made, or lies above a directory that was."""
        prefix = name + "/"
        with self._lock:
            return any(d == name or d.startswith(prefix) for d in self._dirs)

    def below(self, name: str) -> set[str]:
        """Every made directory strictly below ``name``, and the directories between."""
        prefix = name + "/"
        found: set[str] = set()
        with self._lock:
            made = [d for d in self._dirs if d.startswith(prefix)]
        for d in made:
            parts = d[len(prefix) :].split("/")
            found.update(prefix + "/".join(parts[: i + 1]) for i in range(len(parts)))
        return found

    def children(self, name: str) -> set[str]:
        """The made directories (or those above a made one) directly below ``name``."""
        depth = name.count("/") + 1
        return {d for d in self.below(name) if d.count("/") == depth}

    def forget(self, name: str) -> bool:
        """Forget ``name`` and everything made below it; True when something was forgotten."""
        prefix = name + "/"
        with self._lock:
            gone = {d for d in self._dirs if d == name or d.startswith(prefix)}
            self._dirs -= gone
        return bool(gone)
