"""Keeping secrets out of messages, log lines and reprs.

Two kinds of secret pass through graveler: the password of the refs database URL and the
credentials among object store options (``secret_access_key``, ``session_token``). Anything
that shows a URL or options to a person goes through :func:`redact_url` or
:func:`redact_options` first; ``tests/security`` triggers every known error path with a
sentinel password and checks that it never appears.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from graveler.refs.db import redact_url

__all__ = ["REDACTED", "is_secret_option", "redact_options", "redact_url"]

REDACTED = "***"
_SECRET_NAME = re.compile(r"secret|password|passwd|token|credential", re.IGNORECASE)


def is_secret_option(name: str) -> bool:
    """Whether an option of this name holds a credential (its value is never shown)."""
    return bool(_SECRET_NAME.search(str(name)))


def redact_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``options`` with credential values replaced by ``***`` and URL values shown
    with their password hidden."""
    shown: dict[str, Any] = {}
    for name, value in options.items():
        if is_secret_option(name):
            shown[name] = REDACTED
        elif isinstance(value, str) and "://" in value:
            shown[name] = redact_url(value)
        else:
            shown[name] = value
    return shown
