"""``GravelerHook``: an Airflow connection of type ``graveler`` turned into a graveler client.

Airflow 3 task code may not use Airflow's own ORM session, so graveler opens its own SQLAlchemy
engine from the connection. The refs database may be a separate one or the very database that
holds Airflow's metadata (``airflow db migrate`` then creates graveler's tables there, see
:mod:`graveler_airflow.db_manager`).

Connection fields (labels as shown in the connection form):

* ``extra.database_url`` (Refs database URL): ``postgresql+psycopg://host/db``,
  ``sqlite:////abs/path.db``... Default: SQLite in the cache directory, one machine only.
* ``login`` / ``password`` (Database user / password): put into the URL when it has none.
* ``extra.home`` (Cache directory): tree cache and default local storage namespaces.
  Default: ``$AIRFLOW_HOME/graveler``.
* ``extra.s3_endpoint_url``, ``extra.s3_region``, ``extra.aws_access_key_id``,
  ``extra.aws_secret_access_key``: S3 settings (otherwise boto3's usual chain). They apply to
  ``s3://`` storage namespaces only.
* ``extra.cache_ram_bytes``, ``extra.cache_disk_bytes``: tree cache budgets.

The extra fields are the keys of :mod:`graveler.config`, read by
:meth:`graveler.ClientSettings.from_mapping` as every other adapter reads its own settings.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any

from airflow.sdk import BaseHook
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from graveler import ClientSettings, Graveler, Repository
from graveler.config import redact_url
from graveler.errors import GravelerError, InvalidArgument


def settings_from_connection(
    login: str | None, password: str | None, extra: Mapping[str, Any]
) -> ClientSettings:
    """Client settings from a connection's login, password and extra fields (the keys of
    :mod:`graveler.config`), over the worker's environment.

    Raises InvalidArgument for an unparsable database URL or a malformed number; blank extra
    values count as unset.
    """
    given = ClientSettings.from_mapping(extra)
    home = given.home or default_home()
    url = given.database_url or f"sqlite:///{Path(home).absolute() / 'graveler.db'}"
    connection = replace(given, home=home, database_url=_with_credentials(url, login, password))
    return connection.over(ClientSettings.from_env())


def default_home() -> str:
    """``$AIRFLOW_HOME/graveler`` (``~/airflow/graveler`` when AIRFLOW_HOME is unset)."""
    airflow_home = os.environ.get("AIRFLOW_HOME") or os.path.expanduser("~/airflow")
    return os.path.join(airflow_home, "graveler")


def _with_credentials(url: str, login: str | None, password: str | None) -> str:
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as exc:  # not chained: the cause may quote the URL
        shown = redact_url(url)
        raise InvalidArgument(f"graveler connection: invalid database_url {shown}: {exc}") from None
    if login and parsed.username is None:
        parsed = parsed.set(username=login, password=password or None)
    return parsed.render_as_string(hide_password=False)


class GravelerHook(BaseHook):
    """A graveler client bound to an Airflow connection of type ``graveler``.

    >>> with GravelerHook("graveler_default") as hook:          # doctest: +SKIP
    ...     repo = hook.get_repository("lake")
    ...     repo.commit("etl", "nightly load")

    The client (one SQLAlchemy engine, one tree cache) is opened on first use and released by
    :meth:`close` (or leaving the ``with`` block).
    """

    conn_name_attr = "graveler_conn_id"
    default_conn_name = "graveler_default"
    conn_type = "graveler"
    hook_name = "Graveler"

    def __init__(self, graveler_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.graveler_conn_id = graveler_conn_id
        self._client: Graveler | None = None

    def get_settings(self) -> ClientSettings:
        """The client settings stored in the connection."""
        conn = self.get_connection(self.graveler_conn_id)
        return settings_from_connection(conn.login, conn.password, conn.extra_dejson)

    def get_conn(self) -> Graveler:
        """The hook's client, opened on first call."""
        if self._client is None:
            self._client = Graveler(settings=self.get_settings())
        return self._client

    def get_repository(self, name: str) -> Repository:
        """A handle on repository ``name``; raises RepositoryNotFound when it does not exist."""
        return self.get_conn().repository(name)

    def get_iceberg_catalog(self, name: str, **labels: str) -> Any:
        """A pyiceberg catalog over repository ``name``
        (:class:`graveler.tables.iceberg.GravelerCatalog`: identifiers ``REF.NAMESPACE.TABLE``, one
        commit per table change); ``labels`` are recorded on its commits. Needs the
        ``tables`` extra (pyiceberg)."""
        from graveler.tables.iceberg import GravelerCatalog

        return GravelerCatalog(
            name, self.get_repository(name), committer="airflow", labels=labels or None
        )

    def close(self) -> None:
        """Release the client's database connections (a later call opens a new client)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> GravelerHook:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def test_connection(self) -> tuple[bool, str]:
        """Open the refs database (creating or upgrading graveler's tables) and list the
        repositories; returns ``(ok, message)`` as Airflow's "Test" button expects."""
        try:
            with self:
                names = [r.name for r in self.get_conn().list_repositories()]
        except GravelerError as exc:
            return False, f"{type(exc).__name__}: {exc}"
        shown = ", ".join(names[:10]) + (" ..." if len(names) > 10 else "")
        return True, f"Connected: {len(names)} repositories" + (f" ({shown})" if names else "")
