"""Object key rules shared by every :class:`~graveler.storage.objectstore.port.ObjectStore` backend.

A key is a non-empty, relative, ``/``-separated path of at most :data:`MAX_KEY_BYTES` bytes of
UTF-8. It never starts with ``/`` and none of its components is empty, ``.`` or ``..``; it never
contains NUL. These rules make sure that no key can name anything outside a store's root, on
any backend, and that every backend accepts exactly the same set of keys.
"""

from __future__ import annotations

from graveler.core.errors import InvalidKey

#: The longest key, in bytes of UTF-8 (the S3 limit).
MAX_KEY_BYTES = 1024

_FORBIDDEN_COMPONENTS = frozenset({"", ".", ".."})


def _encoded_length(text: str, what: str) -> int:
    """The UTF-8 length of ``text``; raises InvalidKey if it cannot be encoded (lone surrogates)."""
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidKey(f"{what} {text!r} is not valid UTF-8 text") from exc


def _check_common(text: str, what: str) -> None:
    """Rules shared by keys and list prefixes: str, no NUL, not absolute, UTF-8, length."""
    if not isinstance(text, str):
        raise InvalidKey(f"{what} must be a str, not {type(text).__name__}")
    if "\x00" in text:
        raise InvalidKey(f"{what} {text!r} contains a NUL character")
    if text.startswith("/"):
        raise InvalidKey(f"{what} {text!r} starts with '/'; keys are relative to the store root")
    size = _encoded_length(text, what)
    if size > MAX_KEY_BYTES:
        raise InvalidKey(f"{what} is {size} bytes of UTF-8; the limit is {MAX_KEY_BYTES}")


def validate_key(key: str) -> str:
    """Return ``key`` unchanged if it is a valid object key, else raise :class:`InvalidKey`.

    Valid: non-empty, no NUL, no leading ``/``, no empty / ``.`` / ``..`` component (so no
    ``a//b`` and no trailing ``/``), at most :data:`MAX_KEY_BYTES` bytes of UTF-8.
    """
    _check_common(key, "object key")
    if not key:
        raise InvalidKey("object key must not be empty")
    for component in key.split("/"):
        if component in _FORBIDDEN_COMPONENTS:
            shown = repr(component) if component else "an empty component"
            raise InvalidKey(
                f"object key {key!r} contains {shown}; keys are '/'-separated relative paths "
                "without empty, '.' or '..' components"
            )
    return key


def validate_prefix(prefix: str) -> str:
    """Return ``prefix`` unchanged if it can start a valid key, else raise :class:`InvalidKey`.

    A list prefix is a plain string prefix: ``""``, ``"data/"`` and ``"data/2f/ab"`` are all
    fine. Every *complete* component (those followed by ``/``) must obey the key rules; the
    last, possibly partial, component may be anything without NUL.
    """
    _check_common(prefix, "list prefix")
    for component in prefix.split("/")[:-1]:
        if component in _FORBIDDEN_COMPONENTS:
            raise InvalidKey(
                f"list prefix {prefix!r} contains an empty, '.' or '..' component, "
                "so no valid key can start with it"
            )
    return prefix
