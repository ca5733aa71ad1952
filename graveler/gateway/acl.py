"""GetBucketAcl and GetObjectAcl: the one access control list graveler has.

Access is given by access keys (repositories, read-only, admin), not by ACLs, so every
bucket and object answers the same policy: its owner (the owner listings name) with
``FULL_CONTROL``. Changing an ACL is NotImplemented (:mod:`graveler.gateway.routes`).
"""

from __future__ import annotations

from graveler.gateway.call import Call
from graveler.gateway.errors import no_such_key
from graveler.gateway.listing import OWNER
from graveler.gateway.object_reads import entry_at
from graveler.gateway.xml import document, element, group

_XSI = "http://www.w3.org/2001/XMLSchema-instance"


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
    repo = await call.repository()
    request = call.request
    if not request.path:
        raise no_such_key(request.key or "")
    await call.run(entry_at, repo, request.ref, request.path, request.key or "")
    await call.xml(policy_document())
