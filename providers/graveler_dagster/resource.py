"""``GravelerResource``: one repository of a graveler deployment, as a Dagster resource.

The resource is configuration (database, repository, storage settings, run-branch naming) plus
a lazily opened :class:`graveler.Graveler` client, closed when Dagster tears the resource down.
Run-branch handling lives in :mod:`graveler_dagster.runs`; this module only names branches.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dagster import ConfigurableResource, DagsterInstance, InitResourceContext
from pydantic import Field, PrivateAttr

from graveler import ClientSettings, Graveler, MergeOptions, Repository
from graveler.config import REDACTED, SECRET_STORE_OPTIONS, STORE_ALIASES, redact_url
from graveler.errors import AlreadyExists, NamespaceInUse, RepositoryNotFound
from graveler_dagster.storage import default_database_url, default_home


class GravelerResource(ConfigurableResource):  # type: ignore[type-arg]
    """A connected graveler client bound to one repository.

    Examples:
        .. code-block:: python

            import dagster as dg
            from graveler_dagster import GravelerResource, graveler_definitions

            graveler = GravelerResource(repository="lake")
            defs = dg.Definitions(assets=[...], **graveler_definitions(graveler))

    Every setting left unset has a default derived from the Dagster instance: see
    :mod:`graveler_dagster.storage`.
    """

    repository: str = Field(description="Name of the graveler repository the assets live in.")
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of graveler's refs database. Default: Dagster's PostgreSQL "
        "storage when it has one, else sqlite:///$DAGSTER_HOME/graveler/graveler.db.",
    )
    home: str | None = Field(
        default=None,
        description="Directory for graveler's cache and default local namespaces. "
        "Default: $DAGSTER_HOME/graveler.",
    )
    storage_namespace: str | None = Field(
        default=None,
        description="Where a repository created by this resource keeps its objects "
        "(file:///..., s3://bucket/prefix). Default: <home>/data/<repository>.",
    )
    create_repository: bool = Field(
        default=True, description="Create the repository on first use when it does not exist."
    )
    target_branch: str | None = Field(
        default=None,
        description="Branch that successful runs merge into and that inputs fall back to. "
        "Default: the repository's default branch (main).",
    )
    branch_prefix: str = Field(
        default="dagster-run-", description="Run branches are named <branch_prefix><run id>."
    )
    merge_fast_forward: bool | None = Field(
        default=None,
        description="Let an unchanged target simply move to a run's last commit. Default: "
        "no (a merge commit carrying the run's identity), yes with merge_ff_only.",
    )
    merge_ff_only: bool = Field(
        default=False,
        description="Publish runs only by fast-forward; a target that moved refuses the "
        "merge (NotFastForward) and keeps the run's branch.",
    )
    merge_squash: bool = Field(
        default=False,
        description="Publish a run as one commit whose only parent is the target's head.",
    )
    merge_allow_empty: bool = Field(
        default=False, description="Make the merge commit even for a run that wrote nothing new."
    )
    dagster_ui_url: str = Field(
        default="http://localhost:3000",
        description="Base URL of the Dagster UI, for the run link in merge-commit metadata.",
    )
    graveler_ui_url: str | None = Field(
        default=None,
        description="Base URL of a running graveler web UI: `graveler ui` "
        "(http://127.0.0.1:8765) or the Airflow plugin's mount (http://<airflow>/graveler). "
        "When set, materializations carry 'graveler/ui', a link to the object at its commit "
        "there; unset, no link.",
    )
    s3_endpoint_url: str | None = Field(default=None, description="S3 endpoint (MinIO etc.).")
    s3_region: str | None = Field(default=None, description="S3 region.")
    s3_access_key_id: str | None = Field(default=None, description="S3 key (use EnvVar).")
    s3_secret_access_key: str | None = Field(default=None, description="S3 secret (use EnvVar).")

    _instance: DagsterInstance | None = PrivateAttr(default=None)
    _client: Graveler | None = PrivateAttr(default=None)

    def __repr_args__(self) -> Any:
        """What repr() and str() show: the database password and S3 secrets hidden."""
        for name, value in super().__repr_args__():
            if name == "database_url" and isinstance(value, str):
                yield name, redact_url(value)
            elif STORE_ALIASES.get(str(name)) in SECRET_STORE_OPTIONS and value is not None:
                yield name, REDACTED
            else:
                yield name, value

    def setup_for_execution(self, context: InitResourceContext) -> None:
        self._instance = context.instance

    def teardown_after_execution(self, context: InitResourceContext) -> None:
        self.close()

    def close(self) -> None:
        """Close the client (its database connections); the next use reopens it."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def get_client(self) -> Graveler:
        """The connected client, opened on first use (database and home as configured)."""
        if self._client is None:
            self._client = Graveler(settings=self.settings())
        return self._client

    def settings(self) -> ClientSettings:
        """The client settings of this resource: its fields (the keys of
        :mod:`graveler.config`), then the defaults of :mod:`graveler_dagster.storage`."""
        given = ClientSettings.from_mapping(self.model_dump())
        return replace(
            given,
            home=given.home or str(default_home(self._instance)),
            database_url=given.database_url or default_database_url(self._instance),
        )

    def get_repository(self, name: str | None = None) -> Repository:
        """The configured repository (or ``name``), created first if allowed and missing."""
        client = self.get_client()
        wanted = name or self.repository
        try:
            return client.repository(wanted)
        except RepositoryNotFound:
            if not self.create_repository or name not in (None, self.repository):
                raise
        try:
            return client.create_repository(wanted, self.storage_namespace)
        except NamespaceInUse:  # another repository's location: say so
            raise
        except AlreadyExists:  # created meanwhile by a concurrent step
            return client.repository(wanted)

    def merge_options(self) -> MergeOptions:
        """How runs are published (lakectl's merge options, :mod:`graveler.versioning.merge`);
        raises InvalidArgument for contradictory fields."""
        ff_only = self.merge_ff_only
        ff = ff_only if self.merge_fast_forward is None else self.merge_fast_forward
        return MergeOptions(ff, ff_only, self.merge_squash, self.merge_allow_empty)

    def target(self, repo: Repository) -> str:
        """The branch successful runs merge into."""
        return self.target_branch or repo.info.default_branch

    def run_branch_name(self, run_id: str) -> str:
        """The branch of Dagster run ``run_id``."""
        return f"{self.branch_prefix}{run_id}"

    def run_url(self, run_id: str) -> str:
        return f"{self.dagster_ui_url.rstrip('/')}/runs/{run_id}"
