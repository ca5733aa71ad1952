"""Action files: YAML documents under ``_graveler_actions/`` in a repository, in lakeFS's
format, naming the hooks to run on which events and branches.

    name: Check schemas
    on:
      pre-merge:
        branches: [main]
    hooks:
      - id: schema
        type: python
        properties:
          callable: mycompany.checks:schema     # only if the operator allows the module
          params: {table: orders}
      - id: notify
        type: webhook
        properties:
          url: https://hooks.internal/graveler  # only if the operator allows the URL
          timeout: 30s

Files are parsed with ``yaml.safe_load`` (plain data, never objects) and validated as lakeFS
validates them. lakeFS's ``lua`` and ``airflow`` hook types are refused as unsupported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from graveler.core.errors import InvalidAction, InvalidArgument
from graveler.core.hookevents import HookEvent
from graveler.versioning.hooks.registry import path_match

#: Where action files live in a repository's tree.
ACTIONS_PREFIX = "_graveler_actions/"
#: Hook types this build runs.
HOOK_TYPES = ("python", "webhook")
#: Largest action file read (a guard against a huge object under the prefix).
MAX_ACTION_BYTES = 1 << 20
_NAME = re.compile(r"^\w[\w\-. ]+$")
_HOOK_ID = re.compile(r"^[_a-zA-Z][\-_a-zA-Z0-9]{1,255}$")
_CALLABLE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


@dataclass(frozen=True, slots=True)
class ActionHook:
    id: str
    type: str
    properties: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""


@dataclass(frozen=True, slots=True)
class Action:
    """One action file: its hooks run, in order, on the events of ``on`` (each with its branch
    patterns; no patterns means every branch)."""

    name: str
    on: Mapping[HookEvent, tuple[str, ...]]
    hooks: tuple[ActionHook, ...]
    description: str = ""
    path: str = ""

    def matches(self, event: HookEvent, branch: str | None) -> bool:
        """lakeFS's Action.Match. Raises InvalidAction for a malformed branch pattern."""
        if event not in self.on:
            return False
        patterns = self.on[event]
        if not patterns or branch is None:
            return True
        try:
            return any(path_match(p, branch) for p in patterns)
        except InvalidArgument as exc:
            raise InvalidAction(f"action {self.name!r}: {exc}") from None


def parse_action(data: bytes | str, path: str = "") -> Action:
    """Parse and validate one action file; raises InvalidAction saying what is wrong."""
    import yaml  # here: only a repository with action files needs a YAML parser

    where = f"action file {path}" if path else "action file"
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError as exc:
        raise InvalidAction(f"{where}: not valid YAML: {exc}") from None
    if not isinstance(doc, dict):
        raise InvalidAction(f"{where}: expected a mapping with name, on and hooks")
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidAction(f"{where}: 'name' is required")
    if not _NAME.match(name):
        raise InvalidAction(f"{where}: 'name' {name!r} is invalid")
    return Action(
        name=name,
        on=_events(doc.get("on", doc.get(True)), where),  # YAML 1.1 reads `on:` as True
        hooks=_hooks(doc.get("hooks"), where),
        description=str(doc.get("description") or ""),
        path=path,
    )


def load_actions(files: Iterable[tuple[str, bytes]]) -> list[Action]:
    """Parse every ``(path, bytes)``; two actions may not share a name (lakeFS)."""
    actions: list[Action] = []
    names: set[str] = set()
    for path, data in files:
        action = parse_action(data, path)
        if action.name in names:
            raise InvalidAction(f"action name {action.name!r} is used twice ({path})")
        names.add(action.name)
        actions.append(action)
    return actions


def matched_actions(
    actions: Iterable[Action], event: HookEvent, branch: str | None
) -> list[Action]:
    return [a for a in actions if a.matches(event, branch)]


def _events(raw: object, where: str) -> dict[HookEvent, tuple[str, ...]]:
    if not isinstance(raw, dict) or not raw:
        raise InvalidAction(f"{where}: 'on' is required")
    out: dict[HookEvent, tuple[str, ...]] = {}
    for key, spec in raw.items():
        try:
            event = HookEvent(key)
        except ValueError:
            raise InvalidAction(f"{where}: event {key!r} is not supported") from None
        branches = (spec or {}).get("branches") if isinstance(spec, dict | type(None)) else None
        if spec is not None and not isinstance(spec, dict):
            raise InvalidAction(f"{where}: event {key!r} must map to a mapping (or nothing)")
        if branches and event.is_tag_event:
            raise InvalidAction(f"{where}: 'branches' is not supported in tag event types")
        if branches is not None and not (
            isinstance(branches, list) and all(isinstance(b, str) and b for b in branches)
        ):
            raise InvalidAction(f"{where}: 'branches' of {key!r} must be a list of patterns")
        out[event] = tuple(branches or ())
    return out


def _hooks(raw: object, where: str) -> tuple[ActionHook, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InvalidAction(f"{where}: 'hooks' must be a list")
    hooks: list[ActionHook] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise InvalidAction(f"{where}: hook[{i}] must be a mapping")
        hook_id = item.get("id")
        if not isinstance(hook_id, str) or not _HOOK_ID.match(hook_id):
            raise InvalidAction(f"{where}: hook[{i}] missing ID (or an invalid one)")
        if hook_id in seen:
            raise InvalidAction(f"{where}: hook[{i}] duplicate ID {hook_id!r}")
        seen.add(hook_id)
        kind = item.get("type")
        if kind not in HOOK_TYPES:
            raise InvalidAction(
                f"{where}: hook[{i}] {hook_id!r} type {kind!r} unknown (supported: "
                f"{', '.join(HOOK_TYPES)})"
            )
        props = item.get("properties") or {}
        if not isinstance(props, dict):
            raise InvalidAction(f"{where}: hook[{i}] 'properties' must be a mapping")
        _check_properties(kind, props, f"{where}: hook[{i}] type {kind!r}")
        hooks.append(ActionHook(hook_id, kind, props, str(item.get("description") or "")))
    return tuple(hooks)


def _check_properties(kind: str, props: Mapping[str, Any], where: str) -> None:
    key = "url" if kind == "webhook" else "callable"
    value = props.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidAction(f"{where}: {key!r} must be supplied in properties")
    if kind == "python" and not _CALLABLE.match(value):
        raise InvalidAction(f"{where}: 'callable' must look like 'package.module:function'")
    if kind == "webhook" and not value.startswith(("http://", "https://")):
        raise InvalidAction(f"{where}: 'url' must be an http:// or https:// URL")
