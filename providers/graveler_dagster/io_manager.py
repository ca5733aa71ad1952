"""``GravelerIOManager``: asset values stored in graveler, on the run's own branch.

Layout: an asset's output is the object ``<prefix>/<asset key path>`` on the run branch
(``graveler://<repo>/<branch_prefix><run id>/<asset key path>``); a partitioned asset has one
object per partition, ``<asset key path>/<partition key>``. Outputs of plain ops (no asset key)
go to ``_dagster/runs/<run id>/<step key>/<output name>``. Each output is committed on the run
branch; the run-status sensor merges the branch into the target when the run succeeds.

Inputs are read at the version Dagster's lineage names (:mod:`graveler_dagster.inputs`): the
run branch when this run (or the failed run it re-executes) wrote the object, the commit that
triggered a diff-sensor run, else the commit recorded by the asset's latest materialization
(publishing its run first if the merge sensor has not yet), else the target's head. The run
branch was cut when the run started and may hold stale copies of assets other runs have since
merged, so it is never read for anything the run did not write. Input metadata ``ref`` pins a
ref; ``columns`` loads only those columns of a table.

Materializations carry ``graveler/uri`` and ``dagster/uri``: a commit-addressed URI
(``graveler://<repo>/<commit id>/<path>``) that still resolves after the run branch is merged
and deleted; with the resource's ``graveler_ui_url``, also ``graveler/ui``, a link to that
version in graveler's web UI (the object page, or the object browser at the commit for a run
that wrote several partitions); tables also carry ``dagster/table_name``,
``dagster/column_schema`` and ``dagster/row_count``.

Values are Parquet for pandas / polars / pyarrow tables, pickle otherwise
(:mod:`graveler_dagster.formats`). A ``None`` output stores nothing (assets that stage their
own files return None).
"""

from collections.abc import Mapping, Sequence
from typing import Any

from dagster import (
    AssetKey,
    ConfigurableIOManager,
    InputContext,
    MetadataValue,
    OutputContext,
    ResourceDependency,
)
from pydantic import Field

from graveler import GravelerURI, ObjectEntry, Repository
from graveler.config import REDACTED
from graveler.errors import InvalidArgument, NotFound, ObjectNotFound
from graveler_dagster import formats, handlers, lineage, tables
from graveler_dagster.inputs import InputSources
from graveler_dagster.resource import GravelerResource
from graveler_dagster.runs import (
    RUN_ID_KEY,
    claim_tags,
    commit_staged,
    ensure_run_branch,
    run_lineage,
)

OPS_PREFIX = "_dagster/runs"


class GravelerIOManager(ConfigurableIOManager):
    """Stores asset outputs on the run's graveler branch and loads inputs from it or ``main``.

    Examples:
        .. code-block:: python

            graveler = GravelerResource(repository="lake")
            defs = dg.Definitions(
                assets=[...],
                resources={
                    "graveler": graveler,
                    "io_manager": GravelerIOManager(graveler=graveler),
                },
                sensors=[build_graveler_merge_sensor(), build_graveler_failure_sensor()],
            )

        :func:`graveler_dagster.graveler_definitions` builds exactly this.
    """

    graveler: ResourceDependency[GravelerResource]
    prefix: str = Field(default="", description="Key prefix for every object, e.g. 'assets'.")
    merge_strategy: str | None = Field(
        default="source-wins",
        description="Strategy for publishing an upstream run whose output an input needs "
        "before the merge sensor has published it (the merge sensor's strategy).",
    )
    pickle_secret: str | None = Field(
        default=None,
        description="Secret (use EnvVar) that signs pickled outputs; when set, only pickles "
        "signed with it are loaded, so no other writer to the lake can pass for this IO manager.",
    )

    def __repr_args__(self) -> Any:
        """What repr() and str() show: the pickle secret hidden."""
        for name, value in super().__repr_args__():
            yield name, (REDACTED if name == "pickle_secret" and value else value)

    def type_handlers(self) -> Sequence[handlers.TypeHandler]:
        """Handlers for more kinds of values, consulted before the built-in formats (see
        :mod:`graveler_dagster.handlers`). Override in a subclass; none by default."""
        return ()

    # --- output ----------------------------------------------------------------------------------

    def handle_output(self, context: OutputContext, obj: Any) -> None:
        if obj is None:
            context.log.debug("GravelerIOManager: output is None, nothing stored")
            return
        values = self._output_items(context, obj)
        own = handlers.check(self.type_handlers())
        items = [(path, handlers.encode(own, v, self.pickle_secret)) for path, v in values]
        step = context.step_context
        gv = self.graveler
        repo = gv.get_repository()
        lineage = run_lineage(step.instance, step.dagster_run)
        branch = ensure_run_branch(gv, repo, context.run_id, lineage)
        claim_tags(step.instance, step.dagster_run, branch)
        for path, enc in items:
            meta = enc.metadata(context.run_id)
            repo.put(branch, path, enc.data, content_type=enc.content_type, metadata=meta)
        what = _describe(context)
        commit = commit_staged(
            repo,
            branch,
            f"Materialize {what}",
            {RUN_ID_KEY: context.run_id, "dagster/output": what},
        )
        out = _output_metadata(repo, branch, commit.id, items, gv.graveler_ui_url)
        fmt = items[0][1].format
        if fmt in formats.FRAME_FORMATS:
            out["dagster/column_schema"] = tables.column_schema(values[0][1], fmt)
            out["dagster/table_name"] = _table_name(repo.name, context, self._asset_path)
        context.add_output_metadata(out)

    def _output_items(self, context: OutputContext, obj: Any) -> list[tuple[str, Any]]:
        """(path, value) pairs to write; validated before anything is written."""
        if not context.has_asset_key:
            return [(_join(OPS_PREFIX, *context.get_identifier()), obj)]
        base = self._asset_path(context.asset_key.path)
        if not context.has_asset_partitions:
            return [(base, obj)]
        keys = list(context.asset_partition_keys)
        if len(keys) == 1:
            return [(_join(base, keys[0]), obj)]
        if not isinstance(obj, Mapping) or set(obj) != set(keys):
            raise InvalidArgument(
                f"asset {base!r} materializes {len(keys)} partitions in one run: return a dict "
                "mapping each partition key to its value"
            )
        return [(_join(base, k), obj[k]) for k in keys]

    # --- input -----------------------------------------------------------------------------------

    def load_input(self, context: InputContext) -> Any:
        step = context.step_context
        gv = self.graveler
        repo = gv.get_repository()
        lineage = run_lineage(step.instance, step.dagster_run)
        if len(lineage) > 1:  # a re-execution: its branch starts from the failed run's
            branch = ensure_run_branch(gv, repo, lineage[0], lineage)
            claim_tags(step.instance, step.dagster_run, branch)
        wanted = formats.wanted_format(context.dagster_type.typing_type)
        upstream = context.upstream_output
        if context.has_asset_key:
            asset_key = context.asset_key
        elif upstream is not None and upstream.has_asset_key:  # loading a result after the run
            asset_key = upstream.asset_key
        elif upstream is not None:
            path = _join(OPS_PREFIX, *upstream.get_identifier())
            branch = gv.run_branch_name(lineage[0])
            return self._read(context, repo, branch, None, path, wanted)[0]
        else:
            raise InvalidArgument("GravelerIOManager cannot load an input with no upstream")
        return self._load_asset(context, repo, asset_key, lineage, wanted)

    def _load_asset(
        self,
        context: InputContext,
        repo: Repository,
        key: AssetKey,
        lineage: Sequence[str],
        wanted: str | None,
    ) -> Any:
        """One value, or ``{partition key: value}`` when the input spans several partitions
        (or a partitioned asset feeds an unpartitioned one). A single object read records
        its commit-addressed URI as input metadata (``graveler/uri``)."""
        sources = InputSources(self.graveler, repo, context, lineage, self.merge_strategy)
        base = self._asset_path(key.path)
        if not context.has_asset_partitions:
            value, uri = self._read(context, repo, *sources.source(key, base, None), base, wanted)
            _record(context, uri)
            return value
        values, uris = {}, []
        for partition in context.asset_partition_keys:
            path = _join(base, partition)
            ref, entry = sources.source(key, path, partition)
            values[partition], uri = self._read(context, repo, ref, entry, path, wanted)
            uris.append(uri)
        if context.has_partition_key and len(values) == 1:
            _record(context, uris[0])
            return next(iter(values.values()))
        return values

    def _asset_path(self, parts: Sequence[str]) -> str:
        return _join(self.prefix, *parts)

    def _read(
        self,
        context: InputContext,
        repo: Repository,
        ref: str,
        entry: ObjectEntry | None,
        path: str,
        wanted: str | None,
    ) -> tuple[Any, GravelerURI]:
        """The value at ``path`` on ``ref`` (``entry`` when already looked up there), only
        the ``columns`` the input's metadata asks for, and the commit-addressed URI read.
        Built-in formats are decoded only as :func:`graveler_dagster.formats.load` allows."""
        try:
            commit = repo.resolve(ref).commit.id
            entry = entry or repo.stat(commit, path)
        except NotFound as exc:
            raise ObjectNotFound(
                f"{GravelerURI(repo.name, ref, path)} does not exist: the asset was neither "
                "written in this run nor merged into the target branch"
            ) from exc
        where = GravelerURI(repo.name, commit, path)
        written = entry.metadata.get(formats.FORMAT_KEY)
        columns = tables.wanted_columns(context.definition_metadata)
        handler = handlers.find(self.type_handlers(), written) if written else None
        data = repo.read_entry(entry)
        if handler is not None and columns is None:
            return handler.decode(data, context.dagster_type.typing_type), where
        if columns is None or written is None:  # load refuses what the IO manager did not write
            meta, ctype, secret = entry.metadata, entry.content_type, self.pickle_secret
            return formats.load(data, meta, ctype, str(where), wanted, secret), where
        if written not in formats.FRAME_FORMATS:
            raise InvalidArgument(f"{where} is not a table ({written}): 'columns' cannot apply")
        return tables.read_columns(data, written, wanted, columns, str(where)), where


def _record(context: InputContext, uri: GravelerURI) -> None:
    if context.has_asset_key:
        context.add_input_metadata({"graveler/uri": MetadataValue.path(str(uri))})


def _join(*parts: str) -> str:
    return "/".join(p.strip("/") for p in parts if p and p.strip("/"))


def _describe(context: OutputContext) -> str:
    if not context.has_asset_key:
        return f"{context.step_key}.{context.name}"
    name = context.asset_key.to_user_string()
    if context.has_asset_partitions:
        keys = context.asset_partition_keys
        return f"{name} [{keys[0]}]" if len(keys) == 1 else f"{name} [{len(keys)} partitions]"
    return name


def _output_metadata(
    repo: Repository,
    branch: str,
    commit_id: str,
    items: Sequence[tuple[str, formats.Encoded]],
    ui_base: str | None,
) -> dict[str, Any]:
    """The materialization's metadata: the version written, addressed by ``commit_id``."""
    several = len(items) > 1
    path = items[0][0].rsplit("/", 1)[0] if several else items[0][0]
    uri = str(GravelerURI(repo.name, commit_id, path))  # resolves after the branch is gone
    meta: dict[str, Any] = {
        **lineage.ui_metadata(ui_base, repo.name, commit_id, path, prefix=several),
        "graveler/uri": MetadataValue.path(uri),
        "dagster/uri": MetadataValue.text(uri),
        "graveler/branch": branch,
        "graveler/commit": commit_id,
        "graveler/size": sum(len(enc.data) for _, enc in items),
        "graveler/format": items[0][1].format,
    }
    rows = [enc.rows for _, enc in items]
    if all(r is not None for r in rows):
        meta["dagster/row_count"] = sum(r for r in rows if r is not None)
    return meta


def _table_name(repository: str, context: OutputContext, asset_path: Any) -> str:
    """``<repository>.<asset path, dotted>``: one name per table, whatever the partition."""
    parts = context.get_identifier() if not context.has_asset_key else context.asset_key.path
    return ".".join([repository, *asset_path(parts).split("/")])
