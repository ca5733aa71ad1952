"""Iceberg for graveler repositories: the REST catalog that ``graveler serve`` mounts at
``/iceberg/api`` (:mod:`graveler.iceberg.rest`) and :class:`GravelerCatalog`, a pyiceberg
catalog that works on a repository in process, with no server (what the Dagster and Airflow
integrations use).

Both name tables ``REF.NAMESPACE....TABLE``: the first namespace level is a ref. They share
one engine (:mod:`graveler.tables.iceberg.catalog`), so a table written through either is
the same table. Needs ``pip install 'graveler[tables]'`` (pyiceberg).
"""

from __future__ import annotations

from typing import Any

__all__ = ["GravelerCatalog"]


def __getattr__(name: str) -> Any:
    if name == "GravelerCatalog":
        from graveler.iceberg.catalog import GravelerCatalog

        return GravelerCatalog
    raise AttributeError(name)
