"""Object entry encoding: binary layout round trips, identity ignores the physical address,
damage is refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graveler.core.errors import CorruptFile
from graveler.storage import entry as entries
from graveler.storage.entry import ObjectEntry

text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=40)
times = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)


@given(
    path=text.filter(bool),
    address=text.filter(bool),
    size=st.integers(0, 2**63 - 1),
    checksum=text,
    mtime=times,
    content_type=text,
    metadata=st.dictionaries(text.filter(bool), text, max_size=5),
)
def test_round_trip(path, address, size, checksum, mtime, content_type, metadata):
    e = ObjectEntry(path, address, size, checksum, mtime, content_type, metadata)
    back = entries.decode(e.key, e.encode())
    assert back == e


def test_identity_ignores_where_the_bytes_live():
    now = datetime.now(UTC)
    a = ObjectEntry("k", "data/aa/1", 3, "c" * 64, now, "text/csv", {"m": "1"})
    b = ObjectEntry(
        "k", "data/bb/2", 3, "c" * 64, now + timedelta(seconds=5), "text/csv", {"m": "1"}
    )
    assert a.identity() == b.identity()
    assert (
        a.identity() != ObjectEntry("k", "x", 3, "c" * 64, now, "text/csv", {"m": "2"}).identity()
    )


@pytest.mark.parametrize("cut", [0, 1, 10, 37, -1])
def test_truncated_or_unknown_values_are_refused(cut):
    e = ObjectEntry("k", "data/aa/1", 3, "c" * 64, datetime.now(UTC), "text/csv", {"m": "1"})
    raw = e.encode()
    with pytest.raises(CorruptFile):
        entries.decode(b"k", raw[:cut])
    with pytest.raises(CorruptFile):
        entries.decode(b"k", b"\x03" + raw[1:])  # 2 is the external-address layout
    with pytest.raises(CorruptFile):
        entries.decode(b"k", raw + b"x")


@given(
    size=st.integers(0, 2**63 - 1),
    checksum=st.one_of(text, st.text("0123456789abcdef", min_size=64, max_size=64)),
    content_type=st.one_of(text, st.sampled_from(["text/csv", 'a"b', "a\\b", "x\x7f", "é"])),
    metadata=st.dictionaries(text.filter(bool), text, max_size=2),
)
def test_identity_is_the_hash_of_its_json_document(size, checksum, content_type, metadata):
    """Identities are stored in every tree: whatever shortcut builds the text, it must be
    exactly the compact JSON it always was."""
    import hashlib
    import json

    e = ObjectEntry(
        "p", "a", size, checksum, datetime(2024, 1, 1, tzinfo=UTC), content_type, metadata
    )
    doc = [checksum, size, content_type, sorted(metadata.items())]
    expected = hashlib.sha256(json.dumps(doc, separators=(",", ":")).encode()).digest()
    assert e.identity() == expected
