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
from typing import TYPE_CHECKING, BinaryIO

from graveler.entry import ObjectEntry
from graveler.errors import GravelerError, NoChanges
from graveler.listing import ListingPage
from graveler.model import Commit

if TYPE_CHECKING:
    from graveler.repository import Repository


class Transaction:
    """Object operations bound to the transaction's branch."""

    def __init__(self, repo: Repository, branch: str, base: str) -> None:
        self.repo = repo
        self.branch = branch
        self.base = base
        self.commit: Commit | None = None  # the merge result, set after a successful exit

    def put(self, path: str, data: bytes | BinaryIO, **kwargs: object) -> ObjectEntry:
        return self.repo.put(self.branch, path, data, **kwargs)  # type: ignore[arg-type]

    def get(self, path: str) -> bytes:
        return self.repo.get(self.branch, path)

    def open(self, path: str) -> BinaryIO:
        return self.repo.open(self.branch, path)

    def stat(self, path: str) -> ObjectEntry:
        return self.repo.stat(self.branch, path)

    def delete(self, path: str) -> None:
        self.repo.delete(self.branch, path)

    def list(self, prefix: str = "", **kwargs: object) -> ListingPage:
        return self.repo.list(self.branch, prefix, **kwargs)  # type: ignore[arg-type]

    def iter_objects(self, prefix: str = "") -> Iterator[ObjectEntry]:
        return self.repo.iter_objects(self.branch, prefix)


@contextmanager
def transaction(
    repo: Repository,
    base: str,
    *,
    message: str | None = None,
    metadata: Mapping[str, str] | None = None,
    strategy: str | None = None,
    committer: str | None = None,
    branch: str | None = None,
) -> Iterator[Transaction]:
    name = branch or f"tx-{uuid.uuid4().hex[:12]}"
    repo.create_branch(name, base)
    tx = Transaction(repo, name, base)
    try:
        yield tx
    except BaseException:
        repo.delete_branch(name)
        raise
    text = message or f"Transaction {name}"
    try:
        repo.commit(name, text, metadata=metadata, committer=committer)
    except NoChanges:
        repo.delete_branch(name)
        return
    try:
        tx.commit = repo.merge(
            name, base, strategy=strategy, message=text, metadata=metadata, committer=committer
        )
    except GravelerError as exc:
        exc.add_note(f"the transaction's writes are kept on branch {name!r} for inspection")
        raise
    repo.delete_branch(name)
