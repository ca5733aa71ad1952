"""Sensors waiting for graveler state; deferrable through :mod:`graveler_airflow.triggers`.

The sensors return (push to XCom) the commit ID they saw.

* :class:`GravelerCommitSensor`: ``branch`` gets a new commit, i.e. its head is no longer
  ``prev_commit_id``. Without ``prev_commit_id`` the head seen by the first poke is the
  baseline (so that needs ``mode="poke"`` or ``deferrable=True``: a rescheduled sensor would
  forget it).
* :class:`GravelerDiffSensor`: the committed contents of ``branch`` differ from ``ref`` under
  ``prefix``.
* :class:`GravelerObjectSensor`: an object is committed at ``path`` on ``ref`` (anything
  under ``path`` when it ends with ``/``); staged writes do not count.

With ``deferrable=True`` (default: ``[operators] default_deferrable``) the sensor checks once,
then hands the wait to the triggerer and frees its worker slot. Pokes and triggers use the
process's shared client for the connection (:func:`graveler.shared_client`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseSensorOperator, PokeReturnValue, conf

from graveler import shared_client
from graveler.errors import GravelerError, InvalidArgument
from graveler_airflow.hooks.graveler import GravelerHook
from graveler_airflow.triggers.graveler import (
    DEFAULT_POLL_INTERVAL,
    GravelerCommitTrigger,
    GravelerDiffTrigger,
    GravelerObjectTrigger,
    branch_head,
    find_object,
    first_difference,
)

if TYPE_CHECKING:
    from airflow.sdk import Context
    from airflow.triggers.base import BaseTrigger

    from graveler import Graveler


class GravelerSensorError(GravelerError):
    """The trigger behind a deferred graveler sensor reported a failure."""


class _GravelerSensor(BaseSensorOperator):
    template_fields: Sequence[str] = ("repository", "branch")
    ui_color = "#b6d7a8"

    def __init__(
        self,
        *,
        repository: str,
        branch: str,
        graveler_conn_id: str = GravelerHook.default_conn_name,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        trigger_poll_interval: float = DEFAULT_POLL_INTERVAL,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.repository = repository
        self.branch = branch
        self.graveler_conn_id = graveler_conn_id
        self.deferrable = deferrable
        self.trigger_poll_interval = trigger_poll_interval

    def execute(self, context: Context) -> Any:
        if not self.deferrable:
            return super().execute(context)
        done = self.poke(context)
        if done:
            return done.xcom_value
        self.defer(
            trigger=self.make_trigger(),
            method_name="execute_complete",
            timeout=timedelta(seconds=self.timeout),
        )

    def execute_complete(self, context: Context, event: dict[str, Any]) -> str:
        """Resume after the trigger fired: the branch head it saw, or the trigger's error."""
        if event.get("status") != "success":
            raise GravelerSensorError(str(event.get("message", event)))
        self.log.info("Trigger fired: %s", event)
        return str(event["commit_id"])

    def poke(self, context: Context) -> PokeReturnValue:
        client = shared_client(GravelerHook(self.graveler_conn_id).get_settings())
        commit_id = self.check(client)
        return PokeReturnValue(is_done=commit_id is not None, xcom_value=commit_id)

    def check(self, client: Graveler) -> str | None:
        """The commit ID to return when the condition holds, else None."""
        raise NotImplementedError

    def make_trigger(self) -> BaseTrigger:
        raise NotImplementedError

    def _trigger_kwargs(self) -> dict[str, Any]:
        return {
            "repository": self.repository,
            "branch": self.branch,
            "graveler_conn_id": self.graveler_conn_id,
            "poll_interval": self.trigger_poll_interval,
        }


class GravelerCommitSensor(_GravelerSensor):
    """Wait until ``branch`` gets a new commit; returns its commit ID."""

    template_fields: Sequence[str] = (*_GravelerSensor.template_fields, "prev_commit_id")

    def __init__(self, *, prev_commit_id: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prev_commit_id = prev_commit_id
        self._baseline: str | None = None
        self._has_baseline = False

    def check(self, client: Graveler) -> str | None:
        head = branch_head(client, self.repository, self.branch)
        if not self._has_baseline:
            self._has_baseline = True
            self._baseline = self.prev_commit_id or None  # a template may render to ""
            if self._baseline is None:
                self._first_look(head)
                return None
        return head if head is not None and head != self._baseline else None

    def _first_look(self, head: str | None) -> None:
        if self.mode == "reschedule":
            raise InvalidArgument(
                "GravelerCommitSensor in reschedule mode needs prev_commit_id: a "
                "rescheduled sensor cannot remember the head it saw first"
            )
        self._baseline = head
        self.log.info("Waiting for a commit on %s after %s", self.branch, head)

    def make_trigger(self) -> BaseTrigger:
        return GravelerCommitTrigger(prev_commit_id=self._baseline, **self._trigger_kwargs())


class GravelerDiffSensor(_GravelerSensor):
    """Wait until ``branch`` differs from ``ref`` under ``prefix``; returns the branch head."""

    template_fields: Sequence[str] = (*_GravelerSensor.template_fields, "ref", "prefix")

    def __init__(self, *, ref: str = "main", prefix: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ref = ref
        self.prefix = prefix

    def check(self, client: Graveler) -> str | None:
        found = first_difference(client, self.repository, self.branch, self.ref, self.prefix)
        if found is None:
            return None
        self.log.info("%s differs from %s at %s", self.branch, self.ref, found[2])
        return found[0]

    def make_trigger(self) -> BaseTrigger:
        return GravelerDiffTrigger(ref=self.ref, prefix=self.prefix, **self._trigger_kwargs())


class GravelerObjectSensor(_GravelerSensor):
    """Wait until an object is committed at ``path`` on ``ref`` (any object under ``path``
    when it ends with ``/``); returns the ID of the commit holding it."""

    template_fields: Sequence[str] = ("repository", "ref", "path")

    def __init__(self, *, repository: str, ref: str = "main", path: str, **kwargs: Any) -> None:
        super().__init__(repository=repository, branch=ref, **kwargs)
        self.ref = ref
        self.path = path

    def check(self, client: Graveler) -> str | None:
        found = find_object(client, self.repository, self.ref, self.path)
        if found is None:
            return None
        self.log.info("Found %s at %s (%s)", found[1], self.ref, found[0])
        return found[0]

    def make_trigger(self) -> BaseTrigger:
        kwargs = {**self._trigger_kwargs(), "branch": self.ref}
        return GravelerObjectTrigger(path=self.path, **kwargs)
