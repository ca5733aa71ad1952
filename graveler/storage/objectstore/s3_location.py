"""Where an S3 object store lives: the bucket name, the key prefix and the region, checked
and normalised before any request is made."""

from __future__ import annotations

import os
import re

from graveler.core.errors import InvalidKey, InvalidURI
from graveler.storage.objectstore.keys import validate_key

DEFAULT_REGION = "us-east-1"
_BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def region_of(explicit: str | None) -> str:
    """The explicit region, else AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1."""
    env = os.environ
    return explicit or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or DEFAULT_REGION


def check_bucket(bucket: str) -> str:
    """``bucket`` when it is a valid S3 bucket name; InvalidURI otherwise."""
    if not isinstance(bucket, str) or not _BUCKET_RE.match(bucket) or ".." in bucket:
        raise InvalidURI(
            f"invalid S3 bucket name {bucket!r}: 3-63 characters of a-z, 0-9, '.' and '-', "
            "starting and ending with a letter or digit"
        )
    return bucket


def normalize_prefix(prefix: str) -> str:
    """``"a/b"``, ``"/a/b/"`` -> ``"a/b/"``; ``""`` stays ``""``. Components follow key rules."""
    stripped = prefix.strip("/")
    if not stripped:
        return ""
    try:
        validate_key(stripped)
    except InvalidKey as exc:
        raise InvalidURI(f"invalid S3 key prefix {prefix!r}: {exc}") from exc
    return stripped + "/"
