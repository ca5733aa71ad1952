"""File objects of the filesystem.

* :class:`GravelerReadFile` (``"rb"``) pins the object's entry when it is opened and serves
  ``read``/``seek`` with ranged reads of that physical object (``ObjectStore.read_range``)
  through fsspec's read-ahead cache. A reader keeps seeing the bytes it opened, whatever
  happens to the branch afterwards.
* :class:`GravelerWriteFile` (``"wb"``/``"xb"``) writes blocks to a fresh physical address
  through the object store's push-style writer (``ObjectStore.open_writer``, which hashes
  them on the way) and stages the object on ``close()``. Memory stays bounded by a block
  (and, on S3, one multipart part). Inside an fsspec transaction (``autocommit=False``)
  the finished object is staged by :meth:`commit` and removed by :meth:`discard` instead.
  A ``with`` block that raises, or a file garbage-collected without ``close()``, discards
  the upload: nothing half-written is ever staged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fsspec.spec import AbstractBufferedFile, AbstractFileSystem

from graveler import ObjectEntry, Repository, new_physical_address
from graveler.objectstore import ObjectInfo, ObjectWriter


class GravelerReadFile(AbstractBufferedFile):  # type: ignore[misc]
    """Random-access reader over one committed or staged object."""

    def __init__(
        self,
        fs: AbstractFileSystem,
        path: str,
        repo: Repository,
        entry: ObjectEntry,
        details: dict[str, Any],
        **kwargs: Any,
    ) -> None:
        self._repo = repo
        self._address = entry.physical_address
        super().__init__(fs, path, mode="rb", size=entry.size, **kwargs)
        self.details = details

    def _fetch_range(self, start: int, end: int) -> bytes:
        if end <= start:
            return b""
        data: bytes = self._repo.store.read_range(self._address, start, end - start)
        return data


class GravelerWriteFile(AbstractBufferedFile):  # type: ignore[misc]
    """Streamed writer of one object on a branch; see the module docstring."""

    def __init__(
        self,
        fs: AbstractFileSystem,
        path: str,
        repo: Repository,
        branch: str,
        key: str,
        *,
        mode: str = "wb",
        content_type: str | None = None,
        metadata: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(fs, path, mode=mode, **kwargs)
        self.repo = repo
        self.branch = branch
        self.key = key
        self._content_type = content_type
        self._metadata = dict(metadata or {})
        self._address = new_physical_address()
        self._upload: ObjectWriter | None = None
        self._stored = False
        self.entry: ObjectEntry | None = None  # set once the bytes are stored, before staging
        self._staged = False

    # --- AbstractBufferedFile hooks ------------------------------------------------------------

    def _initiate_upload(self) -> None:
        """Nothing to do yet: a small object is stored in one call when it is closed."""

    def _upload_chunk(self, final: bool = False) -> bool:
        if self._upload is None:
            self._upload = self.repo.store.open_writer(self._address, fresh=True)
        self._upload.write(self.buffer.getbuffer())
        if final:
            self._finish(self._upload, self._upload.commit())
        return True

    def _finish(self, upload: ObjectWriter, info: ObjectInfo) -> None:
        """Describe the stored bytes and, with autocommit, stage them; on failure the stored
        bytes are removed again so no unreferenced object is left behind."""
        self._stored = True
        try:
            self.entry = self.repo.make_linked_entry(
                self.key,
                self._address,
                checksum=upload.sha256(),
                size=info.size,
                mtime=info.mtime,
                content_type=self._content_type,
                metadata=self._metadata,
            )
            if self.autocommit:
                self.commit()
        except BaseException:
            self.discard()
            raise

    # --- transaction protocol ------------------------------------------------------------------

    def commit(self) -> None:
        """Stage the stored object on its branch (once)."""
        if self.entry is None:
            raise ValueError(f"{self.path}: the file was not closed, nothing to commit")
        if not self._staged:
            self.repo.stage_entries(self.branch, [self.entry])
            self._staged = True

    def mark_staged(self) -> None:
        """Record that the entry was staged by someone else (a transaction, in a batch)."""
        self._staged = True

    def discard(self) -> None:
        """Abandon the upload and remove the stored bytes, unless already staged."""
        if self._staged:
            return
        if self._upload is not None and not self._stored:
            self._upload.abort()
        if self._stored:
            self.repo.store.delete(self._address)
            self._stored = False
        self.entry = None
        self.closed = True

    # --- closing -------------------------------------------------------------------------------

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.discard()

    def __del__(self) -> None:
        if not self.closed:
            self.discard()
