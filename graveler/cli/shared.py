"""Helpers shared by the CLI's command modules: URI arguments, output and progress."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from graveler.cli.output import Output
from graveler.cli.plain import plain_stream
from graveler.core import uri as uris
from graveler.core.errors import InvalidArgument, InvalidURI

if TYPE_CHECKING:
    from graveler.client import Graveler
    from graveler.repository import Repository

Handler = Callable[["Graveler", argparse.Namespace, Output], int]


def repo_of(gv: Graveler, text: str) -> tuple[Repository, uris.GravelerURI]:
    parsed = uris.parse(text)
    return gv.repository(parsed.repository), parsed


def ref_uri(gv: Graveler, text: str) -> tuple[Repository, str, str]:
    """(repository, ref, path-or-empty) of a graveler://REPO/REF[/PATH] argument."""
    repo, parsed = repo_of(gv, text)
    if parsed.ref is None:
        raise InvalidURI(f"{text!r} needs a ref: graveler://REPO/REF")
    return repo, parsed.ref, parsed.path or ""


def same_repo(repo: Repository, text: str) -> str:
    parsed = uris.require(text, ref=True)
    if parsed.repository != repo.name:
        raise InvalidArgument(f"{text!r} is in another repository than {repo.name!r}")
    assert parsed.ref is not None
    return parsed.ref


def key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise InvalidArgument(f"--meta expects KEY=VALUE, got {text!r}")
    return key, value


def done(out: Output, doc: object, text: str) -> None:
    out.json(doc) if out.as_json else out.message(text)


@contextmanager
def status(out: Output, text: str) -> Iterator[None]:
    """A spinner on stderr for long single operations (only on a terminal, never with --json)."""
    if not interactive(out):
        yield
        return
    with out.err.status(text):
        yield


@contextmanager
def progress(out: Output, text: str, total: int) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr for multi-item work; yields an ``advance()`` callable."""
    if not interactive(out):
        yield lambda: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    columns = (TextColumn(text), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=out.err, transient=True) as bar:
        task = bar.add_task(text, total=total)
        yield lambda: bar.advance(task)


def interactive(out: Output) -> bool:
    """Whether progress may be shown on stderr: a terminal (as rich sees it), no --json, not
    in CI. A plain stderr is known not to be a terminal without asking rich."""
    if out.as_json or os.environ.get("CI") == "true" or plain_stream(sys.stderr):
        return False
    return out.err.is_terminal
