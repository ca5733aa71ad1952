"""``GravelerIcebergIOManager``: assets as Iceberg tables on the run's own branch.

An asset ``["sales", "orders"]`` is the Iceberg table ``<namespace>.sales.orders`` (the IO
manager's ``namespace``, default ``dagster``) of the repository, written through graveler's
in-process Iceberg catalog (:class:`graveler.tables.iceberg.GravelerCatalog`) on the run's branch
(``<branch_prefix><run id>``), one table commit per output; the merge sensor publishes the
branch when the run succeeds, and graveler merges the table by Iceberg's own rules (two runs
appending to one table both land; overwrites of one partition conflict).

As dagster-iceberg's IO managers do:

* outputs are pyarrow Tables or pandas / polars DataFrames; an unpartitioned asset replaces
  the table, a partitioned one replaces its partitions (``partition_expr`` definition
  metadata names the column: identity partitions for static and dynamic partitions, daily
  ones for time windows); ``write_mode: append`` metadata appends instead; new columns are
  added to the table's schema;
* inputs read the table (only the partitions asked for, only the ``columns`` the input's
  metadata names) as the annotation asks (default pyarrow);
* materializations carry ``dagster/table_name``, ``dagster/column_schema``,
  ``dagster/row_count``, and ``graveler/uri``: the table's pointer at the commit written,
  which still resolves after the run branch is merged and deleted. Inputs are read at the
  version Dagster's lineage names (:mod:`graveler_dagster.inputs`).
"""

from collections.abc import Sequence
from typing import Any

from dagster import (
    AssetKey,
    ConfigurableIOManager,
    InputContext,
    MetadataValue,
    OutputContext,
    ResourceDependency,
    TableColumn,
    TableSchema,
)
from pydantic import Field

from graveler import GravelerURI, Repository
from graveler.errors import InvalidArgument, NotFound
from graveler_dagster import formats, tables
from graveler_dagster.inputs import InputSources
from graveler_dagster.resource import GravelerResource
from graveler_dagster.runs import RUN_ID_KEY, claim_tags, ensure_run_branch, run_lineage

PARTITION_EXPR = "partition_expr"
WRITE_MODE = "write_mode"


def _iceberg() -> Any:
    from graveler_dagster import iceberg_tables

    return iceberg_tables


class GravelerIcebergIOManager(ConfigurableIOManager):
    """Stores asset outputs as Iceberg tables on the run's graveler branch (see the module
    docstring).

    Examples:
        .. code-block:: python

            graveler = GravelerResource(repository="lake")
            defs = dg.Definitions(
                assets=[...],
                resources={
                    "graveler": graveler,
                    "io_manager": GravelerIcebergIOManager(graveler=graveler),
                },
                sensors=[build_graveler_merge_sensor(), build_graveler_failure_sensor()],
            )
    """

    graveler: ResourceDependency[GravelerResource]
    namespace: str = Field(
        default="dagster", description="Iceberg namespace (below the ref) the tables live in."
    )
    merge_strategy: str | None = Field(
        default="source-wins",
        description="Strategy for publishing an upstream run whose output an input needs "
        "before the merge sensor has published it (the merge sensor's strategy).",
    )

    def handle_output(self, context: OutputContext, obj: Any) -> None:
        if obj is None:
            return
        if not context.has_asset_key:
            raise InvalidArgument("GravelerIcebergIOManager stores assets only, not op outputs")
        ice = _iceberg()
        data = ice.to_arrow(obj)
        step = context.step_context
        repo = self.graveler.get_repository()
        lineage = run_lineage(step.instance, step.dagster_run)
        branch = ensure_run_branch(self.graveler, repo, context.run_id, lineage)
        claim_tags(step.instance, step.dagster_run, branch)
        what = context.asset_key.to_user_string()
        labels = {RUN_ID_KEY: context.run_id, "dagster/output": what}
        written = ice.write(
            repo,
            branch,
            self._levels(context.asset_key),
            data,
            ice.Target.of(context, context.definition_metadata),
            labels,
        )
        context.add_output_metadata(self._metadata(repo, context.asset_key, branch, written, data))

    def load_input(self, context: InputContext) -> Any:
        key = _asset_key(context)
        ice = _iceberg()
        repo = self.graveler.get_repository()
        step = context.step_context
        lineage = run_lineage(step.instance, step.dagster_run)
        if len(lineage) > 1:  # a re-execution: its branch starts from the failed run's
            branch = ensure_run_branch(self.graveler, repo, lineage[0], lineage)
            claim_tags(step.instance, step.dagster_run, branch)
        levels = self._levels(key)
        pointer = ice.pointer_of(levels)
        sources = InputSources(self.graveler, repo, context, lineage, self.merge_strategy)
        upstream = context.upstream_output
        defined = upstream.definition_metadata if upstream is not None else {}
        keys = list(context.asset_partition_keys) if context.has_asset_partitions else [None]
        by_ref: dict[str, list[str | None]] = {}
        for partition in keys:
            ref, _ = sources.source(key, pointer, partition)
            by_ref.setdefault(repo.resolve(ref).commit.id, []).append(partition)
        columns = tables.wanted_columns(context.definition_metadata)
        try:
            value = ice.read(repo, levels, by_ref, ice.Target.reading(context, defined), columns)
        except NotFound as exc:
            raise NotFound(
                f"table {'.'.join(levels)} of asset {key.to_user_string()} does not exist: "
                "it was neither written in this run nor merged into the target branch"
            ) from exc
        if len(by_ref) == 1 and len(keys) == 1:  # Dagster records one partition's input
            uri = GravelerURI(repo.name, next(iter(by_ref)), pointer)
            context.add_input_metadata({"graveler/uri": MetadataValue.path(str(uri))})
        return ice.convert(value, formats.wanted_format(context.dagster_type.typing_type))

    def _levels(self, key: AssetKey) -> list[str]:
        return [*(p for p in self.namespace.split(".") if p), *key.path]

    def _metadata(
        self, repo: Repository, key: AssetKey, branch: str, written: Any, data: Any
    ) -> dict[str, Any]:
        levels = self._levels(key)
        uri = str(GravelerURI(repo.name, written.commit_id, _iceberg().pointer_of(levels)))
        return {
            "dagster/table_name": ".".join([repo.name, *levels]),
            "dagster/column_schema": TableSchema(
                columns=[TableColumn(name=f.name, type=str(f.type)) for f in data.schema]
            ),
            "dagster/row_count": data.num_rows,
            "dagster/uri": MetadataValue.text(uri),
            "graveler/uri": MetadataValue.path(uri),
            "graveler/branch": branch,
            "graveler/commit": written.commit_id,
            "iceberg/snapshot_id": MetadataValue.text(str(written.snapshot_id)),
            "iceberg/metadata_location": MetadataValue.path(written.metadata_location),
        }


def _asset_key(context: InputContext) -> AssetKey:
    if context.has_asset_key:
        return context.asset_key
    upstream = context.upstream_output
    if upstream is not None and upstream.has_asset_key:
        return upstream.asset_key
    raise InvalidArgument("GravelerIcebergIOManager loads assets only")


def names(levels: Sequence[str]) -> str:
    return ".".join(levels)
