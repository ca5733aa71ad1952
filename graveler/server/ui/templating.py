"""The Jinja environment of the UI: templates from the package, autoescaping always on.

Every value a template prints (keys, messages, metadata, branch names) is escaped by Jinja;
no template marks user text ``|safe``. URLs from commit metadata become links only through
:func:`http_url`, which passes ``http``/``https`` URLs and nothing else (no ``javascript:``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, PackageLoader, StrictUndefined

#: Autoescaping is what keeps user text inert in HTML; tests/ui check it cannot be off.
AUTOESCAPE = True
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")
#: Commit metadata keys whose values are links, lakeFS's convention (``...url[url:ui]``).
URL_KEY_SUFFIX = "[url:ui]"


def short(commit_id: str) -> str:
    """The first 12 characters of a commit ID, as the CLI prints them."""
    return commit_id[:12]


def size(value: int | None) -> str:
    """A byte count for people: ``1.5 MiB``."""
    if value is None:
        return ""
    amount = float(value)
    for unit in _UNITS:
        if amount < 1024 or unit == _UNITS[-1]:
            return f"{int(amount)} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    raise AssertionError("unreachable")


def when(value: datetime | None) -> str:
    """A timestamp in UTC, to the second."""
    return "" if value is None else f"{value:%Y-%m-%d %H:%M:%S} UTC"


def http_url(value: object) -> str | None:
    """``value`` when it is an absolute http(s) URL with a host, else None."""
    if not isinstance(value, str):
        return None
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return None
    ok = parts.scheme in ("http", "https") and bool(parts.netloc)
    return value.strip() if ok else None


def metadata_link(key: str, value: str) -> str | None:
    """The link a metadata entry stands for: values of ``...[url:ui]`` keys that are http(s)
    URLs."""
    return http_url(value) if key.endswith(URL_KEY_SUFFIX) else None


def basename(path: str) -> str:
    """The last segment of a path or prefix (``a/b/`` -> ``b/``)."""
    trimmed = path[:-1] if path.endswith("/") else path
    name = trimmed.rsplit("/", 1)[-1]
    return name + "/" if path.endswith("/") else name


def make_environment() -> Environment:
    env = Environment(
        loader=PackageLoader("graveler.server.ui", "templates"),
        autoescape=AUTOESCAPE,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    filters: dict[str, Any] = {
        "short": short,
        "size": size,
        "when": when,
        "basename": basename,
    }
    env.filters.update(filters)
    env.globals.update(metadata_link=metadata_link, http_url=http_url)
    return env
