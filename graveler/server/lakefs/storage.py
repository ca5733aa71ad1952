"""Storage namespaces as lakeFS's clients spell them, and the storage part of ``config``.

lakeFS's clients only send namespaces that match lakeFS's pattern (``s3://``, ``local://``,
``gs://``...), and its local blockstore keeps every ``local://NAME`` below one directory.
The same here: ``local://NAME`` (or ``local:///NAME``) is ``NAME`` below the server's local
root (``--namespace-root`` when it is a directory, else ``<home>/data``), never outside it;
``s3://bucket/prefix`` is itself. A ``file://`` namespace is taken when it lies under the
local root (an API call may not point the server at any other directory of its host).

Namespaces and physical addresses go back to clients in the same spelling: a namespace
under the local root as ``local://NAME``, others as stored.

``blockstore_type`` is ``s3`` when the server's namespace root is on S3 and ``local``
otherwise. A server holds repositories of both kinds, as a lakeFS with two blockstores
does: a repository whose namespace is of the other kind reports that kind as its
``storage_id``, and ``storage_config_list`` describes it (the lakeFS Hadoop FileSystem
looks its repository's blockstore up that way). Presigned URLs (reads, writes and multipart
uploads) are offered for S3 namespaces, which is what ``pre_sign_support`` advertises.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from graveler.core.errors import InvalidArgument
from graveler.server.lakefs.errors import bad_request
from graveler.storage.namespaces import canonical_namespace

LOCAL = "local://"
S3 = "s3://"
FILE = "file://"


@dataclass(frozen=True)
class Storage:
    """Where namespaces live. ``local_root``: the canonical ``file://`` URI of the local
    root; ``default_root``: where the server puts new repositories (``--namespace-root``)."""

    local_root: str
    default_root: str

    @classmethod
    def of(cls, default_namespace: str, namespace_root: str | None) -> Storage:
        """``default_namespace``: the client's namespace for a repository named ``x``."""
        home_root = canonical_namespace(default_namespace.rsplit("/", 1)[0])
        if namespace_root is None:
            return cls(home_root, home_root)
        root = canonical_namespace(namespace_root).rstrip("/")
        return cls(root if root.startswith(FILE) else home_root, root)

    @property
    def blockstore_type(self) -> str:
        """The kind of the server's own namespace root: ``s3`` or ``local``."""
        return kind_of(self.default_root)

    @property
    def default_prefix(self) -> str:
        """lakeFS's ``default_namespace_prefix``: clients append ``/NAME``."""
        return self.default_root if self.blockstore_type == "s3" else "local://"

    def storage_id(self, namespace: str) -> str:
        """lakeFS's ``storage_id`` of a repository: ``""`` (the default blockstore) when its
        namespace is of the root's kind, else that kind, which ``storage_config_list``
        describes (a local server can hold S3 repositories, and the other way round)."""
        kind = kind_of(namespace)
        return "" if kind == self.blockstore_type else kind

    def internal(self, given: str) -> str:
        """The canonical namespace of a namespace a client gave; 400 when it is not one this
        server may use."""
        if not isinstance(given, str) or not given:
            raise bad_request("storage_namespace is required")
        if given.startswith(LOCAL):
            return self._local(given[len(LOCAL) :], given)
        try:
            if given.startswith(S3):
                return canonical_namespace(given)
            if given.startswith(FILE):
                found = canonical_namespace(given)
                if found == self.local_root or found.startswith(self.local_root + "/"):
                    return found
                raise bad_request(
                    f"storage namespace {given!r} is outside the server's local root; "
                    "use local://NAME"
                )
        except InvalidArgument as exc:
            raise bad_request(f"invalid storage namespace {given!r}: {exc}") from None
        raise bad_request(
            f"unsupported storage namespace {given!r}: use local://NAME or s3://bucket/prefix"
        )

    def _local(self, rest: str, given: str) -> str:
        raw = unquote(rest)
        relative = posixpath.normpath("/" + raw).lstrip("/")
        if not relative or ".." in raw.split("/"):
            raise bad_request(f"storage namespace {given!r} must name a directory: local://NAME")
        return canonical_namespace(self.local_root + "/" + relative)

    def external(self, namespace: str) -> str:
        """``namespace`` as clients see it (``local://NAME`` under the local root)."""
        if namespace.startswith(self.local_root + "/"):
            return LOCAL + namespace[len(self.local_root) + 1 :]
        return namespace

    def address(self, namespace: str, relative: str) -> str:
        """The full URI of an object at ``relative`` in ``namespace``, as clients see it."""
        return self.external(namespace).rstrip("/") + "/" + relative

    def linkable(self, namespace: str, given: str) -> str:
        """A physical address a client sent, spelled as the engine's ``link`` checks it (a
        ``local://`` address becomes the ``file://`` URI it names)."""
        if given.startswith(LOCAL):
            raw = unquote(given[len(LOCAL) :])
            if ".." in raw.split("/"):
                raise bad_request(f"physical address {given!r} has a '..' component")
            return self.local_root + "/" + posixpath.normpath("/" + raw).lstrip("/")
        return given

    def config(self, kind: str | None = None, blockstore_id: str = "") -> dict[str, Any]:
        """lakeFS's ``StorageConfig`` of a kind of namespace (default: the root's)."""
        kind = kind or self.blockstore_type
        presign = kind == "s3"
        if kind == self.blockstore_type:
            prefix = self.default_prefix
        else:
            prefix = "s3://" if presign else LOCAL
        example = prefix.rstrip("/") + "/my-repository" if presign else "local://my-repository"
        return {
            "blockstore_type": kind,
            "blockstore_description": "graveler",
            "blockstore_id": blockstore_id,
            "blockstore_namespace_example": example,
            "blockstore_namespace_ValidityRegex": f"^{kind}://",
            "default_namespace_prefix": prefix,
            "pre_sign_support": presign,
            "pre_sign_support_ui": presign,
            "pre_sign_multipart_upload": presign,
            "import_support": True,
            "import_validity_regex": "^(local|s3|file)://",
        }

    def config_list(self) -> list[dict[str, Any]]:
        """lakeFS's ``storage_config_list``: the kind of namespace other than the root's, by
        the ``storage_id`` its repositories report."""
        other = "local" if self.blockstore_type == "s3" else "s3"
        return [self.config(other, other)]


def kind_of(namespace: str) -> str:
    """``s3`` for an S3 namespace, ``local`` for any other."""
    return "s3" if namespace.startswith(S3) else "local"
