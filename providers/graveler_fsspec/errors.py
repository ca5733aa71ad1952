"""Errors of the fsspec filesystem: graveler errors that are also the builtin exceptions fsspec
and the dataframe libraries catch.

Every class here belongs to the one :class:`graveler.errors.GravelerError` tree *and* to the
builtin ``OSError`` family, so ``except FileNotFoundError`` (pandas, pyarrow, fsspec's own
``exists``) and ``except graveler.errors.NotFound`` both work. :func:`translated` converts
engine errors at the filesystem boundary and keeps the original as ``__cause__``.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager

from graveler.errors import (
    AlreadyExists,
    InvalidArgument,
    NotFound,
    ObjectNotFound,
    ProtectedBranch,
)


class _OSErrorFields:
    """Fills ``errno``/``strerror``/``filename`` so ``str()`` reads like a builtin OSError."""

    code = 0

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)  # type: ignore[call-arg]  # the exception base
        self.errno = self.code
        self.strerror = message
        self.filename = path


class PathNotFound(_OSErrorFields, ObjectNotFound, FileNotFoundError):  # type: ignore[misc]
    """No object or directory at this path (or its repository or ref does not exist)."""

    code = errno.ENOENT


class PathExists(_OSErrorFields, AlreadyExists, FileExistsError):  # type: ignore[misc]
    """An exclusive write (``"xb"``, ``mode="create"``) found an object already there."""

    code = errno.EEXIST


class ReadOnlyRef(_OSErrorFields, InvalidArgument, PermissionError):  # type: ignore[misc]
    """A write addressed a tag, a commit ID or a ref expression (``main~1``): only branches
    accept writes. Nothing was written."""

    code = errno.EROFS


class ReadOnlyBranch(_OSErrorFields, ProtectedBranch, PermissionError):  # type: ignore[misc]
    """A write addressed a protected branch; write to another branch and merge into it."""

    code = errno.EACCES


@contextmanager
def translated(path: str) -> Iterator[None]:
    """Re-raise engine errors under ``path`` as the builtin-compatible classes above.

    ``NotFound`` (repository, ref, object) becomes :class:`PathNotFound`, ``ProtectedBranch``
    becomes :class:`ReadOnlyBranch`; other graveler errors (bad keys are already
    ``ValueError``) pass through unchanged.
    """
    try:
        yield
    except (PathNotFound, PathExists, ReadOnlyRef, ReadOnlyBranch):
        raise
    except NotFound as exc:
        raise PathNotFound(str(exc), path) from exc
    except ProtectedBranch as exc:
        raise ReadOnlyBranch(str(exc), path) from exc
