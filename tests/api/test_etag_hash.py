"""EtagHasher agrees with hashlib's MD5 whatever the pieces, and its thread ends."""

from __future__ import annotations

import hashlib
import os
import threading

import pytest

from graveler.storage.etag_hash import BESIDE, EtagHasher


@pytest.mark.parametrize(
    "sizes",
    [[], [10], [BESIDE - 1, 5], [BESIDE, 1, BESIDE * 3, 7], [1, BESIDE * 2] + [BESIDE] * 20],
)
def test_the_digest_is_md5_of_the_pieces_in_order(sizes: list[int]) -> None:
    pieces = [os.urandom(n) for n in sizes]
    hasher = EtagHasher()
    for piece in pieces:
        hasher.update(piece)
    assert hasher.hexdigest() == hashlib.md5(b"".join(pieces)).hexdigest()
    assert not [t for t in threading.enumerate() if t.name == "graveler-md5"]


def _md5_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "graveler-md5"]


def test_only_a_second_large_piece_starts_the_thread() -> None:
    hasher = EtagHasher()
    hasher.update(os.urandom(BESIDE * 4))
    assert not _md5_threads()  # one piece: hashed in place
    hasher.update(os.urandom(BESIDE))
    assert _md5_threads()
    hasher.close()
    assert not _md5_threads()


def test_close_after_a_failed_write_stops_the_thread() -> None:
    hasher = EtagHasher()
    hasher.update(os.urandom(BESIDE * 2))
    hasher.update(os.urandom(BESIDE * 2))
    hasher.close()
    hasher.close()  # idempotent
    assert not [t for t in threading.enumerate() if t.name == "graveler-md5"]
