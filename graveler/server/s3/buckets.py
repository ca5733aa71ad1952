"""Bucket operations: a bucket is a repository.

ListBuckets lists the repositories the caller may read; HeadBucket, GetBucketLocation and
GetBucketVersioning answer for one; CreateBucket creates a repository (admin keys only) at
the namespace given in ``x-graveler-storage-namespace`` (or the ``storage-namespace``
parameter), by default under the server's namespace root; DeleteBucket is refused (a
repository is deleted with ``graveler repo delete``). DeleteObjects deletes a batch of keys.
"""

from __future__ import annotations

from graveler.client import Graveler
from graveler.core.errors import AlreadyExists, InvalidName
from graveler.repository import Repository
from graveler.server.s3.call import Call
from graveler.server.s3.errors import S3Error, from_graveler, not_implemented
from graveler.server.s3.listing import buckets_document
from graveler.server.s3.objects import writable
from graveler.server.s3.xml import document, group, parse, text_of, timestamp
from graveler.storage.namespaces import canonical_namespace

MAX_DELETE = 1000


async def list_buckets(call: Call) -> None:
    """ListBuckets: the repositories the key may read, with a ``prefix`` those whose name
    starts with it."""
    prefix = call.request.query.get("prefix") or ""
    repos = await call.run(call.client.list_repositories)
    visible = [
        r
        for r in repos
        if r.name.startswith(prefix) and (call.principal is None or call.principal.may_read(r.name))
    ]
    await call.xml(buckets_document((r.name, timestamp(r.creation_date)) for r in visible))


async def head_bucket(call: Call) -> None:
    await call.repository()
    await call.respond(200, b"", {"x-amz-bucket-region": call.region})


async def bucket_location(call: Call) -> None:
    await call.repository()
    region = "" if call.region == "us-east-1" else call.region
    await call.xml(document("LocationConstraint", [region]))


async def bucket_versioning(call: Call) -> None:
    await call.repository()
    await call.xml(document("VersioningConfiguration", []))


async def create_bucket(call: Call, namespace_root: str | None) -> None:
    name = call.request.bucket or ""
    if call.principal is None:
        raise S3Error("AccessDenied", "anonymous requests may not create buckets", 403)
    call.principal.require_admin()
    await call.body().read_all(64 << 10)  # an optional CreateBucketConfiguration
    given = call.request.header("x-graveler-storage-namespace") or call.request.query.get(
        "storage-namespace"
    )
    root = _root(call.client, namespace_root)
    namespace = canonical_namespace(given or f"{root}/{name}")
    if namespace.startswith("file:") and not namespace.startswith(root + "/"):
        raise S3Error(
            "AccessDenied",
            f"a local namespace given through the gateway must lie under {root}",
            403,
        )
    try:
        await call.run(call.client.create_repository, name, namespace)
    except AlreadyExists:
        raise S3Error(
            "BucketAlreadyOwnedByYou", f"repository {name!r} already exists", 409
        ) from None
    except InvalidName as exc:
        raise S3Error("InvalidBucketName", str(exc), 400) from None
    await call.respond(200, b"", {"Location": f"/{name}"})


def _root(client: Graveler, root: str | None) -> str:
    """Where new repositories go: ``--namespace-root``, else the home's data directory."""
    if root is None:
        return client.default_namespace("x").rsplit("/", 1)[0]
    return canonical_namespace(root).rstrip("/")


async def delete_bucket(call: Call) -> None:
    """DeleteBucket is not offered (repositories are deleted with ``graveler repo delete``);
    a bucket that does not exist is NoSuchBucket first, as on S3."""
    await call.repository(write=True)
    raise not_implemented("DeleteBucket (delete a repository with 'graveler repo delete')")


async def delete_objects(call: Call) -> None:
    """DeleteObjects: each key deleted on its branch; errors reported per key."""
    repo = await call.repository(write=True)
    body = call.body()
    root = parse(await body.read_all(4 << 20))
    body.check(None, None)
    quiet = (text_of(root, "Quiet", "false") or "").strip().lower() == "true"
    keys = [text_of(o, "Key", "") or "" for o in root.findall("Object")]
    if len(keys) > MAX_DELETE:
        raise S3Error("MalformedXML", f"at most {MAX_DELETE} keys may be deleted at once", 400)
    results = await call.run(_delete_each, repo, keys)
    parts = []
    for key, failure in results:
        if failure is None:
            if not quiet:
                parts.append(group("Deleted", {"Key": key}))
        else:
            parts.append(
                group("Error", {"Key": key, "Code": failure.code, "Message": failure.message})
            )
    await call.xml(document("DeleteResult", parts))


def _delete_each(repo: Repository, keys: list[str]) -> list[tuple[str, S3Error | None]]:
    """Delete ``keys`` (``REF/PATH``), one staging transaction per branch; per-key results
    in input order (a branch refusing writes fails its keys only)."""
    by_ref: dict[str, list[str]] = {}
    for key in keys:
        ref, _, path = key.partition("/")
        by_ref.setdefault(ref, []).append(path)
    failed: dict[str, S3Error] = {}
    for ref, paths in by_ref.items():
        try:
            writable(repo, ref)
            repo.delete_many(ref, [p for p in paths if p])
        except Exception as exc:  # reported per key, as S3 does
            failed[ref] = from_graveler(exc)
    return [(key, failed.get(key.partition("/")[0])) for key in keys]
