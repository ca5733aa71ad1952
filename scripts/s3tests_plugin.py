"""A pytest plugin that runs ceph's s3-tests (github.com/ceph/s3-tests) against the gateway.

The suite writes plain keys (``foo``), while the gateway's keys are ``REF/PATH``. Every S3
client the suite makes gets two botocore hooks: keys, prefixes, markers, copy sources and
batch deletes sent gain ``main/``, and the same fields answered lose it. The suite's
teardown deletes its buckets, which the gateway does not offer (repositories are deleted with
``graveler repo delete``), so it is turned off. See docs/s3-gateway.md ("ceph's s3-tests")
for how to run it and the last results.
"""

from __future__ import annotations

from typing import Any

import botocore.session

BRANCH = "main/"
LISTINGS = {"ListObjects", "ListObjectsV2", "ListMultipartUploads", "ListObjectVersions"}
MARKERS = ("StartAfter", "Marker", "KeyMarker")
ANSWERED = {"Key", "StartAfter", "Marker", "NextMarker", "KeyMarker", "NextKeyMarker", "Prefix"}


def _add_branch(params: dict[str, Any], model: Any, **_: Any) -> None:
    if isinstance(params.get("Key"), str):
        params["Key"] = BRANCH + params["Key"]
    if model.name in LISTINGS:
        params["Prefix"] = BRANCH + (params.get("Prefix") or "")
        for name in MARKERS:
            if params.get(name):
                params[name] = BRANCH + params[name]
    source = params.get("CopySource")
    if isinstance(source, str):
        bucket, _, key = source.lstrip("/").partition("/")
        params["CopySource"] = f"{bucket}/{BRANCH}{key}"
    elif isinstance(source, dict) and "Key" in source:
        params["CopySource"] = {**source, "Key": BRANCH + source["Key"]}
    deleted = params.get("Delete")
    if isinstance(deleted, dict):
        for item in deleted.get("Objects", []):
            if "Key" in item:
                item["Key"] = BRANCH + item["Key"]


def _drop_branch(node: Any) -> None:
    if isinstance(node, dict):
        for name, value in node.items():
            if name in ANSWERED and isinstance(value, str) and value.startswith(BRANCH):
                node[name] = value[len(BRANCH) :]
            else:
                _drop_branch(value)
    elif isinstance(node, list):
        for value in node:
            _drop_branch(value)


def _answered(parsed: Any, **_: Any) -> None:
    _drop_branch(parsed)


_create_client = botocore.session.Session.create_client


def _client_with_branch(self: botocore.session.Session, *args: Any, **kwargs: Any) -> Any:
    client = _create_client(self, *args, **kwargs)
    if (args[:1] or [kwargs.get("service_name")])[0] == "s3":
        client.meta.events.register("before-parameter-build.s3", _add_branch)
        client.meta.events.register("after-call.s3", _answered)
    return client


botocore.session.Session.create_client = _client_with_branch  # type: ignore[method-assign]


def pytest_configure(config: Any) -> None:
    import s3tests.functional as functional  # the suite's package, on sys.path when it runs

    functional.nuke_prefixed_buckets = lambda *args, **kwargs: None
