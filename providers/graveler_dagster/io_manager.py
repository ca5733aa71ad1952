"""``GravelerIOManager``: asset values stored in graveler, on the run's own branch.

Layout: an asset's output is the object ``<prefix>/<asset key path>`` on the run branch
(``graveler://<repo>/<branch_prefix><run id>/<asset key path>``); a partitioned asset has one
object per partition, ``<asset key path>/<partition key>``. Outputs of plain ops (no asset key)
go to ``_dagster/runs/<run id>/<step key>/<output name>``. Each output is committed on the run
branch; the run-status sensor merges the branch into the target when the run succeeds.

Inputs are read from the run branch when the object there was written by this run (or by the
failed run it re-executes), else from the target branch (``main``): the run branch was cut
when the run started and may hold stale copies of assets other runs have since merged.

Values are Parquet for pandas / polars / pyarrow tables, pickle otherwise
(:mod:`graveler_dagster.formats`). A ``None`` output stores nothing (assets that stage their
own files return None). Inputs are unpickled only when the IO manager wrote them itself (see
the trust model in :mod:`graveler_dagster.formats`; set ``pickle_secret`` so that no other
writer can pass for it); anything else without ``dagster/format`` metadata is refused.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from dagster import (
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
from graveler_dagster import formats
from graveler_dagster.resource import GravelerResource
from graveler_dagster.runs import (
    RUN_ID_KEY,
    commit_staged,
    ensure_run_branch,
    read_source,
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
    pickle_secret: str | None = Field(
        default=None,
        description="Secret (use EnvVar) that signs pickled outputs; when set, only pickles "
        "signed with it are loaded, so no other writer to the lake can pass for this IO manager.",
    )

    def __repr_args__(self) -> Any:
        """What repr() and str() show: the pickle secret hidden."""
        for name, value in super().__repr_args__():
            yield name, (REDACTED if name == "pickle_secret" and value else value)

    # --- output ----------------------------------------------------------------------------------

    def handle_output(self, context: OutputContext, obj: Any) -> None:
        if obj is None:
            context.log.debug("GravelerIOManager: output is None, nothing stored")
            return
        secret = self.pickle_secret
        items = [(p, formats.encode(v, secret)) for p, v in self._output_items(context, obj)]
        step = context.step_context
        gv = self.graveler
        repo = gv.get_repository()
        lineage = run_lineage(step.instance, step.dagster_run)
        branch = ensure_run_branch(gv, repo, context.run_id, lineage)
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
        context.add_output_metadata(_output_metadata(repo, branch, commit.id, items))

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
            ensure_run_branch(gv, repo, lineage[0], lineage)
        wanted = formats.wanted_format(context.dagster_type.typing_type)
        upstream = context.upstream_output
        if context.has_asset_key:
            asset_key = context.asset_key
        elif upstream is not None and upstream.has_asset_key:  # loading a result after the run
            asset_key = upstream.asset_key
        elif upstream is not None:
            path = _join(OPS_PREFIX, *upstream.get_identifier())
            return self._read(repo, gv.run_branch_name(lineage[0]), None, path, wanted)
        else:
            raise InvalidArgument("GravelerIOManager cannot load an input with no upstream")
        return self._load_asset(context, repo, self._asset_path(asset_key.path), lineage, wanted)

    def _load_asset(
        self,
        context: InputContext,
        repo: Repository,
        base: str,
        lineage: Sequence[str],
        wanted: str | None,
    ) -> Any:
        """One value, or ``{partition key: value}`` when the input spans several partitions
        (or a partitioned asset feeds an unpartitioned one)."""
        gv = self.graveler
        if not context.has_asset_partitions:
            return self._read(repo, *read_source(gv, repo, base, lineage), base, wanted)
        values = {}
        for partition in context.asset_partition_keys:
            path = _join(base, partition)
            source = read_source(gv, repo, path, lineage)
            values[partition] = self._read(repo, *source, path, wanted)
        if context.has_partition_key and len(values) == 1:
            return next(iter(values.values()))
        return values

    def _asset_path(self, parts: Sequence[str]) -> str:
        return _join(self.prefix, *parts)

    def _read(
        self,
        repo: Repository,
        ref: str,
        entry: ObjectEntry | None,
        path: str,
        wanted: str | None,
    ) -> Any:
        """The value at ``path`` on ``ref`` (``entry`` when already looked up there); only
        what :func:`graveler_dagster.formats.load` accepts is decoded."""
        where = str(GravelerURI(repo.name, ref, path))
        try:
            entry = entry or repo.stat(ref, path)
        except NotFound as exc:
            raise ObjectNotFound(
                f"{where} does not exist: the asset was neither written in this run nor "
                "merged into the target branch"
            ) from exc
        data = repo.read_entry(entry)
        meta, ctype = entry.metadata, entry.content_type
        return formats.load(data, meta, ctype, where, wanted, self.pickle_secret)


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
    repo: Repository, branch: str, commit_id: str, items: Sequence[tuple[str, formats.Encoded]]
) -> dict[str, Any]:
    path = items[0][0] if len(items) == 1 else items[0][0].rsplit("/", 1)[0]
    meta: dict[str, Any] = {
        "graveler/uri": MetadataValue.path(str(GravelerURI(repo.name, branch, path))),
        "graveler/branch": branch,
        "graveler/commit": commit_id,
        "graveler/size": sum(len(enc.data) for _, enc in items),
        "graveler/format": items[0][1].format,
    }
    rows = [enc.rows for _, enc in items]
    if all(r is not None for r in rows):
        meta["dagster/row_count"] = sum(r for r in rows if r is not None)
    return meta
