"""Object entries: what a key maps to, and how it is encoded in staging and in trees.

The *identity* of an entry hashes what a user sees (checksum, size, content type, user
metadata) and not where the bytes live, so re-uploading identical content is "no change" for
commit, diff and merge.

The *value* (entry layout v1) is binary, decoded on every stat, so it avoids JSON (~7 us):

    u8 version (1) | u64 size | i64 mtime (microseconds since the Unix epoch)
    | u32 len(address) | u32 len(checksum) | u32 len(content_type) | u32 metadata pairs
    | address | checksum | content_type | (u32 len(k) | u32 len(v) | k | v) per pair, sorted

All strings are UTF-8. Unknown versions and truncated values are refused with CorruptFile.

Layout 2 is the same bytes with version 2: an entry whose address is *external*, a full URI
(``s3://bucket/key``, ``file:///path``) of an object outside the repository's namespace that
``import`` referenced without copying. Every other entry's address is namespace-relative and
stays inside the namespace; the version byte keeps the two kinds apart in every tree.

Layouts 3 and 4 are layouts 1 and 2 followed by the object's S3 ETag (without quotes)::

    ... | u32 len(etag) | etag

the hex MD5 of the bytes, or for an object assembled from a multipart upload the MD5 of its
parts' MD5s, ``-`` and the number of parts, as S3 computes it. Writers that know it record
it; the ETag is not part of the identity (the same bytes are the same object however they
were uploaded). Entries without one are served with an ETag derived from the SHA-256
(:func:`etag_of`).
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from graveler.core.errors import CorruptFile
from graveler.core.model import StagedEntry
from graveler.storage.committed.record import ValueRecord

DEFAULT_CONTENT_TYPE = "application/octet-stream"
ENTRY_LAYOUT = 1
EXTERNAL_LAYOUT = 2
#: Layouts 1 and 2 with the ETag after the metadata.
ETAG_LAYOUT_OFFSET = 2
_LAYOUTS = (1, 2, 3, 4)
_ETAG_LEN = struct.Struct(">I")
_HEAD = struct.Struct(">BQqIIII")
_PAIR = struct.Struct(">II")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class ObjectEntry:
    """An object as stored in a branch, tag or commit. ``physical_address`` is relative to
    the repository's storage namespace, unless ``external``: then it is the full URI of an
    object outside it, which only ``Repository.import_data`` creates (staging refuses such
    entries) and which garbage collection never deletes."""

    path: str
    physical_address: str
    size: int
    checksum: str  # hex sha256 of the content
    mtime: datetime
    content_type: str = DEFAULT_CONTENT_TYPE
    metadata: Mapping[str, str] = field(default_factory=dict)
    external: bool = False
    #: The S3 ETag when the writer recorded one (see the module docstring).
    etag: str | None = None

    @property
    def key(self) -> bytes:
        return self.path.encode("utf-8")

    def identity(self) -> bytes:
        """sha256 of the compact JSON of ``[checksum, size, content_type, sorted metadata]``
        (stored in every tree: its bytes never change). Without metadata, and with strings
        JSON leaves as they are, the text is spelled out directly (json.dumps costs more
        than the hash)."""
        if (
            not self.metadata
            and type(self.size) is int
            and _plain(self.checksum, self.content_type)
        ):
            text = f'["{self.checksum}",{self.size},"{self.content_type}",[]]'
        else:
            doc = [self.checksum, self.size, self.content_type, sorted(self.metadata.items())]
            text = json.dumps(doc, separators=(",", ":"))
        return hashlib.sha256(text.encode()).digest()

    def encode(self) -> bytes:
        address = self.physical_address.encode()
        checksum = self.checksum.encode()
        content_type = self.content_type.encode()
        micros = (self.mtime - _EPOCH) // _MICROSECOND
        layout = EXTERNAL_LAYOUT if self.external else ENTRY_LAYOUT
        parts = [
            _HEAD.pack(
                layout + (ETAG_LAYOUT_OFFSET if self.etag is not None else 0),
                self.size,
                micros,
                len(address),
                len(checksum),
                len(content_type),
                len(self.metadata),
            ),
            address,
            checksum,
            content_type,
        ]
        for k, v in sorted(self.metadata.items()):
            kb, vb = k.encode(), v.encode()
            parts += [_PAIR.pack(len(kb), len(vb)), kb, vb]
        if self.etag is not None:
            etag = self.etag.encode()
            parts += [_ETAG_LEN.pack(len(etag)), etag]
        return b"".join(parts)

    def to_record(self) -> ValueRecord:
        return ValueRecord(self.key, self.identity(), self.encode())

    def to_staged(self) -> StagedEntry:
        return StagedEntry(self.key, self.identity(), self.encode())


#: Strings that JSON writes as they are: printable ASCII other than '"' and '\\'.
_JSON_PLAIN = re.compile(r"[ !#-\[\]-~]*")


def _plain(*texts: str) -> bool:
    return all(type(t) is str and _JSON_PLAIN.fullmatch(t) is not None for t in texts)


def physical_address_of(key: bytes, value: bytes) -> str:
    """Only the physical address of an encoded entry (what GC needs), without a full decode.
    An external entry's address is a full URI, which never names a key of the namespace."""
    try:
        version, _, _, la, *_ = _HEAD.unpack_from(value)
        if version not in _LAYOUTS or _HEAD.size + la > len(value):
            raise CorruptFile(f"entry for {key!r} is not a valid object entry")
        return value[_HEAD.size : _HEAD.size + la].decode()
    except (struct.error, UnicodeDecodeError) as exc:
        raise CorruptFile(f"entry for {key!r} is not a valid object entry") from exc


def decode(key: bytes, value: bytes) -> ObjectEntry:
    """Inverse of :meth:`ObjectEntry.encode`; raises CorruptFile on malformed input."""
    try:
        version, size, micros, la, lc, lt, pairs = _HEAD.unpack_from(value)
        if version not in _LAYOUTS:
            raise CorruptFile(f"entry for {key!r} has unknown layout version {version}")
        pos = _HEAD.size
        address = value[pos : pos + la].decode()
        pos += la
        checksum = value[pos : pos + lc].decode()
        pos += lc
        content_type = value[pos : pos + lt].decode()
        pos += lt
        metadata = {}
        for _ in range(pairs):
            lk, lv = _PAIR.unpack_from(value, pos)
            pos += _PAIR.size
            metadata[value[pos : pos + lk].decode()] = value[pos + lk : pos + lk + lv].decode()
            pos += lk + lv
        etag = None
        if version > EXTERNAL_LAYOUT:
            (le,) = _ETAG_LEN.unpack_from(value, pos)
            pos += _ETAG_LEN.size
            etag = value[pos : pos + le].decode()
            pos += le
        if pos != len(value):
            raise CorruptFile(f"entry for {key!r} has {len(value) - pos} stray bytes")
        return ObjectEntry(
            key.decode(),
            address,
            size,
            checksum,
            _EPOCH + timedelta(microseconds=micros),
            content_type,
            metadata,
            version % 2 == 0,
            etag,
        )
    except (struct.error, UnicodeDecodeError) as exc:
        raise CorruptFile(f"entry for {key!r} is not a valid object entry") from exc


def etag_of(entry: ObjectEntry) -> str:
    """The S3 ETag of ``entry`` (without quotes): the recorded one, or for entries written
    without one, the first 128 bits of the SHA-256 in hex with ``-1`` after them. The suffix
    marks it as not an MD5 of the bytes, as S3 marks multipart ETags, so clients that check
    an MD5 ETag against the bytes skip it."""
    return entry.etag if entry.etag is not None else f"{entry.checksum[:32]}-1"
