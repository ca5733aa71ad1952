"""What every handler shares within one server worker: the client, the authenticator, the
storage mapping, and repository handles reused for a few seconds (opening one reads the
database and the namespace's marker; a handle is cheap to keep and repositories rarely
change). Nothing here is state that another worker would need: handles are caches."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from graveler.client import Graveler
from graveler.repository import Repository
from graveler.server.auth import Authenticator
from graveler.server.lakefs.storage import Storage

#: How long a repository handle is reused.
REPOSITORY_SECONDS = 5.0


@dataclass
class Service:
    client: Graveler
    auth: Authenticator
    storage: Storage

    def __post_init__(self) -> None:
        self._repos: dict[str, tuple[float, Repository]] = {}
        self._lock = threading.Lock()

    def repository(self, name: str) -> Repository:
        """A handle on repository ``name``; raises RepositoryNotFound (InvalidName for a
        name no repository can have)."""
        now = time.monotonic()
        with self._lock:
            hit = self._repos.get(name)
        if hit is not None and now - hit[0] < REPOSITORY_SECONDS:
            return hit[1]
        repo = self.client.repository(name)
        with self._lock:
            if len(self._repos) > 1000:
                self._repos.clear()
            self._repos[name] = (now, repo)
        return repo

    def remember(self, repo: Repository) -> None:
        """Keep a handle just made (a repository just created)."""
        with self._lock:
            self._repos[repo.name] = (time.monotonic(), repo)

    def forget(self, name: str) -> None:
        """Drop the handle of a repository deleted here."""
        with self._lock:
            self._repos.pop(name, None)
