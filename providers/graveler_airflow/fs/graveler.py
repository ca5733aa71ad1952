"""``graveler://`` for Airflow's object storage: ``ObjectStoragePath`` and ``attach``.

    from airflow.sdk import ObjectStoragePath

    path = ObjectStoragePath("graveler://lake/main/clean/daily.csv", conn_id="graveler_default")
    path.read_text()

Declared under ``filesystems`` in the provider info, so Airflow asks :func:`get_fs` for the
filesystem of a ``graveler://`` path: a :class:`graveler_fsspec.GravelerFileSystem` on the
process's shared client for the connection's settings (refs database, cache directory, S3
settings), never the current directory. Without a ``conn_id`` the connection is
``graveler_default``. Extra ``storage_options`` are passed to the filesystem.

This module is imported whenever Airflow loads filesystems (for any scheme), so it imports
nothing heavy until :func:`get_fs` is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

schemes = ["graveler"]


def get_fs(
    conn_id: str | None, storage_options: dict[str, Any] | None = None
) -> AbstractFileSystem:
    """The filesystem of connection ``conn_id`` (default ``graveler_default``)."""
    from graveler_fsspec import GravelerFileSystem

    from graveler import shared_client
    from graveler_airflow.hooks.graveler import GravelerHook

    settings = GravelerHook(conn_id or GravelerHook.default_conn_name).get_settings()
    return GravelerFileSystem(client=shared_client(settings), **(storage_options or {}))
