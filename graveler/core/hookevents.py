"""What hooks are told: the events (lakeFS's actions events), the record of one event, and
the record of one hook run. Plain types only, so every layer may import them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from graveler.core.model import Commit


class HookEvent(StrEnum):
    """The events hooks run on (lakeFS's names). ``pre-*`` hooks may refuse the operation;
    ``post-*`` hooks run after it and cannot undo it."""

    PRE_COMMIT = "pre-commit"
    POST_COMMIT = "post-commit"
    PRE_MERGE = "pre-merge"
    POST_MERGE = "post-merge"
    PRE_CREATE_BRANCH = "pre-create-branch"
    POST_CREATE_BRANCH = "post-create-branch"
    PRE_DELETE_BRANCH = "pre-delete-branch"
    POST_DELETE_BRANCH = "post-delete-branch"
    PRE_CREATE_TAG = "pre-create-tag"
    POST_CREATE_TAG = "post-create-tag"
    PRE_DELETE_TAG = "pre-delete-tag"
    POST_DELETE_TAG = "post-delete-tag"
    PRE_REVERT = "pre-revert"
    POST_REVERT = "post-revert"
    PRE_CHERRY_PICK = "pre-cherry-pick"
    POST_CHERRY_PICK = "post-cherry-pick"

    @property
    def is_pre(self) -> bool:
        return self.value.startswith("pre-")

    @property
    def is_tag_event(self) -> bool:
        return self.value.endswith("-tag")

    @property
    def after(self) -> HookEvent:
        """The ``post-`` event of a ``pre-`` event (itself for a ``post-`` event)."""
        return HookEvent("post-" + self.value[4:]) if self.is_pre else self


@dataclass(frozen=True, slots=True)
class EventRecord:
    """One event on one repository. ``commit`` is the commit the operation makes (for a
    ``pre-`` event: proposed, not stored yet, its ID already final) or acts on (the source
    of a new branch, the head of a deleted branch, the commit a tag points at)."""

    event: HookEvent
    commit: Commit
    branch: str | None = None
    tag: str | None = None
    source_ref: str | None = None
    merge_source: str | None = None

    def after(self) -> EventRecord:
        """The same record for the matching ``post-`` event."""
        return replace(self, event=self.event.after)


class HookStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class HookResult:
    """One hook of a run: where it came from (``action`` is the action file's name, or None
    for a hook registered in Python), what it is, and how it ended. ``error`` never holds a
    header, a query parameter or another secret, only what went wrong. ``output`` is what
    the hook answered: a webhook's response status and body, the text a Python hook returned
    (None when it returned something else), at most :data:`MAX_HOOK_OUTPUT` characters."""

    hook_id: str
    kind: str  # "python" or "webhook"
    status: HookStatus
    started: datetime
    ended: datetime
    action: str | None = None
    error: str | None = None
    output: str | None = None


#: The most of a hook's output kept (characters); the rest is cut with a note saying so.
MAX_HOOK_OUTPUT = 16 * 1024


def clip_output(text: str) -> str:
    """``text`` cut to :data:`MAX_HOOK_OUTPUT` characters, with a note when it was longer."""
    if len(text) <= MAX_HOOK_OUTPUT:
        return text
    return text[:MAX_HOOK_OUTPUT] + f"\n[cut: the output held {len(text):,} characters]\n"


@dataclass(frozen=True, slots=True)
class HookRun:
    """Every hook that ran for one event. ``status`` is failed when any hook failed."""

    run_id: str
    repository: str
    event: HookEvent
    status: HookStatus
    started: datetime
    ended: datetime
    commit_id: str
    branch: str | None = None
    tag: str | None = None
    source_ref: str | None = None
    hooks: Sequence[HookResult] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        return self.status is HookStatus.PASSED


class HookRunStore(Protocol):
    """Where hook runs are recorded (the refs database)."""

    def add_hook_run(self, run: HookRun) -> None:
        """Record a run (its ID is new)."""
        ...

    def get_hook_run(self, repo: str, run_id: str) -> HookRun:
        """Raises NotFound."""
        ...

    def list_hook_runs(
        self,
        repo: str,
        *,
        branch: str | None = None,
        commit_id: str | None = None,
        after: str | None = None,
        amount: int = 100,
    ) -> list[HookRun]:
        """Runs newest first (by run ID, which sorts by start time), optionally of one branch
        or commit, starting after run ``after``."""
        ...


def webhook_payload(
    record: EventRecord, repository: str, action: str, hook_id: str, now: datetime
) -> Mapping[str, object]:
    """The JSON body a webhook receives: lakeFS's event information fields."""
    doc: dict[str, object] = {
        "event_type": record.event.value,
        "event_time": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "action_name": action,
        "hook_id": hook_id,
        "repository_id": repository,
        "branch_id": record.branch,
        "source_ref": record.source_ref,
        "tag_id": record.tag,
        "commit_id": record.commit.id,
        "commit_message": record.commit.message,
        "committer": record.commit.committer,
        "commit_metadata": dict(record.commit.metadata),
        "merge_source": record.merge_source,
    }
    return {k: v for k, v in doc.items() if v not in (None, "", {})}
