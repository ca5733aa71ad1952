"""``with repo.transaction("main") as tx:`` -- all-or-nothing changes through an ephemeral branch.

The body writes on a fresh branch created from ``base``. When the body succeeds, the branch is
committed (if it has changes), merged into ``base`` and deleted. When the body raises, the
branch is deleted and ``base`` is untouched. If the merge itself fails (a conflict), the branch
is kept -- its committed writes are the user's data -- and the error names it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import BinaryIO

from graveler.core.errors import GravelerError, MergeConflict
from graveler.core.model import Commit
from graveler.storage.entry import ObjectEntry
from graveler.versioning import branches, runs, writes
from graveler.views import reads
from graveler.views.context import RepoContext
from graveler.views.listing import ListingPage


class Transaction:
    """Object operations bound to the transaction's branch."""

    def __init__(self, repo: RepoContext, branch: str, base: str) -> None:
        self.repo = repo
        self.branch = branch
        self.base = base
        self.commit: Commit | None = None  # the merge result, set after a successful exit

    def put(self, path: str, data: bytes | BinaryIO, **kwargs: object) -> ObjectEntry:
        return writes.put(self.repo, self.branch, path, data, **kwargs)  # type: ignore[arg-type]

    def get(self, path: str) -> bytes:
        return reads.get(self.repo, self.branch, path)

    def open(self, path: str) -> BinaryIO:
        return reads.open_object(self.repo, self.branch, path)

    def stat(self, path: str) -> ObjectEntry:
        return reads.stat(self.repo, self.branch, path)

    def delete(self, path: str) -> None:
        writes.delete(self.repo, self.branch, path)

    def list(self, prefix: str = "", **kwargs: object) -> ListingPage:
        return reads.list_objects(self.repo, self.branch, prefix, **kwargs)  # type: ignore[arg-type]

    def iter_objects(self, prefix: str = "") -> Iterator[ObjectEntry]:
        return reads.iter_objects(self.repo, self.branch, prefix)


@contextmanager
def transaction(
    repo: RepoContext,
    base: str,
    *,
    message: str | None = None,
    metadata: Mapping[str, str] | None = None,
    strategy: str | None = None,
    committer: str | None = None,
    branch: str | None = None,
) -> Iterator[Transaction]:
    """The body runs against a fresh branch from ``base``; see the module docstring. Built
    on :mod:`graveler.versioning.runs`: the transaction is a run whose identity is its branch
    name."""
    name = branch or f"tx-{uuid.uuid4().hex[:12]}"
    run = runs.Run(identity=f"transaction/{name}", branch=name, into=base)
    started = datetime.now(UTC)
    branches.create_branch(repo, name, base)
    tx = Transaction(repo, name, base)
    try:
        yield tx
    except BaseException:
        runs.discard(repo, run)
        raise
    text = message or f"Transaction {name}"
    if runs.commit_pending(repo, run, text, metadata=metadata, committer=committer) is None:
        runs.discard(repo, run)
        return
    try:
        published = runs.publish(
            repo,
            run,
            text,
            metadata=metadata,
            committer=committer,
            strategy=strategy,
            since=started,
            fast_forward=True,
        )
    except GravelerError as exc:
        if not isinstance(exc, MergeConflict):  # runs.publish notes a conflict itself
            exc.add_note(f"the transaction's writes are kept on branch {name!r} for inspection")
        raise
    tx.commit = published.merge.commit if published.merge is not None else None
