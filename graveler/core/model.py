"""Plain value types shared by every layer: repositories, branches, tags, commits, staged entries.

They carry no behaviour beyond validation-free construction; names are validated in
:mod:`graveler.core.validate`, commit IDs are computed in :mod:`graveler.views.history`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

#: The metarange ID of the empty tree. No file is written for it.
EMPTY_METARANGE_ID = ""


@dataclass(frozen=True, slots=True)
class RangeSettings:
    """Where the committed-tree writer cuts ranges (see ``graveler.storage.committed.splitter``)."""

    min_size: int
    max_size: int
    raggedness: int


@dataclass(frozen=True, slots=True)
class Repository:
    name: str
    storage_namespace: str  # URI: file:///..., s3://bucket/prefix, mem://name
    default_branch: str
    creation_date: datetime
    range_settings: RangeSettings


@dataclass(frozen=True, slots=True)
class Branch:
    """A mutable pointer to a commit plus its staging area.

    ``staging_token`` receives new writes; ``sealed_tokens`` (newest first) hold writes that a
    commit in progress is turning into a tree. Reads see staging, then sealed, then the commit.
    """

    name: str
    commit_id: str
    staging_token: str
    sealed_tokens: tuple[str, ...] = ()
    protected: bool = False

    @property
    def tokens(self) -> tuple[str, ...]:
        """Every staging token of the branch in read precedence: current, then sealed."""
        return (self.staging_token, *self.sealed_tokens)


@dataclass(frozen=True, slots=True)
class Tag:
    name: str
    commit_id: str


@dataclass(frozen=True, slots=True)
class Commit:
    id: str
    parents: tuple[str, ...]
    metarange_id: str
    message: str
    committer: str
    creation_date: datetime  # timezone-aware UTC, microsecond resolution
    metadata: Mapping[str, str] = field(default_factory=dict)
    generation: int = 1


@dataclass(frozen=True, slots=True)
class StagedEntry:
    """One staged change: a value (identity + encoded entry) or a tombstone (both None)."""

    key: bytes
    identity: bytes | None
    value: bytes | None

    @property
    def is_tombstone(self) -> bool:
        return self.identity is None


@dataclass(frozen=True, slots=True)
class ResolvedRef:
    """What a ref expression points at. ``branch`` is set for a plain branch name (and for
    ``branch$``), whose reads include the branch's staged changes. ``view`` is the branch
    modifier the expression used: ``"@"`` (committed state only, ``branch`` unset), ``"$"``
    (explicitly the staged view), or None."""

    commit: Commit
    branch: Branch | None = None
    view: str | None = None


@dataclass(frozen=True, slots=True)
class MergeResult:
    """A merge that landed on its destination branch: the head before it (``before``) and the
    new head (``commit``): a new merge commit, or for a fast-forward the source commit itself.
    Both come from the compare-and-swap that moved the branch, so no caller needs to read the
    head separately (which could race with other writers)."""

    before: Commit
    commit: Commit
    fast_forward: bool = False


@dataclass(frozen=True, slots=True)
class AccessKey:
    """An access key of ``graveler serve`` as stored: ``secret`` is the secret access key
    *encrypted* (see :mod:`graveler.server.credentials`). ``repositories`` None means every
    repository; ``admin`` may also create repositories (S3 CreateBucket)."""

    access_key_id: str
    secret: bytes
    repositories: tuple[str, ...] | None
    read_only: bool
    admin: bool
    description: str
    created: datetime


@dataclass(frozen=True, slots=True)
class MultipartUpload:
    """An S3 multipart upload in progress: what the completed object becomes."""

    upload_id: str
    repo: str
    branch: str
    path: str
    content_type: str
    metadata: Mapping[str, str]
    initiator: str
    created: datetime


@dataclass(frozen=True, slots=True)
class UploadedPart:
    """One part of a multipart upload: where its bytes are (namespace-relative) and their MD5."""

    upload_id: str
    part_number: int
    physical_address: str
    size: int
    md5: str
    created: datetime
