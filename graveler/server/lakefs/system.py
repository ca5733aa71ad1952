"""Set-up, health, configuration and authentication: what a client asks before anything else.

* ``config`` reports the lakeFS API version this server implements (see :data:`VERSION`),
  the storage configuration (:mod:`.storage`) and empty UI settings;
* ``healthcheck`` is 204; ``setup_lakefs`` says the installation is set up (graveler's keys
  are made with ``graveler credentials create``), and refusing to set it up again is 409;
* ``auth/login`` trades a key and its secret for a token (also set as lakeFS's session
  cookie); ``user`` describes the caller: each access key is its own user, named by its ID.

User, group, policy and credential management is lakeFS's auth service, which its
open-source build leaves to an external service: those operations answer 501 here, except
for reading the caller's own user and key. Creating a user is a 409 and deleting another
user a 404 (``user not found``), as lakeFS answers them without that service, where its one
user already exists: here every access key is its own user.
"""

from __future__ import annotations

import time
from typing import Any

from graveler.core.errors import AuthenticationFailed, NotFound
from graveler.core.model import AccessKey
from graveler.server.auth import LAKEFS
from graveler.server.lakefs import encode
from graveler.server.lakefs.caller import COOKIE, TOKEN_SECONDS, login_cookie
from graveler.server.lakefs.errors import ApiError, bad_request, not_found, not_implemented
from graveler.server.lakefs.http import Call, Reply, json_reply, no_content
from graveler.server.lakefs.routing import Access, Body, Route, route

#: The lakeFS API version this server implements (lakeFS's OpenAPI document, release line
#: 1.84). Clients read it as plain MAJOR.MINOR.PATCH and turn features on by it, so it names
#: the API whose operations and shapes are served here, not graveler's own version.
VERSION = "1.84.0"
#: The edition whose API that is: lakeFS's open-source one. lakectl 1.84 prints a warning on
#: every command when a server's context is anything but "lakeFS" (it takes it for lakeFS
#: Enterprise), so graveler answers lakeFS's own value.
VERSION_CONTEXT = "lakeFS"
ALREADY_SET_UP = "lakeFS already initialized"
MANAGE_KEYS = "access keys are managed with 'graveler credentials create' and 'delete'"


def get_config(call: Call) -> Reply:
    return json_reply(
        {
            "version_config": _version(),
            "storage_config": call.service.storage.config(),
            "storage_config_list": call.service.storage.config_list(),
            "ui_config": {"custom_viewers": []},
            "capabilities_config": {},
        }
    )


def get_version(call: Call) -> Reply:
    return json_reply(_version())


def get_storage_config(call: Call) -> Reply:
    return json_reply(call.service.storage.config())


def _version() -> dict[str, Any]:
    return {"version": VERSION, "version_context": VERSION_CONTEXT, "upgrade_recommended": False}


def health_check(call: Call) -> Reply:
    return no_content()


def post_stats_events(call: Call) -> Reply:
    """lakectl reports each command it runs (``class: lakectl``). graveler keeps no usage
    statistics: well-formed events are accepted and dropped, as lakeFS does with its
    statistics turned off; malformed ones are a 400, as in lakeFS."""
    events = call.json().get("events")
    if not isinstance(events, list):
        raise bad_request("events must be a list")
    for event in events:
        if not isinstance(event, dict):
            raise bad_request("invalid value: an event is an object")
        for field in ("class", "name"):
            if not isinstance(event.get(field), str) or not event[field]:
                raise bad_request(f"invalid value: {field} is required")
        count = event.get("count")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise bad_request("invalid value: count must be a non-negative integer")
    return no_content()


def get_setup_state(call: Call) -> Reply:
    return json_reply(
        {
            "state": "initialized",
            "comm_prefs_missing": False,
            "login_config": {
                "RBAC": "none",
                "login_url": "",
                "login_url_method": "none",
                "login_cookie_names": [COOKIE],
                "logout_url": "/logout",
            },
        }
    )


def setup(call: Call) -> Reply:
    doc = call.json()
    if not isinstance(doc.get("username"), str) or not doc["username"]:
        raise bad_request("empty user display name")
    raise ApiError(409, ALREADY_SET_UP)


def get_auth_capabilities(call: Call) -> Reply:
    return json_reply({"invite_user": False, "forgot_password": False})


def login(call: Call) -> Reply:
    doc = call.json()
    key, secret = doc.get("access_key_id"), doc.get("secret_access_key")
    if not isinstance(key, str) or not isinstance(secret, str):
        raise bad_request("access_key_id and secret_access_key are required")
    auth = call.service.auth
    principal = auth.by_secret(key, secret)
    token = auth.issue_token(principal, LAKEFS, TOKEN_SECONDS)
    expires = int(time.time()) + TOKEN_SECONDS
    return json_reply(
        {"token": token, "token_expiration": expires},
        headers=[("Set-Cookie", login_cookie(token))],
    )


def get_current_user(call: Call) -> Reply:
    return json_reply({"user": _user(_own_key(call))})


def list_users(call: Call) -> Reply:
    return json_reply(encode.page([_user(_own_key(call))], None))


def get_user(call: Call) -> Reply:
    return json_reply(_user(_own_key(call, call.params["userId"])))


def get_credentials(call: Call) -> Reply:
    key = _own_key(call, call.params["userId"])
    if call.params["accessKeyId"] != key.access_key_id:
        raise not_found(f"no access key {call.params['accessKeyId']!r:.60} of this user")
    return json_reply(_credentials(key))


def list_user_credentials(call: Call) -> Reply:
    key = _own_key(call, call.params["userId"])
    return json_reply(encode.page([_credentials(key)], None))


def create_user(call: Call) -> Reply:
    """lakeFS without an external auth service keeps one user and refuses a second: 409."""
    doc = call.json()
    if not isinstance(doc.get("id"), str) or not doc["id"]:
        raise bad_request("id is required")
    raise ApiError(409, "Already exists")


def delete_user(call: Call) -> Reply:
    """404 for any user but the caller; deleting the caller's own key is ``graveler
    credentials delete`` (501 here)."""
    _own_key(call, call.params["userId"])
    raise not_implemented(f"deleting an access key ({MANAGE_KEYS})")


def unsupported(call: Call) -> Reply:
    raise not_implemented(f"{call.method} of users, groups and policies ({MANAGE_KEYS})")


def _own_key(call: Call, user_id: str | None = None) -> AccessKey:
    """The caller's stored key; 404 for any other user (each key is its own user)."""
    key_id = call.who.access_key_id
    if user_id is not None and user_id != key_id:
        raise not_found("user not found")  # lakeFS's words: each access key is its own user
    try:
        return call.service.client.access_keys.get(key_id)
    except NotFound:
        raise AuthenticationFailed("the access key was deleted") from None


def _user(key: AccessKey) -> dict[str, Any]:
    return {
        "id": key.access_key_id,
        "creation_date": encode.seconds(key.created),
        "friendly_name": key.description or key.access_key_id,
    }


def _credentials(key: AccessKey) -> dict[str, Any]:
    return {"access_key_id": key.access_key_id, "creation_date": encode.seconds(key.created)}


_UNSUPPORTED = [
    ("GET", "/auth/groups"),
    ("POST", "/auth/groups"),
    ("GET", "/auth/groups/{groupId}"),
    ("DELETE", "/auth/groups/{groupId}"),
    ("GET", "/auth/policies"),
    ("POST", "/auth/policies"),
    ("GET", "/auth/policies/{policyId}"),
    ("PUT", "/auth/policies/{policyId}"),
    ("DELETE", "/auth/policies/{policyId}"),
    ("GET", "/auth/groups/{groupId}/members"),
    ("PUT", "/auth/groups/{groupId}/members/{userId}"),
    ("DELETE", "/auth/groups/{groupId}/members/{userId}"),
    ("POST", "/auth/users/{userId}/credentials"),
    ("DELETE", "/auth/users/{userId}/credentials/{accessKeyId}"),
    ("GET", "/auth/users/{userId}/groups"),
    ("GET", "/auth/users/{userId}/policies"),
    ("PUT", "/auth/users/{userId}/policies/{policyId}"),
    ("DELETE", "/auth/users/{userId}/policies/{policyId}"),
    ("POST", "/auth/users/{userId}/external/principals"),
    ("DELETE", "/auth/users/{userId}/external/principals"),
    ("GET", "/auth/users/{userId}/external/principals/ls"),
    ("GET", "/auth/external/principals"),
    ("POST", "/auth/external/principal/login"),
    ("GET", "/auth/groups/{groupId}/policies"),
    ("PUT", "/auth/groups/{groupId}/policies/{policyId}"),
    ("DELETE", "/auth/groups/{groupId}/policies/{policyId}"),
    ("POST", "/auth/groups/{groupId}/acl"),
    ("GET", "/auth/groups/{groupId}/acl"),
    ("POST", "/sts/login"),
]

ROUTES: list[Route] = [
    route("GET", "/healthcheck", health_check, Access.PUBLIC),
    route("GET", "/config", get_config, Access.USER),
    route("GET", "/config/version", get_version, Access.USER),
    route("GET", "/config/storage", get_storage_config, Access.USER),
    route("GET", "/setup_lakefs", get_setup_state, Access.PUBLIC),
    route("POST", "/setup_lakefs", setup, Access.PUBLIC, Body.JSON),
    route("GET", "/auth/capabilities", get_auth_capabilities, Access.PUBLIC),
    route("POST", "/auth/login", login, Access.PUBLIC, Body.JSON),
    route("GET", "/user", get_current_user, Access.USER),
    route("POST", "/statistics", post_stats_events, Access.USER, Body.JSON),
    route("GET", "/auth/users", list_users, Access.USER),
    route("GET", "/auth/users/{userId}", get_user, Access.USER),
    route("POST", "/auth/users", create_user, Access.USER, Body.JSON),
    route("DELETE", "/auth/users/{userId}", delete_user, Access.USER),
    route("GET", "/auth/users/{userId}/credentials", list_user_credentials, Access.USER),
    route("GET", "/auth/users/{userId}/credentials/{accessKeyId}", get_credentials, Access.USER),
    *[route(m, p, unsupported, Access.USER, Body.JSON) for m, p in _UNSUPPORTED],
]
