"""Bucket and object ACLs: the one access control list graveler has.

Access is given by access keys (repositories, read-only, admin), not by ACLs, and every key
acts for one owner (:data:`~graveler.server.s3.listing.OWNER`, the owner listings name). So
every bucket and object has the same policy, the owner with ``FULL_CONTROL``: GetBucketAcl
and GetObjectAcl answer it, and PutBucketAcl and PutObjectAcl accept exactly it (the canned
``private`` ACL, or grants of ``FULL_CONTROL`` to the owner) from a key that may write,
changing nothing. Any other ACL is NotImplemented, so no client believes it granted or
withheld access that keys decide.
"""

from __future__ import annotations

from graveler.server.s3.call import Call
from graveler.server.s3.errors import S3Error, no_such_key
from graveler.server.s3.listing import OWNER
from graveler.server.s3.object_reads import entry_at
from graveler.server.s3.xml import MAX_REQUEST_XML, document, element, group, parse, text_of

_XSI = "http://www.w3.org/2001/XMLSchema-instance"
#: Canned ACLs that mean "the owner alone".
OWNER_ONLY = ("private", "bucket-owner-full-control")
REFUSED = (
    "graveler gives access by access keys: the only ACL is the owner's FULL_CONTROL "
    "(ID {id}); it may be set, no other"
)


def policy_document() -> bytes:
    grantee = (
        f'<Grantee xmlns:xsi="{_XSI}" xsi:type="CanonicalUser">'
        f"{element('ID', OWNER['ID'])}{element('DisplayName', OWNER['DisplayName'])}</Grantee>"
    )
    grant = group("Grant", [grantee, element("Permission", "FULL_CONTROL")])
    return document(
        "AccessControlPolicy", [group("Owner", OWNER), group("AccessControlList", [grant])]
    )


async def bucket_acl(call: Call) -> None:
    await call.repository()
    await call.xml(policy_document())


async def object_acl(call: Call) -> None:
    await _object(call, write=False)
    await call.xml(policy_document())


async def put_bucket_acl(call: Call) -> None:
    await call.repository(write=True)
    await _check_policy(call)
    await call.respond(200)


async def put_object_acl(call: Call) -> None:
    await _object(call, write=True)
    await _check_policy(call)
    await call.respond(200)


async def _object(call: Call, *, write: bool) -> None:
    repo = await call.repository(write=write)
    request = call.request
    if not request.path:
        raise no_such_key(request.key or "")
    await call.run(entry_at, repo, request.ref, request.path, request.key or "")


async def _check_policy(call: Call) -> None:
    """NotImplemented unless the ACL asked for is the owner's FULL_CONTROL alone."""
    request = call.request
    body = await call.body().read_all(MAX_REQUEST_XML)
    canned = request.header("x-amz-acl")
    grants = [
        (name[len("x-amz-grant-") :], value)
        for name, value in request.headers
        if name.startswith(b"x-amz-grant-")
    ]
    if canned is not None and canned not in OWNER_ONLY:
        raise _refused()
    for permission, value in grants:
        if permission != b"full-control" or value.replace(b" ", b"") != b'id="%s"' % (
            OWNER["ID"].encode()
        ):
            raise _refused()
    if body.strip():
        _check_document(body)


def _check_document(body: bytes) -> None:
    root = parse(body)
    owner = root.find("Owner")
    if owner is not None and text_of(owner, "ID", OWNER["ID"]) != OWNER["ID"]:
        raise _refused()
    for grant in root.iter("Grant"):
        grantee = grant.find("Grantee")
        who = text_of(grantee, "ID") if grantee is not None else None
        if who != OWNER["ID"] or text_of(grant, "Permission") != "FULL_CONTROL":
            raise _refused()


def _refused() -> S3Error:
    return S3Error("NotImplemented", REFUSED.format(id=OWNER["ID"]), 501)
