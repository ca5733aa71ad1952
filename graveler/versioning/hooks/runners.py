"""Running one hook: a Python callable (registered, or named by an action file and allowed by
the operator) or a webhook (to a URL the action file names and the operator allows).

Trust model. Action files are data written by anyone who can write to a branch, so nothing
they name runs unless the operator allowed it in the client settings:

* ``hook_modules``: a Python hook from an action file runs only when its module is one of
  these or inside one of these packages (``mycompany.checks`` allows
  ``mycompany.checks.schema:validate``); names with a component starting with ``_`` never
  resolve. Only code already installed in the process can run; bytes from the lake never do.
* ``hook_urls``: a webhook goes only to a URL under one of these prefixes (same scheme and
  host, path below the prefix's path); ``*`` allows every URL. Webhooks follow no redirects
  and use no proxy.

Hooks registered in Python (``Graveler(hooks=...)``, entry points) are the operator's own code
and always run.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from graveler.core import validate
from graveler.core.hookevents import MAX_HOOK_OUTPUT, EventRecord, clip_output, webhook_payload
from graveler.core.model import Commit
from graveler.storage import entry as entries
from graveler.storage.entry import ObjectEntry
from graveler.views.context import RepoContext

#: Default webhook timeout (lakeFS: one minute).
DEFAULT_TIMEOUT = 60.0
#: Only environment variables with this prefix can be substituted into webhook properties
#: (``{{ ENV.GRAVELER_ACTIONS_TOKEN }}``), so an action file cannot read the process's secrets.
ENV_PREFIX = "GRAVELER_ACTIONS_"
_ENV_REF = re.compile(r"\{\{\s*ENV\.(\w+)\s*\}\}")
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?$")


class HookFailed(Exception):
    """A hook did not pass; the message says why and holds no secret. ``output`` is what the
    hook answered before it failed (a webhook's status and body), when it answered at all."""

    def __init__(self, message: str, output: str | None = None) -> None:
        super().__init__(message)
        self.output = output


@dataclass(frozen=True)
class HookPolicy:
    """What action files may run (see the module docstring)."""

    modules: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()

    def allows_module(self, module: str) -> bool:
        return any(module == m or module.startswith(m + ".") for m in self.modules)

    def allows_url(self, url: str) -> bool:
        if "*" in self.urls:
            return True
        target = urlsplit(url)
        for allowed in self.urls:
            prefix = urlsplit(allowed)
            base = prefix.path if prefix.path.endswith("/") else prefix.path + "/"
            same_host = (prefix.scheme, prefix.netloc.lower()) == (
                target.scheme,
                target.netloc.lower(),
            )
            if same_host and (target.path == prefix.path or target.path.startswith(base)):
                return True
        return False


@dataclass(frozen=True)
class HookContext:
    """What a Python hook is called with. ``commit`` is the commit the operation makes (for a
    ``pre-`` event not stored yet) or acts on; :meth:`stat`, :meth:`get` and
    :meth:`iter_objects` read that commit's tree, i.e. exactly what the operation would
    publish. ``params`` are the action file's ``properties.params`` (empty for hooks
    registered in Python). ``repo`` is the :class:`graveler.Repository` itself."""

    event: str
    repository: str
    commit: Commit
    run_id: str
    hook_id: str
    repo: RepoContext
    branch: str | None = None
    tag: str | None = None
    source_ref: str | None = None
    merge_source: str | None = None
    action: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def stat(self, path: str) -> ObjectEntry | None:
        """The entry at ``path`` in the commit's tree, or None."""
        rec = self.repo.committed.get(self.commit.metarange_id, validate.object_key(path))
        return None if rec is None else entries.decode(rec.key, rec.value)

    def get(self, path: str) -> bytes:
        """The bytes at ``path`` (verified); ObjectNotFound when absent."""
        from graveler.core.errors import ObjectNotFound
        from graveler.views.reads import read_entry

        entry = self.stat(path)
        if entry is None:
            raise ObjectNotFound(f"no object {path!r} in commit {self.commit.id[:12]}")
        return read_entry(self.repo, entry)

    def iter_objects(self, prefix: str = "") -> Iterator[ObjectEntry]:
        """Entries under ``prefix`` in the commit's tree, in path order."""
        pfx = validate.prefix_key(prefix)
        for rec in self.repo.committed.iterate(self.commit.metarange_id, prefix=pfx):
            yield entries.decode(rec.key, rec.value)


def context_for(
    repo: RepoContext,
    record: EventRecord,
    run_id: str,
    hook_id: str,
    action: str | None,
    params: Mapping[str, Any],
) -> HookContext:
    return HookContext(
        event=record.event.value,
        repository=repo.name,
        commit=record.commit,
        run_id=run_id,
        hook_id=hook_id,
        repo=repo,
        branch=record.branch,
        tag=record.tag,
        source_ref=record.source_ref,
        merge_source=record.merge_source,
        action=action,
        params=params,
    )


def resolve_callable(path: str, policy: HookPolicy) -> Any:
    """The callable ``module:attr`` names, if the policy allows its module; HookFailed
    otherwise (the module is not even imported then)."""
    module, _, attr = path.partition(":")
    parts = [*module.split("."), *attr.split(".")]
    if not module or not attr or any(not p or p.startswith("_") for p in parts):
        raise HookFailed(f"python hook {path!r} is not a 'package.module:function' name")
    if not policy.allows_module(module):
        raise HookFailed(
            f"python hook {path!r} is not allowed: the operator must list its module (or a "
            "package holding it) in the hook_modules setting"
        )
    try:
        target: Any = importlib.import_module(module)
        for name in attr.split("."):
            target = getattr(target, name)
    except (ImportError, AttributeError) as exc:
        raise HookFailed(f"python hook {path!r} cannot be loaded: {exc}") from None
    if not callable(target):
        raise HookFailed(f"python hook {path!r} is not callable")
    return target


def post_webhook(
    url: str, props: Mapping[str, Any], payload: Mapping[str, object], policy: HookPolicy
) -> str:
    """POST ``payload`` as JSON to ``url`` and return the hook's output: the request line
    (the URL without its query), the answer's status and its body (see :func:`clip_output`).
    HookFailed unless the answer is 2xx, carrying the same output."""
    shown = _public(url)
    if not policy.allows_url(url):
        raise HookFailed(
            f"webhook to {shown} is not allowed: the operator must list a prefix of it in the "
            "hook_urls setting"
        )
    query = _query(props.get("query_params"))
    target = _with_query(url, query)
    headers = {str(k): _substitute(v) for k, v in dict(props.get("headers") or {}).items()}
    headers["Content-Type"] = "application/json"
    body = json.dumps(payload).encode()
    import urllib.error
    import urllib.request  # here: most processes never post a webhook

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None  # a 3xx then surfaces as an HTTPError: not a pass

    request = urllib.request.Request(target, data=body, headers=headers, method="POST")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect())
    try:
        with opener.open(request, timeout=_timeout(props.get("timeout"))) as response:
            status, answer = response.status, response.read(MAX_HOOK_OUTPUT + 1)
    except urllib.error.HTTPError as exc:
        status, answer = exc.code, _read_quietly(exc)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise HookFailed(f"webhook to {shown} failed: {reason}") from None
    output = clip_output(
        f"request: POST {shown}\nresponse status: {status}\nresponse body:\n"
        + answer.decode("utf-8", "replace")
    )
    if not 200 <= status < 300:
        raise HookFailed(f"webhook to {shown} answered status {status}", output)
    return output


def _read_quietly(answer: Any) -> bytes:
    """Up to MAX_HOOK_OUTPUT + 1 bytes of an error answer's body; nothing when it breaks."""
    try:
        return bytes(answer.read(MAX_HOOK_OUTPUT + 1))
    except (OSError, ValueError):
        return b""


def payload_for(repo: str, record: EventRecord, action: str, hook_id: str) -> Mapping[str, object]:
    return webhook_payload(record, repo, action, hook_id, datetime.now(UTC))


def _public(url: str) -> str:
    """``url`` without query, fragment or credentials (those may hold secrets)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _query(raw: object) -> list[tuple[str, str]]:
    if raw is None:
        return []
    if not isinstance(raw, Mapping):
        raise HookFailed("webhook 'query_params' must be a mapping")
    pairs = []
    for key, value in raw.items():
        for v in value if isinstance(value, list) else [value]:
            pairs.append((str(key), _substitute(v)))
    return pairs


def _with_query(url: str, pairs: list[tuple[str, str]]) -> str:
    if not pairs:
        return url
    parts = urlsplit(url)
    query = "&".join(q for q in (parts.query, urlencode(pairs)) if q)
    return urlunsplit(parts._replace(query=query))


def _substitute(value: object) -> str:
    """``value`` as text with ``{{ ENV.NAME }}`` replaced (names under ENV_PREFIX only)."""

    def env(m: re.Match[str]) -> str:
        name = m.group(1)
        if not name.startswith(ENV_PREFIX):
            raise HookFailed(
                f"environment variable {name} is not available to hooks (only {ENV_PREFIX}* are)"
            )
        if name not in os.environ:
            raise HookFailed(f"missing environment variable {name}")
        return os.environ[name]

    return _ENV_REF.sub(env, str(value))


def _timeout(raw: object) -> float:
    """A webhook timeout: seconds, or a Go duration such as ``1m30s`` (lakeFS's format)."""
    if raw is None or raw == "":
        return DEFAULT_TIMEOUT
    if isinstance(raw, int | float) and not isinstance(raw, bool) and raw > 0:
        return float(raw)
    m = _DURATION.match(str(raw).strip())
    if m is None or not any(m.groups()):
        raise HookFailed(f"webhook timeout {raw!r} is not a duration such as 30s or 1m30s")
    h, mins, secs = m.groups()
    total = int(h or 0) * 3600 + int(mins or 0) * 60 + float(secs or 0)
    if total <= 0:
        raise HookFailed(f"webhook timeout {raw!r} must be positive")
    return total
