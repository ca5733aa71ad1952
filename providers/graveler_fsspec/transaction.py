"""Transactions of the filesystem.

``with fs.transaction("lake", base="main") as tx:`` creates an ephemeral branch
``tx.branch`` from ``base`` (through :meth:`graveler.Repository.transaction`). Write under
``tx.url(KEY)`` (``graveler://lake/<tx.branch>/KEY``). On a clean exit the files written in
the block are staged, the branch is committed, merged into ``base`` (``tx.commit`` is then the
merge commit, or None if nothing changed) and deleted. If the block raises, every deferred
upload is discarded and the branch is deleted: ``base`` is untouched. A failed merge keeps the
branch for inspection and says so in the error.

``with fs.transaction:`` (no arguments) is fsspec's plain transaction: files opened for
writing inside it are uploaded as they are written but staged only when the block succeeds,
all files of one branch in one staging transaction (so they appear together), and discarded
if it raises.

The state lives on the filesystem instance (fsspec's ``_intrans``), which fsspec shares
between threads: run one transaction per instance at a time.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

from fsspec.transaction import Transaction

from graveler import Commit, Repository
from graveler import Transaction as RepoTransaction
from graveler.errors import GravelerError, InvalidArgument
from graveler_fsspec.errors import ReadOnlyRef, translated
from graveler_fsspec.files import GravelerWriteFile

logger = logging.getLogger(__name__)


class Lake(Protocol):
    """What a transaction needs of its filesystem (a :class:`GravelerFileSystem`)."""

    _intrans: bool
    _transaction: Any

    def repository(self, name: str) -> Repository: ...


class GravelerTransaction(Transaction):  # type: ignore[misc]
    """fsspec transaction, optionally bound to an ephemeral branch; see the module docstring."""

    fs: Lake | None

    def __init__(self, fs: Lake, **kwargs: Any) -> None:
        super().__init__(fs)
        self.repository: str | None = None
        self.base: str | None = None
        self.branch: str | None = None  # the ephemeral branch, once started
        self.commit: Commit | None = None  # the merge commit, after a successful exit
        self._options: dict[str, Any] = {}
        self._scope: AbstractContextManager[RepoTransaction] | None = None
        self._core: RepoTransaction | None = None
        self._error: BaseException | None = None
        self._started = False

    def __call__(
        self,
        repository: str,
        base: str | None = None,
        *,
        message: str | None = None,
        metadata: Mapping[str, str] | None = None,
        strategy: str | None = None,
        committer: str | None = None,
        branch: str | None = None,
    ) -> GravelerTransaction:
        """Bind the transaction to an ephemeral branch of ``repository`` created from
        ``base`` (default: the repository's default branch). ``message``/``metadata`` are
        used for the commit and the merge; ``strategy`` is the merge strategy."""
        if self._started:
            raise InvalidArgument("a transaction is already open on this filesystem")
        self._filesystem().repository(repository)
        self.repository, self.base = repository, base
        self._options = {
            "message": message,
            "metadata": metadata,
            "strategy": strategy,
            "committer": committer,
            "branch": branch,
        }
        return self

    def url(self, key: str) -> str:
        """``graveler://REPOSITORY/<ephemeral branch>/KEY``."""
        if self.branch is None:
            raise InvalidArgument("url() needs a started transaction bound to a repository")
        return f"graveler://{self.repository}/{self.branch}/{key.lstrip('/')}"

    def check_write(self, repository: str, ref: str) -> None:
        """Refuse a write to the base branch of this (started) transaction: staged there, it
        would only make the final merge fail; it belongs on :attr:`branch`."""
        if self.branch is not None and (repository, ref) == (self.repository, self.base):
            raise InvalidArgument(
                f"inside fs.transaction({repository!r}, base={ref!r}) write to the transaction "
                f"branch, tx.url(KEY) = graveler://{repository}/{self.branch}/KEY"
            )

    def start(self) -> None:
        if self._started:
            raise InvalidArgument("a transaction is already open on this filesystem")
        super().start()
        self._started = True
        if self.repository is None:
            return
        try:
            self._open_branch(self._filesystem().repository(self.repository))
        except BaseException:
            self._reset_fs()
            raise

    def _open_branch(self, repo: Repository) -> None:
        base = self.base or repo.info.default_branch
        where = f"{repo.name}/{base}"
        with translated(where):
            if repo.resolve(base).branch is None:
                raise ReadOnlyRef(f"a transaction merges into a branch; {base!r} is not one", where)
            self._scope = repo.transaction(base, **self._options)
            self._core = self._scope.__enter__()
        self.branch, self.base = self._core.branch, self._core.base

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        self._error = exc
        super().__exit__(exc_type, exc, tb)

    def complete(self, commit: bool = True) -> None:
        """Stage (``commit``) or discard the deferred files, then finish the branch."""
        try:
            if commit:
                self._publish()
            else:
                self._discard_files()
                self._end_scope(self._error or GravelerError("transaction discarded"))
        finally:
            self._reset_fs()

    def _publish(self) -> None:
        try:
            self._stage_files()
        except BaseException as exc:
            self._discard_files()
            self._end_scope(exc)
            raise
        self._end_scope(None)

    def _stage_files(self) -> None:
        """Close pending files, then stage them: one call per branch, the last write of a key
        winning (earlier uploads of that key are discarded)."""
        groups: dict[tuple[int, str], tuple[Repository, dict[str, GravelerWriteFile]]] = {}
        while self.files:
            f: GravelerWriteFile = self.files[0]
            if not f.closed:
                f.close()
            self.files.popleft()
            if f.entry is None:
                continue
            _, by_key = groups.setdefault((id(f.repo), f.branch), (f.repo, {}))
            previous = by_key.pop(f.key, None)
            if previous is not None:
                previous.discard()
            by_key[f.key] = f
        for (_, branch), (repo, by_key) in groups.items():
            files = list(by_key.values())
            repo.stage_entries(branch, [f.entry for f in files if f.entry is not None])
            for f in files:
                f.mark_staged()

    def _discard_files(self) -> None:
        while self.files:
            try:
                self.files.popleft().discard()
            except Exception:  # keep discarding the others
                logger.warning("discarding a deferred upload failed", exc_info=True)

    def _end_scope(self, error: BaseException | None) -> None:
        scope, self._scope = self._scope, None
        if scope is None:
            return
        if error is None:
            scope.__exit__(None, None, None)
            self.commit = self._core.commit if self._core is not None else None
        else:
            scope.__exit__(type(error), error, error.__traceback__)

    def _filesystem(self) -> Lake:
        if self.fs is None:
            raise InvalidArgument("this transaction is finished; open a new one")
        return self.fs

    def _reset_fs(self) -> None:
        if self.fs is not None:
            self.fs._intrans = False
            self.fs._transaction = None
        self.fs = None
