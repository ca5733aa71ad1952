"""Key-space arithmetic shared by the SQL staging store and the committed trees.

Keys (and commit IDs) compare as byte strings (code points for text). Every key starting with
a prefix lies in the half-open interval ``[prefix, successor(prefix))``, which is how both a
SQL b-tree and a metarange seek to a prefix instead of scanning.
"""

from __future__ import annotations


def successor(prefix: bytes) -> bytes | None:
    """The smallest byte string greater than every string starting with ``prefix``, or None
    when there is none (empty prefix or only 0xFF bytes): then ``key >= prefix`` suffices."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return None
    return trimmed[:-1] + bytes([trimmed[-1] + 1])


def text_successor(prefix: str) -> str | None:
    """Like :func:`successor` for text compared by code point (``COLLATE "C"`` / BINARY)."""
    chars = list(prefix)
    while chars:
        code = ord(chars.pop()) + 1
        if 0xD800 <= code <= 0xDFFF:  # surrogates cannot be stored; skip past them
            code = 0xE000
        if code <= 0x10FFFF:
            return "".join(chars) + chr(code)
    return None
