"""Which version of an upstream asset a step reads: the one Dagster's lineage names.

For each input object (one per partition), first match wins:

1. the input pins a ref (``AssetIn(metadata={"ref": "v1"})``: a tag, commit or branch);
2. this run (or the failed run it re-executes) wrote the object: its run branch;
3. the run was requested by a diff sensor watching the target branch: the commit that
   triggered it (tag ``graveler/commit``);
4. Dagster's latest materialization of the asset (partition) names a graveler commit: that
   commit. Its run is published first when it succeeded and is not merged yet (the merge
   sensor may not have ticked), so a downstream run launched right after its upstream
   reads the upstream's output, never the target's older version. When that run failed,
   its materialization is restated as the target's version (:func:`lineage.restate`) and
   the target is read; while it is still running, the target is read, with a warning;
5. otherwise the target branch's head, resolved once per input, so that every partition of
   one input comes from one commit.

A publication refused by a conflict fails the step with a ``Failure`` that is not retried.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dagster import AssetKey, DagsterRunStatus, InputContext

from graveler import ObjectEntry, Repository
from graveler_dagster import lineage
from graveler_dagster.resource import GravelerResource
from graveler_dagster.runs import TAG_MERGE, publish_or_fail, read_source

#: Input metadata pinning the ref an input is read at.
REF_KEY = "ref"
TAG_COMMIT = "graveler/commit"
TAG_REPOSITORY = "graveler/repository"
TAG_REF = "graveler/ref"
_FAILED = (DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED)


@dataclass
class InputSources:
    """Resolves where each object of one input is read (see the module docstring)."""

    gv: GravelerResource
    repo: Repository
    context: InputContext
    lineage_ids: Sequence[str]
    strategy: str | None
    _head: str | None = field(default=None, init=False)

    def source(
        self, key: AssetKey | None, path: str, partition: str | None
    ) -> tuple[str, ObjectEntry | None]:
        """(ref to read at, the entry when already looked up there)."""
        pinned = (self.context.definition_metadata or {}).get(REF_KEY)
        if pinned:
            return str(pinned), None
        ref, entry = read_source(self.gv, self.repo, path, self.lineage_ids)
        if entry is not None:
            return ref, entry
        triggered = triggering_commit(self.context.step_context.dagster_run.tags, self.repo)
        if triggered is not None and triggered[1] == self.gv.target(self.repo):
            return triggered[0], None
        if key is not None:
            named = self._named_by_lineage(key, path, partition)
            if named is not None:
                return named, None
        return self.head(), None

    def head(self) -> str:
        """The target's head commit, resolved once."""
        if self._head is None:
            self._head = self.repo.resolve(self.gv.target(self.repo)).commit.id
        return self._head

    def _named_by_lineage(self, key: AssetKey, path: str, partition: str | None) -> str | None:
        instance = self.context.instance
        rec = lineage.recorded(lineage.latest(instance, key, partition), partition)
        if rec is None or rec.repository != self.repo.name or rec.path != path:
            return None
        if not rec.run_id or rec.run_id in self.lineage_ids:
            return rec.commit
        upstream = instance.get_run_by_id(rec.run_id)
        if upstream is None:
            return None
        if upstream.status == DagsterRunStatus.SUCCESS:
            if upstream.tags.get(TAG_MERGE) != "merged":
                publish_or_fail(self.gv, self.repo, instance, upstream, self.strategy)
            return rec.commit
        if upstream.status in _FAILED:
            target, ui = self.gv.target(self.repo), self.gv.graveler_ui_url
            lineage.restate(instance, self.repo, target, [rec.run_id], ui_base=ui)
            return None
        self.context.log.warning(
            f"graveler: the latest materialization of {key.to_user_string()} belongs to run "
            f"{rec.run_id} ({upstream.status.value}), not published yet; reading "
            f"{self.gv.target(self.repo)} at {self.head()[:12]}"
        )
        return None


def triggering_commit(tags: Mapping[str, str], repo: Repository) -> tuple[str, str] | None:
    """(commit, branch) that a diff sensor's run request named for ``repo`` in a run's
    ``tags`` (``context.run.tags``), or None. Assets that read graveler themselves use it to
    read what triggered the run."""
    commit, ref = tags.get(TAG_COMMIT), tags.get(TAG_REF)
    if commit and ref and tags.get(TAG_REPOSITORY) == repo.name:
        return commit, ref
    return None
