"""One address check: ``stage_entries`` (and ``import_entries``) validate physical addresses
exactly as ``link`` does, with one function.

Reproduced before the fix: ``stage_entries`` committed ``../../../../etc/passwd``,
``file:///etc/passwd`` and ``s3://other-bucket/secret`` as physical addresses, which ``link``
refused.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graveler.core.errors import InvalidArgument, ObjectNotFound
from graveler.repository import Repository
from graveler.storage.entry import ObjectEntry

OUTSIDE = [
    "../../../../etc/passwd",
    "file:///etc/passwd",
    "s3://other-bucket/secret",
    "/etc/passwd",
    "data/../../elsewhere",
    "data//x",
    "_graveler/repository.json",  # graveler's own metadata is not data
]
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def entry(address: str, path: str = "stolen") -> ObjectEntry:
    return ObjectEntry(path, address, 11, "0" * 64, NOW)


@pytest.mark.parametrize("address", OUTSIDE)
def test_stage_entries_refuses_what_link_refuses(repo: Repository, address: str) -> None:
    with pytest.raises(InvalidArgument) as linked:
        repo.link("main", "stolen", address, checksum="0" * 64, size=11, mtime=NOW)
    with pytest.raises(InvalidArgument) as staged:
        repo.stage_entries("main", [entry(address)])
    assert str(staged.value) == str(linked.value)  # the same check said it
    with pytest.raises(ObjectNotFound):
        repo.stat("main", "stolen")
    assert list(repo.diff_uncommitted("main")) == []


@pytest.mark.parametrize("address", OUTSIDE)
def test_import_entries_refuses_them_too(repo: Repository, address: str) -> None:
    head = repo.resolve("main").commit
    with pytest.raises(InvalidArgument):
        repo.import_entries("main", [entry(address)], "import")
    assert repo.resolve("main").commit == head


def test_addresses_inside_the_namespace_are_staged_relative(repo: Repository) -> None:
    put = repo.put("main", "a", b"hello world")
    inside = repo.physical_uri(put)  # the same object, spelled as a URI of the namespace
    assert repo.stage_entries("main", [entry(inside, "b"), entry(put.physical_address, "c")]) == 2
    assert repo.stat("main", "b").physical_address == put.physical_address
    assert repo.stat("main", "c").physical_address == put.physical_address
