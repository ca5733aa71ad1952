"""Low-level decoding helpers of graveler.storage.sstable.format."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graveler.core.errors import CorruptFile, UnsupportedFormat
from graveler.storage.sstable.format import (
    CHECKSUM_CRC32C,
    CHECKSUM_NONE,
    CHECKSUM_XXH3,
    context_modifier,
    parse_footer,
    parse_handle,
    read_signed_varint,
    read_varint,
    read_varint32,
)


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@given(st.integers(min_value=0, max_value=2**64 - 1), st.binary(max_size=3))
def test_varint_roundtrip(value: int, tail: bytes) -> None:
    encoded = _encode_varint(value) + tail
    assert read_varint(encoded, 0, len(encoded)) == (value, len(encoded) - len(tail))


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_signed_varint_roundtrip(value: int) -> None:
    zigzag = ((value << 1) ^ (value >> 63)) & (2**64 - 1)
    encoded = _encode_varint(zigzag)
    assert read_signed_varint(encoded, 0, len(encoded)) == (value, len(encoded))


@pytest.mark.parametrize(
    "data",
    [b"", b"\x80", b"\xff\xff", b"\xff" * 10 + b"\x01", b"\xff" * 9 + b"\x7f"],
)
def test_malformed_varints(data: bytes) -> None:
    with pytest.raises(CorruptFile):
        read_varint(data, 0, len(data))


def test_varint_respects_limit_and_varint32_range() -> None:
    data = _encode_varint(300)
    with pytest.raises(CorruptFile):
        read_varint(data, 0, 1)
    big = _encode_varint(2**32)
    with pytest.raises(CorruptFile):
        read_varint32(big, 0, len(big))
    assert read_varint32(_encode_varint(2**32 - 1), 0, 5) == (2**32 - 1, 5)


def test_parse_handle() -> None:
    assert parse_handle(_encode_varint(1000) + _encode_varint(42)) == (1000, 42)
    with pytest.raises(CorruptFile):
        parse_handle(_encode_varint(1) + _encode_varint(2) + b"\x00")
    with pytest.raises(CorruptFile):
        parse_handle(b"\x80")


def test_context_modifier() -> None:
    assert context_modifier(0, 12345) == 0
    assert context_modifier(0xDEADBEEF, 0) == 0xDEADBEEF
    assert context_modifier(1, 2**32 + 5) == 1 ^ 6
    assert context_modifier(7, 0xFFFFFFFF + 2**32) == 7 ^ 0


def _footer(checksum_type: int, version: int) -> bytes:
    return (
        bytes([checksum_type])
        + bytes(40)
        + version.to_bytes(4, "little")
        + (0x88E241B785F4CFF7).to_bytes(8, "little")
    )


def test_footer_rejections() -> None:
    with pytest.raises(UnsupportedFormat):
        parse_footer(bytes(45) + (0xDB4775248B80FB57).to_bytes(8, "little"))
    with pytest.raises(UnsupportedFormat):
        parse_footer(_footer(CHECKSUM_XXH3, 8))
    with pytest.raises(UnsupportedFormat):
        parse_footer(_footer(CHECKSUM_XXH3, 0))
    with pytest.raises(UnsupportedFormat):
        parse_footer(_footer(CHECKSUM_CRC32C, 5))
    with pytest.raises(UnsupportedFormat):
        parse_footer(_footer(CHECKSUM_NONE, 5))
    with pytest.raises(CorruptFile):
        parse_footer(_footer(9, 5))
    with pytest.raises(CorruptFile):
        parse_footer(_footer(CHECKSUM_XXH3, 6))  # no extended magic
    with pytest.raises(CorruptFile):
        parse_footer(_footer(CHECKSUM_XXH3, 6)[1:])  # too short


def test_footer_v5_handles() -> None:
    part2 = _encode_varint(100) + _encode_varint(20) + _encode_varint(50) + _encode_varint(40)
    raw = bytearray(_footer(CHECKSUM_XXH3, 5))
    raw[1 : 1 + len(part2)] = part2
    footer = parse_footer(b"x" * 10 + bytes(raw))
    assert footer.metaindex_handle == (100, 20)
    assert footer.index_handle == (50, 40)
    assert footer.base_context_checksum == 0
