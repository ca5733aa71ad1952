"""Validation of user-supplied names and keys. Every check raises a typed error that says
what is wrong and what is allowed; nothing is changed before validation passes."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from graveler.core.errors import InvalidKey, InvalidName

REPOSITORY_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{2,62}$")
#: Names of new branches and tags (lakeFS's rule): ASCII letters, digits, ``_`` and ``-``,
#: starting with a letter, a digit or ``_``. No look-alikes (zero-width, bidi, fullwidth or
#: combining characters) and no ``/``, which no ``graveler://`` URI could address.
REF_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
#: Tags may also hold ``.`` (``v1.0``), but not ``..``, not last and not as ``.lock`` at the end.
TAG_NAME = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?")
COMMIT_ID = re.compile(r"[0-9a-f]{64}")
_REF_FORBIDDEN = re.compile(r"[~^@$:\s\\?*\[\x00-\x1f\x7f]")
MAX_KEY_BYTES = 1024
MAX_NAME_LENGTH = 256


def repository_name(name: str) -> str:
    if not isinstance(name, str) or not REPOSITORY_NAME.match(name):
        raise InvalidName(
            f"invalid repository name {name!r}: use 3-63 characters of a-z, 0-9 and '-', "
            "starting with a letter or digit"
        )
    return name


def branch_name(name: str) -> str:
    """``name`` unchanged if a new branch may have it (:data:`REF_NAME`), else InvalidName."""
    return _new_ref_name(name, "branch", REF_NAME, "")


def tag_name(name: str) -> str:
    """``name`` unchanged if a new tag may have it (:data:`TAG_NAME`), else InvalidName."""
    return _new_ref_name(name, "tag", TAG_NAME, ", '.' (not '..', not last, no '.lock' end)")


def _new_ref_name(name: str, what: str, rule: re.Pattern[str], extra: str) -> str:
    """lakeFS's rule, applied when a ref is created (never when one is read or deleted)."""
    problem = None
    if not isinstance(name, str) or not name:
        problem = "it is empty"
    elif len(name) > MAX_NAME_LENGTH:
        problem = f"it is longer than {MAX_NAME_LENGTH} characters"
    elif not rule.fullmatch(name) or ".." in name or name.endswith(".lock"):
        problem = (
            f"use only ASCII letters, digits, '_' and '-'{extra}, starting with a letter, "
            "a digit or '_'"
        )
    elif COMMIT_ID.fullmatch(name):
        problem = "it looks like a commit ID"
    if problem:
        raise InvalidName(f"invalid {what} name {name!r}: {problem}")
    return name


def stored_ref_name(name: str, what: str) -> str:
    """The older, looser rule, for names that may already exist because they were created
    before :data:`REF_NAME` was enforced: a refs dump holding one can still be restored, so
    no data is stranded."""
    problem = None
    if not isinstance(name, str) or not name:
        problem = "it is empty"
    elif len(name) > MAX_NAME_LENGTH:
        problem = f"it is longer than {MAX_NAME_LENGTH} characters"
    elif not _is_utf8(name):
        problem = "it is not valid UTF-8 text"
    elif _REF_FORBIDDEN.search(name):
        problem = "it contains '~', '^', '@', '$', ':', whitespace or another forbidden character"
    elif ".." in name or "@{" in name:
        problem = "it contains '..' or '@{'"
    elif name.startswith(("-", "/", ".")) or name.endswith(("/", ".", ".lock")):
        problem = "it starts with '-', '/' or '.', or ends with '/', '.' or '.lock'"
    elif "//" in name or name == "@":
        problem = "it contains '//' or is '@'"
    elif COMMIT_ID.fullmatch(name):
        problem = "it looks like a commit ID"
    if problem:
        raise InvalidName(f"invalid {what} name {name!r}: {problem}")
    return name


def _is_utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def object_key(path: str) -> bytes:
    """The engine key of an object path: non-empty UTF-8, at most 1024 bytes, no NUL."""
    if type(path) is str:  # the hot path: one check per rule, messages built on failure only
        try:
            key = path.encode()
        except UnicodeEncodeError:
            pass
        else:
            if 0 < len(key) <= MAX_KEY_BYTES and b"\x00" not in key:
                return key
    return _refuse_key(path)


def written_key(path: str) -> bytes:
    """:func:`object_key` of a path about to be written: also no ``.`` or ``..`` segment
    (``a/../b``, ``./x``), which a copy of a prefix to a file system would resolve outside
    it. Reads and deletes take such a path when an earlier version stored it."""
    key = object_key(path)
    if b"." in key:
        for segment in (b".", b".."):
            if segment in key.split(b"/"):
                raise InvalidKey(
                    f"object path {path!r} has a {segment.decode()!r} segment: paths may not "
                    "hold '.' or '..' between slashes"
                )
    return key


def lookup_key(path: str) -> bytes:
    """The key to *look up* ``path`` with, checked less than :func:`object_key`: only that it
    is a ``str`` that encodes. Every key that was ever written passed :func:`object_key`, so
    a key found needs no further check; callers run :func:`object_key` on a miss, which
    raises InvalidKey for a path that could never have been written."""
    if type(path) is str:
        try:
            return path.encode()
        except UnicodeEncodeError:
            pass
    return object_key(path)


def lookup_keys(paths: Sequence[str]) -> list[bytes]:
    """:func:`lookup_key` of every path (one C-level pass when all are ``str``): callers run
    :func:`object_key` on the paths that are not found."""
    try:
        return list(map(str.encode, paths))
    except (TypeError, UnicodeEncodeError):
        return [lookup_key(p) for p in paths]


def _refuse_key(path: str) -> bytes:
    """:func:`object_key` for anything but a plain valid ``str``: the checks with their
    messages (a ``str`` subclass that passes them is accepted)."""
    if not isinstance(path, str):
        raise InvalidKey(f"object path must be a string, got {type(path).__name__}")
    try:
        key = path.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidKey(f"object path {path!r} is not valid UTF-8") from exc
    if not key:
        raise InvalidKey("object path is empty")
    if len(key) > MAX_KEY_BYTES:
        raise InvalidKey(f"object path is {len(key)} bytes; the limit is {MAX_KEY_BYTES}")
    if b"\x00" in key:
        raise InvalidKey(f"object path {path!r} contains a NUL character")
    return key


def text(value: str, what: str) -> str:
    """``value`` unchanged if it is a str that both databases can store (valid UTF-8, no NUL),
    else InvalidArgument naming ``what``."""
    from graveler.core.errors import InvalidArgument

    if not isinstance(value, str):
        raise InvalidArgument(f"{what} must be a string, got {value!r:.60}")
    if "\x00" in value:
        raise InvalidArgument(f"{what} {value!r:.60} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument(f"{what} {value!r:.60} is not valid UTF-8 text") from None
    return value


def prefix_key(prefix: str) -> bytes:
    """Like :func:`object_key` but the empty prefix is allowed."""
    return b"" if prefix == "" else object_key(prefix)


def metadata(values: Mapping[str, str] | None) -> dict[str, str]:
    """User metadata (a copy): a small map of non-empty string keys to strings."""
    from graveler.core.errors import InvalidArgument

    if values is not None and not isinstance(values, Mapping):
        raise InvalidArgument(f"metadata must be a mapping of strings, got {values!r:.60}")
    out: dict[str, str] = {}
    for k, v in (values or {}).items():
        if not isinstance(k, str) or not k or not isinstance(v, str):
            raise InvalidArgument(f"metadata must map non-empty strings to strings: {k!r}={v!r}")
        out[text(k, "metadata key")] = text(v, f"metadata {k!r:.40}")
    return out
