"""ListObjectsV2 and ListObjects (V1) over ``REF/PATH`` keys.

A prefix that names a ref (``main/raw/``) lists that ref's objects; a prefix without a
``/`` (``""``, ``ma``) lists the repository's branches whose names start with it, as common
prefixes (``main/``), the way lakeFS's gateway does. Pages are cut as S3 cuts them: up to
``max-keys`` keys and common prefixes together, in key order; the continuation token is the
last key or prefix of the page (opaque to clients, base64).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from urllib.parse import quote

from graveler.core.errors import InvalidKey, InvalidRef, RefNotFound
from graveler.repository import Repository
from graveler.server.s3.call import Call
from graveler.server.s3.errors import S3Error
from graveler.server.s3.xml import document, element, group, timestamp
from graveler.storage.entry import ObjectEntry, etag_of

MAX_KEYS = 1000
OWNER = {"ID": "graveler", "DisplayName": "graveler"}


@dataclass
class Page:
    objects: list[ObjectEntry] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    #: The last key or common prefix of the page when there are more.
    next_after: str | None = None


async def list_objects(call: Call) -> None:
    query = call.request.query
    v2 = query.get("list-type") == "2"
    prefix = query.get("prefix", "")
    delimiter = query.get("delimiter", "")
    max_keys = _max_keys(query.get("max-keys"))
    if v2:
        token = query.get("continuation-token")
        after = _decode_token(token) if token is not None else query.get("start-after", "")
    else:
        after = query.get("marker", "")
    repo = await call.repository()
    page = await call.run(list_page, repo, prefix, delimiter, after, max_keys)
    encode = query.get("encoding-type") == "url"
    owner = not v2 or query.get("fetch-owner") == "true"  # as S3: V2 only when asked
    if v2:
        body = _v2(call, page, v2_fields(query, page, encode))
    else:
        body = _v1(call, page, max_keys, encode)
    await call.xml(
        document(
            "ListBucketResult",
            _head(call, prefix, delimiter, encode, v2) + body + _contents(page, encode, owner),
        )
    )


def list_page(repo: Repository, prefix: str, delimiter: str, after: str, max_keys: int) -> Page:
    if max_keys == 0:
        return Page()
    if "/" not in prefix:
        return _branch_page(repo, prefix, after, max_keys)
    ref, path_prefix = prefix.split("/", 1)
    after_path = ""
    if after > prefix:
        if not after.startswith(ref + "/"):
            return Page()
        after_path = after[len(ref) + 1 :]
    try:
        listing = repo.list(
            ref, path_prefix, delimiter=delimiter or None, after=after_path, amount=max_keys
        )
    except (RefNotFound, InvalidRef, InvalidKey):
        return Page()
    page = Page(
        [_with_key(ref, o) for o in listing.objects],
        [f"{ref}/{p}" for p in listing.common_prefixes],
    )
    if listing.next_after is not None:
        page.next_after = f"{ref}/{listing.next_after}"
    return page


def _branch_page(repo: Repository, prefix: str, after: str, max_keys: int) -> Page:
    names = sorted(b.name + "/" for b in repo.list_branches() if b.name.startswith(prefix))
    names = [n for n in names if n > after]
    page = Page(prefixes=names[:max_keys])
    if len(names) > max_keys:
        page.next_after = page.prefixes[-1]
    return page


def _with_key(ref: str, entry: ObjectEntry) -> ObjectEntry:
    return replace(entry, path=f"{ref}/{entry.path}")


def v2_fields(query: dict[str, str], page: Page, encode: bool) -> dict[str, object]:
    fields: dict[str, object] = {"KeyCount": len(page.objects) + len(page.prefixes)}
    if "continuation-token" in query:
        fields["ContinuationToken"] = query["continuation-token"]
    if page.next_after is not None:
        fields["NextContinuationToken"] = _encode_token(page.next_after)
    if "start-after" in query:
        fields["StartAfter"] = _enc(query["start-after"], encode)
    return fields


def _head(call: Call, prefix: str, delimiter: str, encode: bool, v2: bool) -> list[str]:
    """Name, Prefix, Delimiter and EncodingType. ListObjects (V1) answers its Prefix as
    given even under ``encoding-type=url``, as S3 does (SDKs decode it in V2 answers only)."""
    shown = _enc(prefix, encode and v2)
    parts = [element("Name", call.request.bucket), element("Prefix", shown)]
    if delimiter:
        parts.append(element("Delimiter", _enc(delimiter, encode)))
    if encode:
        parts.append(element("EncodingType", "url"))
    return parts


def _v2(call: Call, page: Page, fields: dict[str, object]) -> list[str]:
    max_keys = call.request.query.get("max-keys")
    parts = [
        element("MaxKeys", _max_keys(max_keys)),
        element("IsTruncated", page.next_after is not None),
    ]
    parts += [element(k, v) for k, v in fields.items()]
    return parts


def _v1(call: Call, page: Page, max_keys: int, encode: bool) -> list[str]:
    query = call.request.query
    parts = [element("Marker", _enc(query.get("marker", ""), encode)), element("MaxKeys", max_keys)]
    parts.append(element("IsTruncated", page.next_after is not None))
    if page.next_after is not None and query.get("delimiter"):
        parts.append(element("NextMarker", _enc(page.next_after, encode)))
    return parts


def _contents(page: Page, encode: bool, owner: bool) -> list[str]:
    owned = [group("Owner", OWNER)] if owner else []
    parts = [
        group(
            "Contents",
            [
                element("Key", _enc(o.path, encode)),
                element("LastModified", timestamp(o.mtime)),
                element("ETag", f'"{etag_of(o)}"'),
                element("Size", o.size),
                *owned,
                element("StorageClass", "STANDARD"),
            ],
        )
        for o in page.objects
    ]
    parts += [group("CommonPrefixes", {"Prefix": _enc(p, encode)}) for p in page.prefixes]
    return parts


def _enc(text: str, encode: bool) -> str:
    return quote(text, safe="/") if encode else text


def _max_keys(text: str | None) -> int:
    if text is None:
        return MAX_KEYS
    try:
        value = int(text)
    except ValueError:
        raise S3Error("InvalidArgument", "max-keys must be an integer", 400) from None
    if value < 0:
        raise S3Error("InvalidArgument", "max-keys must not be negative", 400)
    return min(value, MAX_KEYS)


def _encode_token(after: str) -> str:
    return base64.b64encode(after.encode(), altchars=b"-_").decode()


def _decode_token(token: str) -> str:
    try:
        return base64.b64decode(token.encode(), altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise S3Error(
            "InvalidArgument", "the continuation token provided is incorrect", 400
        ) from None


def buckets_document(names: Iterable[tuple[str, str]]) -> bytes:
    """ListAllMyBucketsResult for (name, creation time) pairs."""
    buckets = [group("Bucket", {"Name": n, "CreationDate": c}) for n, c in names]
    return document("ListAllMyBucketsResult", [group("Owner", OWNER), group("Buckets", buckets)])
