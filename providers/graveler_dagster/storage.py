"""Where graveler keeps its refs and cache in a Dagster deployment, when not configured.

Rules, first match wins (see :func:`default_database_url` and :func:`default_home`):

1. Dagster's storage is PostgreSQL (``storage: postgres:`` in ``dagster.yaml``, or a
   ``dagster_postgres`` run storage): graveler uses the same database through psycopg 3. Its
   tables are prefixed ``graveler_`` and never collide with Dagster's.
2. The instance is persistent (it has a ``DAGSTER_HOME``): SQLite at
   ``$DAGSTER_HOME/graveler/graveler.db``.
3. ``DAGSTER_HOME`` is set in the environment: the same file under it.
4. Otherwise (an ephemeral instance and no ``DAGSTER_HOME``) there is no durable place, and the
   caller gets :class:`graveler.errors.InvalidArgument` asking for ``database_url``.

The PostgreSQL settings are read from the instance's configuration (not from a connection of
``dagster_postgres``), so this module needs neither ``dagster_postgres`` nor ``psycopg2``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from dagster import DagsterInstance

from graveler.config import redact_url
from graveler.errors import InvalidArgument

if TYPE_CHECKING:
    from dagster._core.instance.ref import InstanceRef

#: Sub-directory of DAGSTER_HOME holding graveler's SQLite file, cache and default namespaces.
HOME_DIRNAME = "graveler"
_PG_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg2", "postgresql+psycopg")


def default_home(instance: DagsterInstance | None) -> Path:
    """``<DAGSTER_HOME>/graveler`` for a persistent instance or a set ``DAGSTER_HOME``."""
    if instance is not None and not instance.is_ephemeral:
        return Path(instance.root_directory) / HOME_DIRNAME
    env_home = os.environ.get("DAGSTER_HOME")
    if env_home:
        return Path(env_home) / HOME_DIRNAME
    raise InvalidArgument(
        "GravelerResource has no durable place for its state: Dagster runs with an ephemeral "
        "instance and DAGSTER_HOME is not set. Set DAGSTER_HOME, or configure database_url "
        "and home (and storage_namespace) on the resource."
    )


def default_database_url(instance: DagsterInstance | None) -> str:
    """The SQLAlchemy URL graveler uses when the resource sets no ``database_url``."""
    if instance is not None and not instance.is_ephemeral:
        pg = postgres_url_of_instance(instance)
        if pg is not None:
            return pg
    return f"sqlite:///{default_home(instance) / 'graveler.db'}"


def postgres_url_of_instance(instance: DagsterInstance) -> str | None:
    """The psycopg 3 URL of the instance's PostgreSQL storage, or None if it uses another."""
    return postgres_url_of_ref(instance.get_ref())


def postgres_url_of_ref(ref: InstanceRef) -> str | None:
    """Like :func:`postgres_url_of_instance`, from the instance's configuration alone."""
    for data in (ref.storage_data, ref.run_storage_data):
        if data is not None and data.module_name.startswith("dagster_postgres"):
            return postgres_url_from_config(data.config_dict)
    return None


def postgres_url_from_config(config: Mapping[str, Any]) -> str:
    """Translate dagster-postgres storage config (``postgres_url`` or ``postgres_db``) into a
    ``postgresql+psycopg://`` URL. ``{env: NAME}`` values are read from the environment."""
    if "postgres_url" in config:
        return _psycopg3_url(_value(config["postgres_url"], "postgres_url"))
    db = config.get("postgres_db")
    if not isinstance(db, Mapping):
        raise InvalidArgument(
            "Dagster's PostgreSQL storage config has neither postgres_url nor postgres_db"
        )
    user = quote(_value(db.get("username"), "username"), safe="")
    password = quote(_value(db.get("password"), "password"), safe="")
    host = _value(db.get("hostname"), "hostname")
    raw_port = _value(db.get("port", 5432), "port")
    if not raw_port.isdigit():
        raise InvalidArgument(f"Dagster's PostgreSQL setting port must be a number: {raw_port!r}")
    port = int(raw_port)
    name = quote(_value(db.get("db_name"), "db_name"), safe="")
    params = {k: _value(v, k) for k, v in (db.get("params") or {}).items()}
    query = f"?{urlencode(params)}" if params else ""
    return f"postgresql+psycopg://{user}:{password}@{host}:{port}/{name}{query}"


def _psycopg3_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in _PG_SCHEMES:
        shown = redact_url(url)
        raise InvalidArgument(f"Dagster's postgres_url {shown} is not a postgresql:// URL")
    return urlunsplit(("postgresql+psycopg", *parts[1:]))


def _value(raw: object, name: str) -> str:
    if isinstance(raw, Mapping) and "env" in raw:
        value = os.environ.get(str(raw["env"]))
        if value is None:
            raise InvalidArgument(
                f"Dagster's PostgreSQL setting {name} reads environment variable "
                f"{raw['env']!r}, which is not set"
            )
        return value
    if raw is None or raw == "":
        raise InvalidArgument(f"Dagster's PostgreSQL storage config lacks {name}")
    return str(raw)
