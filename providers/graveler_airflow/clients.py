"""One graveler client per process and connection settings.

A client holds a SQLAlchemy engine (a connection pool) and a tree cache with a RAM budget, so
opening one per sensor poke or per deferred sensor multiplies connections and memory in the
triggerer. Sensors, triggers and the ``graveler://`` filesystem take their client from
:func:`shared_client` instead: every user of the same settings in one process gets the same
client, kept open for the life of the process. A forked child gets clients of its own (the
key includes the process ID), never its parent's pooled connections.
"""

from __future__ import annotations

import os
import threading

from graveler import ClientSettings, Graveler

_CLIENTS: dict[tuple[int, tuple[tuple[str, str], ...]], Graveler] = {}
_LOCK = threading.Lock()


def shared_client(settings: ClientSettings) -> Graveler:
    """The process's client for ``settings`` (opened on first use, never closed). Safe to
    call from several threads; the client is shared by them."""
    key = (os.getpid(), tuple(sorted(settings.to_mapping().items())))
    with _LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            client = _CLIENTS[key] = Graveler(settings=settings)
        return client


def open_clients() -> int:
    """How many shared clients this process holds (for tests and diagnostics)."""
    pid = os.getpid()
    with _LOCK:
        return sum(1 for (owner, _) in _CLIENTS if owner == pid)
