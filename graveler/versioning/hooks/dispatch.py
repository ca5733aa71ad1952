"""Running the hooks of one event and recording the run.

For an event the dispatcher runs, in order, the Python hooks registered for it (client and
entry points) and then the hooks of every matching action file read from the tree of the
event's commit (the tree the operation publishes). A ``pre-`` event stops at its first
failing hook and raises :class:`~graveler.core.errors.HookAborted`; the operation then changes
nothing. A ``post-`` event runs every hook; failures are recorded and logged, never raised.
Every run that ran at least one hook is recorded (:class:`~graveler.core.hookevents.HookRun`).

A ``pre-`` hook may run more than once for one operation when the operation retries after
losing a race for the branch (lakeFS behaves the same); each attempt is its own run.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from functools import partial
from typing import Any

from graveler.core.errors import GravelerError, HookAborted, InvalidAction
from graveler.core.hookevents import (
    EventRecord,
    HookResult,
    HookRun,
    HookRunStore,
    HookStatus,
    clip_output,
)
from graveler.core.lru import LruCache
from graveler.storage.entry import decode
from graveler.versioning.hooks.actions import (
    ACTIONS_PREFIX,
    MAX_ACTION_BYTES,
    Action,
    ActionHook,
    load_actions,
    matched_actions,
)
from graveler.versioning.hooks.registry import HookRegistry, load_entry_points
from graveler.versioning.hooks.runners import (
    HookFailed,
    HookPolicy,
    context_for,
    payload_for,
    post_webhook,
    resolve_callable,
)
from graveler.views import reads
from graveler.views.context import RepoContext


def _log() -> Any:
    """This module's logger (``logging`` is imported when something is logged)."""
    import logging

    return logging.getLogger(__name__)


_MAX_ERROR = 1000


def new_run_id(now: datetime) -> str:
    """A run ID that sorts by start time (then randomly)."""
    return f"{now:%Y%m%dT%H%M%S%f}-{uuid.uuid4().hex[:8]}"


#: Trees whose parsed action files a dispatcher keeps.
ACTION_TREES_KEPT = 64


class HookDispatcher:
    """The hooks of one client: its registry (plus entry points, loaded on first use), the
    action-file policy, and the store runs are recorded in."""

    def __init__(
        self,
        registry: HookRegistry,
        store: HookRunStore,
        policy: HookPolicy,
        *,
        entry_points: bool = True,
    ) -> None:
        self.registry = registry
        self.runs = store
        self.policy = policy
        self._load_entry_points = entry_points
        self._load_failures: list[str] = []
        # Parsed action files by (repository, metarange ID): a tree never changes, and the
        # pre- and post- hooks of one operation read the same one.
        self._parsed: LruCache[tuple[str, str], list[Action]] = LruCache(ACTION_TREES_KEPT)
        self._lock = threading.Lock()

    def run(self, repo: RepoContext, record: EventRecord) -> str | None:
        """See :class:`graveler.views.context.HookDispatch`."""
        self._ensure_loaded()
        started = datetime.now(UTC)
        run_id = new_run_id(started)
        tasks = list(self._tasks(repo, record, run_id))
        if not tasks:
            return None
        results: list[HookResult] = []
        for task in tasks:
            result = task()
            results.append(result)
            if result.status is HookStatus.FAILED and record.event.is_pre:
                break
        run = _run(repo.name, record, run_id, started, results)
        self._record(run)
        failed = next((r for r in results if r.status is HookStatus.FAILED), None)
        if failed is not None:
            if record.event.is_pre:
                raise HookAborted(record.event.value, run_id, f"{failed.hook_id}: {failed.error}")
            _log().warning(
                "%s hook %s failed (run %s): %s", record.event, failed.hook_id, run_id, failed.error
            )
        return run_id

    # --- what runs ------------------------------------------------------------------------

    def _tasks(
        self, repo: RepoContext, record: EventRecord, run_id: str
    ) -> Iterator[Callable[[], HookResult]]:
        if self._load_failures and record.event.is_pre:
            message = "; ".join(self._load_failures)
            yield partial(_fail_now, "entry-points", "python", message)
        for reg in self.registry.matching(record.event, repo.name, record.branch):
            ctx = context_for(repo, record, run_id, reg.name, None, {})
            yield partial(self._python, reg.name, None, partial(reg.hook, ctx))
        try:
            actions = self._actions(repo, record)
        except GravelerError as exc:
            yield partial(_fail_now, "actions", "actions", str(exc))
            return
        for action in actions:
            for hook in action.hooks:
                yield partial(self._action_hook, repo, record, run_id, action, hook)

    def _actions(self, repo: RepoContext, record: EventRecord) -> list[Action]:
        key = (repo.name, record.commit.metarange_id)
        parsed = self._parsed.get(key)
        if parsed is None:
            parsed = self._load_actions(repo, record.commit.metarange_id)
            self._parsed.put(key, parsed)
        return matched_actions(parsed, record.event, record.branch)

    def _load_actions(self, repo: RepoContext, metarange_id: str) -> list[Action]:
        """Every action file at the top of ``_graveler_actions/`` in the tree, parsed (raises
        InvalidAction for a file too large or not an action)."""
        files = []
        prefix = ACTIONS_PREFIX.encode()
        for rec in repo.committed.iterate(metarange_id, prefix=prefix):
            entry = decode(rec.key, rec.value)
            if not entry.path.endswith((".yaml", ".yml")) or "/" in entry.path[len(prefix) :]:
                continue
            if entry.size > MAX_ACTION_BYTES:
                raise InvalidAction(f"action file {entry.path} is larger than 1 MiB")
            files.append((entry.path, reads.read_entry(repo, entry)))
        return load_actions(files)

    # --- running ------------------------------------------------------------------------

    def _python(self, hook_id: str, action: str | None, call: Callable[[], object]) -> HookResult:
        """Run a Python hook; the text it returns (a ``str``) is its output."""
        started = datetime.now(UTC)
        try:
            answer = call()
        except Exception as exc:  # a hook's failure, whatever it raised
            return _failed(hook_id, "python", action, f"{type(exc).__name__}: {exc}", started)
        output = clip_output(answer) if isinstance(answer, str) else None
        ended = datetime.now(UTC)
        passed = HookStatus.PASSED
        return HookResult(hook_id, "python", passed, started, ended, action, None, output)

    def _action_hook(
        self, repo: RepoContext, record: EventRecord, run_id: str, action: Action, hook: ActionHook
    ) -> HookResult:
        started = datetime.now(UTC)
        output = None
        try:
            if hook.type == "webhook":
                payload = payload_for(repo.name, record, action.name, hook.id)
                output = post_webhook(hook.properties["url"], hook.properties, payload, self.policy)
            else:
                target = resolve_callable(hook.properties["callable"], self.policy)
                params = hook.properties.get("params") or {}
                ctx = context_for(repo, record, run_id, hook.id, action.name, params)
                return self._python(hook.id, action.name, lambda: target(ctx))
        except HookFailed as exc:
            return _failed(hook.id, hook.type, action.name, str(exc), started, exc.output)
        ended = datetime.now(UTC)
        return HookResult(
            hook.id, hook.type, HookStatus.PASSED, started, ended, action.name, None, output
        )

    # --- bookkeeping ----------------------------------------------------------------------

    def _ensure_loaded(self) -> None:
        if not self._load_entry_points:
            return
        with self._lock:
            if self._load_entry_points:
                self._load_failures = load_entry_points(self.registry)
                self._load_entry_points = False

    def _record(self, run: HookRun) -> None:
        try:
            self.runs.add_hook_run(run)
        except GravelerError:
            if run.event.is_pre:
                raise
            _log().exception("recording hook run %s failed", run.run_id)


def _fail_now(hook_id: str, kind: str, error: str) -> HookResult:
    return _failed(hook_id, kind, None, error, datetime.now(UTC))


def _failed(
    hook_id: str,
    kind: str,
    action: str | None,
    error: str,
    started: datetime,
    output: str | None = None,
) -> HookResult:
    ended = datetime.now(UTC)
    return HookResult(
        hook_id, kind, HookStatus.FAILED, started, ended, action, error[:_MAX_ERROR], output
    )


def _run(
    repo: str, record: EventRecord, run_id: str, started: datetime, results: list[HookResult]
) -> HookRun:
    failed = any(r.status is HookStatus.FAILED for r in results)
    return HookRun(
        run_id=run_id,
        repository=repo,
        event=record.event,
        status=HookStatus.FAILED if failed else HookStatus.PASSED,
        started=started,
        ended=datetime.now(UTC),
        commit_id=record.commit.id,
        branch=record.branch,
        tag=record.tag,
        source_ref=record.source_ref,
        hooks=tuple(results),
    )
