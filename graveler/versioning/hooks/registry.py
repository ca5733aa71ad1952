"""Hooks registered in Python: by the program that builds the client, or by installed packages
through the ``graveler.hooks`` entry-point group.

    hooks = HookRegistry()

    @hooks.on("pre-commit", branches=["main"], repositories=["lake"])
    def require_owner(ctx: HookContext) -> None:
        if "owner" not in ctx.commit.metadata:
            raise ValueError("commits to main need an 'owner' metadata key")

    gv = Graveler(hooks=hooks)

A package contributes hooks with an entry point whose object is a function taking the registry
(``[project.entry-points."graveler.hooks"] checks = "mypkg.hooks:register"``). Entry points are
code the operator installed: they are loaded once per client, on the first event.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from graveler.core.errors import InvalidArgument
from graveler.core.hookevents import HookEvent

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint


def _log() -> Any:
    """This module's logger (``logging`` is imported when something is logged)."""
    import logging

    return logging.getLogger(__name__)


#: The entry-point group packages register hooks under.
ENTRY_POINT_GROUP = "graveler.hooks"

#: A Python hook: called with a HookContext; raising fails it (and aborts a ``pre-`` event).
Hook = Callable[..., object]


@dataclass(frozen=True, slots=True)
class Registration:
    """One hook for some events, optionally only on some repositories and branches (shell
    patterns, as lakeFS matches ``branches`` in action files)."""

    events: frozenset[HookEvent]
    hook: Hook
    name: str
    branches: tuple[str, ...] = ()
    repositories: tuple[str, ...] = ()

    def matches(self, event: HookEvent, repository: str, branch: str | None) -> bool:
        if event not in self.events:
            return False
        if self.repositories and repository not in self.repositories:
            return False
        if not self.branches or branch is None or event.is_tag_event:
            return True
        return any(path_match(p, branch) for p in self.branches)


class HookRegistry:
    """Python hooks, in registration order."""

    def __init__(self) -> None:
        self._registrations: list[Registration] = []

    def __len__(self) -> int:
        return len(self._registrations)

    def __iter__(self) -> Iterator[Registration]:
        return iter(list(self._registrations))

    def add(
        self,
        events: str | HookEvent | Iterable[str | HookEvent],
        hook: Hook,
        *,
        name: str | None = None,
        branches: Sequence[str] = (),
        repositories: Sequence[str] = (),
    ) -> Registration:
        """Register ``hook`` for ``events`` (names such as ``"pre-commit"``). Raises
        InvalidArgument for an unknown event or a hook that is not callable."""
        if not callable(hook):
            raise InvalidArgument(f"a hook must be callable, got {hook!r:.60}")
        names = [events] if isinstance(events, str) else list(events)
        if not names:
            raise InvalidArgument("register a hook for at least one event")
        registration = Registration(
            frozenset(_event(e) for e in names),
            hook,
            name or getattr(hook, "__qualname__", None) or repr(hook),
            tuple(_texts(branches, "branches")),
            tuple(_texts(repositories, "repositories")),
        )
        self._registrations.append(registration)
        return registration

    def on(
        self,
        events: str | HookEvent | Iterable[str | HookEvent],
        *,
        name: str | None = None,
        branches: Sequence[str] = (),
        repositories: Sequence[str] = (),
    ) -> Callable[[Hook], Hook]:
        """Decorator form of :meth:`add`."""

        def register(hook: Hook) -> Hook:
            self.add(events, hook, name=name, branches=branches, repositories=repositories)
            return hook

        return register

    def extend(self, other: HookRegistry) -> None:
        self._registrations.extend(other)

    def matching(self, event: HookEvent, repository: str, branch: str | None) -> list[Registration]:
        return [r for r in self._registrations if r.matches(event, repository, branch)]


def load_entry_points(registry: HookRegistry, group: str = ENTRY_POINT_GROUP) -> list[str]:
    """Let every installed ``group`` entry point register its hooks. An entry point names a
    function taking the registry, or a HookRegistry. Returns one message per entry point that
    failed to load: the dispatcher then fails every ``pre-`` event (a rule that cannot be
    loaded must not be skipped silently)."""
    failures = []
    for ep in installed_entry_points(group):
        try:
            target = ep.load()
            if isinstance(target, HookRegistry):
                registry.extend(target)
            else:
                target(registry)
        except Exception as exc:
            _log().exception("graveler hooks entry point %r could not be loaded", ep.name)
            failures.append(f"entry point {ep.name!r} ({ep.value}) failed to load: {exc}")
    return failures


@cache
def installed_entry_points(group: str) -> tuple[EntryPoint, ...]:
    """The installed entry points of ``group``, scanned once per process (a scan of every
    installed distribution takes milliseconds; clients are opened often). Call
    ``installed_entry_points.cache_clear()`` after installing a package at run time."""
    if not _declared_anywhere(group):
        return ()
    from importlib.metadata import entry_points  # its import and scan take tens of ms

    return tuple(entry_points(group=group))


#: Finders of ``sys.meta_path`` known to list distributions the way :func:`_declared_anywhere`
#: reads them, or not at all: the standard path finder, and the ``importlib_metadata``
#: backport's finder (which many libraries import; it reads the same ``sys.path`` entries).
_PLAIN_FINDERS = ("PathFinder", "MetadataPathFinder")


def _declared_anywhere(group: str) -> bool:
    """Whether some distribution that ``importlib.metadata`` would find may declare an entry
    point of ``group``: the ``entry_points.txt`` of every ``*.dist-info`` / ``*.egg-info``
    directory on ``sys.path`` is searched for the group's name. Conservative: True for
    anything it cannot read that way (a zip file on the path, an egg directory, a finder of
    its own), so that only a certain "none" skips importing ``importlib.metadata``."""
    for finder in sys.meta_path:
        finds = getattr(finder, "find_distributions", None)
        if finds is not None and getattr(finder, "__name__", None) not in _PLAIN_FINDERS:
            return True
    needle = group.encode()
    return any(_declares(entry or ".", needle) for entry in sys.path)


def _declares(directory: str, needle: bytes) -> bool:
    """:func:`_declared_anywhere` for one ``sys.path`` entry."""
    if not os.path.isdir(directory):
        return os.path.exists(directory) and not directory.endswith(_STDLIB_ZIP)
    try:
        names = os.listdir(directory)
    except OSError:
        return False  # importlib.metadata cannot list it either
    for name in names:
        if name.endswith(".egg"):
            return True
        if not name.endswith((".dist-info", ".egg-info")):
            continue
        try:
            with open(os.path.join(directory, name, "entry_points.txt"), "rb") as fh:
                if needle in fh.read():
                    return True
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            return True
    return False


#: The standard library's own zip on ``sys.path`` (``pythonXY.zip``) holds no distributions.
_STDLIB_ZIP = f"python{sys.version_info[0]}{sys.version_info[1]}.zip"


def path_match(pattern: str, name: str) -> bool:
    """Go's ``path.Match`` (what lakeFS uses for ``branches``): ``*`` matches any run of
    characters other than ``/``, ``?`` one such character, ``[...]`` a class (``[^...]``
    negated), ``\\`` escapes. Raises InvalidArgument for a malformed pattern."""
    return _compiled(pattern).fullmatch(name) is not None


def _compiled(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\":
            if i + 1 >= len(pattern):
                raise InvalidArgument(f"bad branch pattern {pattern!r}: trailing backslash")
            i += 1
            out.append(re.escape(pattern[i]))
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                raise InvalidArgument(f"bad branch pattern {pattern!r}: unclosed '['")
            body = pattern[i + 1 : end]
            negate = body.startswith("^")
            body = body[1:] if negate else body
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    try:
        return re.compile("".join(out))
    except re.error as exc:
        raise InvalidArgument(f"bad branch pattern {pattern!r}: {exc}") from None


def _event(value: str | HookEvent) -> HookEvent:
    try:
        return HookEvent(value)
    except ValueError:
        known = ", ".join(e.value for e in HookEvent)
        raise InvalidArgument(f"unknown hook event {value!r}; known events: {known}") from None


def _texts(values: Sequence[str], what: str) -> list[str]:
    if isinstance(values, str) or not all(isinstance(v, str) and v for v in values):
        raise InvalidArgument(f"{what} must be a list of non-empty strings")
    return list(values)
