"""Early reads (:func:`graveler.views.reads.early_reads`): bytes usable before their check ends,
the check made once, by the background thread or by a caller that finds it not started, and
a damaged object reported as CorruptFile whoever checks it."""

from __future__ import annotations

import threading

import pytest

from graveler.core.errors import CorruptFile
from graveler.repository import Repository
from graveler.views.reads import EarlyRead, early_reads


def _entries(repo: Repository, damaged: bool = False) -> list:
    out = []
    for i in range(3):
        repo.put("main", f"f{i}", bytes([i]) * 100_000)
        out.append(repo.stat("main", f"f{i}"))
    if damaged:
        repo.store.put(out[1].physical_address, b"not what was written")
    return out


def test_reads_are_checked_by_the_background_or_by_the_caller(repo: Repository):
    entries = _entries(repo)
    held = threading.Lock()
    held.acquire()  # the batch's check lock, held: no background thread can check
    try:
        reads = [EarlyRead(repo, e, held) for e in entries]
        assert [r.unchecked()[:1] for r in reads] == [b"\x00", b"\x01", b"\x02"]
        found: list[bytes] = []
        caller = threading.Thread(target=lambda: found.extend(r.checked()[:1] for r in reads))
        caller.start()
        caller.join(60)  # the caller checks them itself: it must not wait for the lock
        assert not caller.is_alive() and found == [b"\x00", b"\x01", b"\x02"]
    finally:
        held.release()
    assert all(r.checked() for r in early_reads(repo, entries))


@pytest.mark.parametrize("caller_checks", [True, False])
def test_a_damaged_object_fails_its_check_whoever_makes_it(repo: Repository, caller_checks):
    entries = _entries(repo, damaged=True)
    held = threading.Lock()
    if caller_checks:
        held.acquire()
    try:
        reads = [EarlyRead(repo, e, held) for e in entries]
        assert reads[1].unchecked() == b"not what was written"
        with pytest.raises(CorruptFile):
            reads[1].checked()
        assert reads[0].checked() and reads[2].checked()
    finally:
        if caller_checks:  # the background threads go on (and find the checks made)
            held.release()
