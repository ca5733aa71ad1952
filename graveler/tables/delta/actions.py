"""One Delta commit file, parsed: its actions in order, each kept as the writer wrote it.

A commit file holds one JSON object a line, each with one key naming the action (``add``,
``remove``, ``metaData``, ``protocol``, ``txn``, ``commitInfo``, ``domainMetadata``, ``cdc``,
``checkpointMetadata``, ``sidecar``). :class:`DeltaCommit` keeps every line's text, so a
commit replayed elsewhere is written back byte for byte except the actions a replay
rewrites (:meth:`DeltaCommit.replaced`). A file that is not such JSON raises
:class:`graveler.core.errors.CorruptFile`: a table whose log cannot be read is never merged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from graveler.core.errors import CorruptFile

Action = dict[str, Any]


@dataclass(frozen=True)
class DeltaCommit:
    """The actions of commit ``version`` (``lines`` and ``actions`` in step)."""

    version: int
    lines: tuple[str, ...]
    actions: tuple[Action, ...]

    @classmethod
    def parse(cls, version: int, data: bytes, where: str = "") -> DeltaCommit:
        """The commit in ``data``; CorruptFile names ``where`` when it is not Delta JSON."""
        lines: list[str] = []
        actions: list[Action] = []
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorruptFile(f"Delta commit {where or version} is not UTF-8") from e
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                action = json.loads(line)
            except ValueError as e:
                raise CorruptFile(f"Delta commit {where or version}: a line is not JSON") from e
            if not isinstance(action, dict) or len(action) != 1:
                raise CorruptFile(f"Delta commit {where or version}: a line is not an action")
            lines.append(line)
            actions.append(action)
        return cls(version, tuple(lines), tuple(actions))

    def of(self, kind: str) -> Iterator[Action]:
        """The bodies of the actions of ``kind`` (``"add"``...), in order."""
        for action in self.actions:
            body = action.get(kind)
            if isinstance(body, dict):
                yield body

    def first(self, kind: str) -> Action | None:
        return next(self.of(kind), None)

    @property
    def commit_info(self) -> Action:
        """The ``commitInfo`` action's body, or an empty dict."""
        return self.first("commitInfo") or {}

    @property
    def operation(self) -> str:
        return str(self.commit_info.get("operation") or "")

    @property
    def parameters(self) -> Mapping[str, Any]:
        found = self.commit_info.get("operationParameters")
        return found if isinstance(found, dict) else {}

    def paths(self, kind: str) -> dict[str, Action]:
        """Path -> body of this commit's ``add`` or ``remove`` actions."""
        return {str(body.get("path")): body for body in self.of(kind)}

    def replaced(self, version: int, bodies: Mapping[int, Action | None]) -> DeltaCommit:
        """This commit as ``version``, with the action at each index of ``bodies`` replaced
        by the given one (the same kind) or dropped (None)."""
        lines, actions = [], []
        for i, (line, action) in enumerate(zip(self.lines, self.actions, strict=True)):
            if i in bodies:
                body = bodies[i]
                if body is None:
                    continue
                kind = next(iter(action))
                action = {kind: body}
                line = json.dumps(action, separators=(",", ":"), ensure_ascii=False)
            lines.append(line)
            actions.append(action)
        return DeltaCommit(version, tuple(lines), tuple(actions))

    def with_first(self, action: Action) -> DeltaCommit:
        """This commit with ``action`` put in front of the others."""
        line = json.dumps(action, separators=(",", ":"), ensure_ascii=False)
        return DeltaCommit(self.version, (line, *self.lines), (action, *self.actions))

    def index_of(self, kind: str) -> int | None:
        """The index of the first action of ``kind``."""
        for i, action in enumerate(self.actions):
            if kind in action:
                return i
        return None

    def encode(self) -> bytes:
        """The commit file's bytes (one action a line, newline-terminated)."""
        return "".join(line + "\n" for line in self.lines).encode("utf-8")


def stats_records(body: Mapping[str, Any]) -> int | None:
    """The logical rows of an ``add``/``remove`` from its stats (``numRecords``, less the
    rows its deletion vector marks deleted), or None when the writer recorded none."""
    raw = body.get("stats")
    if not isinstance(raw, str):
        return None
    try:
        stats = json.loads(raw)
    except ValueError:
        return None
    records = stats.get("numRecords") if isinstance(stats, dict) else None
    if not isinstance(records, int):
        return None
    dv = body.get("deletionVector")
    deleted = dv.get("cardinality", 0) if isinstance(dv, dict) else 0
    return records - int(deleted or 0)
