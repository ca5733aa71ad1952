"""Client settings: the one description of where a graveler deployment lives.

Every adapter turns its own configuration into a :class:`ClientSettings` through the same two
doors, so a setting means the same thing everywhere:

* :meth:`ClientSettings.from_mapping` reads a flat mapping of strings: an Airflow connection's
  extra fields, Spark data source options, a Dagster resource's fields, fsspec storage options.
* :meth:`ClientSettings.from_env` reads the process environment.

Keys (blank values count as unset), with the environment variable each one falls back to:

* ``home`` (``GRAVELER_HOME``): cache, SQLite file and default local namespaces;
* ``database_url`` (``GRAVELER_DATABASE_URL``): SQLAlchemy URL of the refs database;
* ``cache_ram_bytes`` / ``cache_disk_bytes`` (``GRAVELER_CACHE_RAM_BYTES`` /
  ``GRAVELER_CACHE_DISK_BYTES``): tree cache budgets;
* ``s3_endpoint_url`` (``GRAVELER_S3_ENDPOINT_URL``): S3 endpoint (MinIO, moto, ...);
* ``s3_region`` (``AWS_REGION``, then ``AWS_DEFAULT_REGION``);
* ``aws_access_key_id``, ``aws_secret_access_key``, ``aws_session_token`` (``AWS_*`` of the
  same names; ``s3_access_key_id`` ... are accepted too): explicit S3 credentials, treated as
  secrets;
* ``store.<option>``: any S3 store option by its own name;
* ``hook_modules`` (``GRAVELER_HOOK_MODULES``), ``hook_urls`` (``GRAVELER_HOOK_URLS``):
  comma-separated lists of the Python modules and webhook URL prefixes that action files
  stored in repositories may use (:mod:`graveler.versioning.hooks.runners`); empty by default, so
  action files run nothing until the operator allows it.

``store.<option>`` names are those of :class:`graveler.storage.objectstore.s3.S3ObjectStore`
(``endpoint_url``, ``region``, ``access_key_id``, ``secret_access_key``, ``session_token``,
``max_attempts``, ``retry_mode``, ``connect_timeout``, ``read_timeout``, ``max_concurrency``).
Where no credentials are given, S3 falls back to boto3's own chain (profiles, instance roles).

``Graveler(settings=...)`` opens a client from them. Settings are plain, picklable data.
Their ``repr`` hides the database password and every credential;
:meth:`ClientSettings.to_mapping` is the only way to get secrets back out, for shipping
settings to another process (a Spark executor).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from graveler.core.errors import InvalidArgument

STORE_PREFIX = "store."
#: Store options whose values are secrets: never printed, logged or shown in a repr.
SECRET_STORE_OPTIONS = frozenset({"access_key_id", "secret_access_key", "session_token"})
#: Every S3 store option and how its text is converted.
STORE_OPTION_TYPES: Mapping[str, Callable[[str], Any]] = {
    "endpoint_url": str,
    "region": str,
    "access_key_id": str,
    "secret_access_key": str,
    "session_token": str,
    "max_attempts": int,
    "retry_mode": str,
    "connect_timeout": float,
    "read_timeout": float,
    "max_concurrency": int,
}
#: Flat keys (Airflow connection extras, Dagster fields) and the store option each one sets.
STORE_ALIASES: Mapping[str, str] = {
    "s3_endpoint_url": "endpoint_url",
    "s3_region": "region",
    "aws_access_key_id": "access_key_id",
    "aws_secret_access_key": "secret_access_key",
    "aws_session_token": "session_token",
    "s3_access_key_id": "access_key_id",
    "s3_secret_access_key": "secret_access_key",
    "s3_session_token": "session_token",
}
_ENV_FIELDS: Mapping[str, str] = {
    "home": "GRAVELER_HOME",
    "database_url": "GRAVELER_DATABASE_URL",
    "cache_ram_bytes": "GRAVELER_CACHE_RAM_BYTES",
    "cache_disk_bytes": "GRAVELER_CACHE_DISK_BYTES",
    "hook_modules": "GRAVELER_HOOK_MODULES",
    "hook_urls": "GRAVELER_HOOK_URLS",
}
_ENV_STORE: Mapping[str, tuple[str, ...]] = {
    "endpoint_url": ("GRAVELER_S3_ENDPOINT_URL",),
    "region": ("AWS_REGION", "AWS_DEFAULT_REGION"),
    "access_key_id": ("AWS_ACCESS_KEY_ID",),
    "secret_access_key": ("AWS_SECRET_ACCESS_KEY",),
    "session_token": ("AWS_SESSION_TOKEN",),
}
REDACTED = "***"
#: Query parameters whose values are secrets (``?password=...``), hidden by redact_url.
_SECRET_QUERY = re.compile(r"((?:password|passwd|pwd|secret|token)[^=&]*)=[^&]*", re.IGNORECASE)


@dataclass(frozen=True)
class ClientSettings:
    """Where refs, cache and objects live. ``None`` means "not set here": layering settings
    (:meth:`over`) fills such fields from the next source, and the client applies its
    defaults (``./.graveler``, SQLite in the home) to whatever stays unset."""

    home: str | None = None
    database_url: str | None = None
    cache_ram_bytes: int | None = None
    cache_disk_bytes: int | None = None
    store_options: Mapping[str, Any] = field(default_factory=dict)
    #: What action files may run (comma-separated text or a sequence; see
    # graveler.versioning.hooks).
    hook_modules: tuple[str, ...] | None = None
    hook_urls: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        # Store options are checked and typed once, whichever door they came through.
        object.__setattr__(self, "store_options", _store_options(self.store_options))
        object.__setattr__(self, "hook_modules", _names(self.hook_modules))
        object.__setattr__(self, "hook_urls", _names(self.hook_urls))

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> ClientSettings:
        """Settings from a flat mapping (keys in the module docstring, case-insensitive).
        Unrelated keys are ignored, so a whole option map can be passed. Raises
        InvalidArgument for a malformed number or an unknown ``store.`` option."""
        given = {str(k).lower(): v for k, v in values.items() if v is not None and v != ""}
        store: dict[str, Any] = {}
        for key, value in given.items():
            if key.startswith(STORE_PREFIX):
                store[key[len(STORE_PREFIX) :]] = value
            elif key in STORE_ALIASES:
                store[STORE_ALIASES[key]] = value
        return cls(
            home=_text(given.get("home")),
            database_url=_text(given.get("database_url")),
            cache_ram_bytes=_bytes(given, "cache_ram_bytes"),
            cache_disk_bytes=_bytes(given, "cache_disk_bytes"),
            store_options=store,
            hook_modules=_names(given.get("hook_modules")),
            hook_urls=_names(given.get("hook_urls")),
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ClientSettings:
        """Settings from the environment (``os.environ`` unless given). Raises
        InvalidArgument naming the variable that holds a malformed value."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {key: env.get(name) for key, name in _ENV_FIELDS.items()}
        for option, names in _ENV_STORE.items():
            values[STORE_PREFIX + option] = next((env[n] for n in names if env.get(n)), None)
        try:
            return cls.from_mapping(values)
        except InvalidArgument as exc:
            bad = next((n for k, n in _ENV_FIELDS.items() if str(exc).startswith(k)), None)
            raise InvalidArgument(f"{bad or 'the environment'}: {exc}") from None

    def over(self, fallback: ClientSettings) -> ClientSettings:
        """These settings, with unset fields taken from ``fallback``. Store options merge
        key by key, these winning; explicit credentials are taken whole from one side."""
        merged = {f.name: getattr(self, f.name) for f in fields(self)}
        for name, value in merged.items():
            if value is None:
                merged[name] = getattr(fallback, name)
        merged["store_options"] = _merge_store(self.store_options, fallback.store_options)
        return replace(self, **merged)

    def to_mapping(self) -> dict[str, str]:
        """The settings as flat ``from_mapping`` keys, secrets included: for shipping to
        another process. Never log the result."""
        out = {
            f.name: _flat(getattr(self, f.name))
            for f in fields(self)
            if f.name != "store_options" and getattr(self, f.name) is not None
        }
        out.update({STORE_PREFIX + k: str(v) for k, v in self.store_options.items()})
        return out

    def __repr__(self) -> str:
        shown = {
            "home": self.home,
            "database_url": redact_url(self.database_url) if self.database_url else None,
            "cache_ram_bytes": self.cache_ram_bytes,
            "cache_disk_bytes": self.cache_disk_bytes,
            "store_options": redact_options(self.store_options),
            "hook_modules": self.hook_modules,
            "hook_urls": self.hook_urls,
        }
        body = ", ".join(f"{k}={v!r}" for k, v in shown.items() if v not in (None, {}))
        return f"ClientSettings({body})"

    __str__ = __repr__


def redact_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with every secret value replaced by ``***``."""
    return {k: REDACTED if k in SECRET_STORE_OPTIONS else v for k, v in options.items()}


def redact_url(url: str) -> str:
    """``url`` fit for a message, a log line or a repr: the password between ``scheme://user:``
    and the last ``@`` hidden (so an unencoded ``@`` or ``/`` in it is hidden too), and
    ``password=``-style query values. Text only, for any URL; the refs database renders its
    own URLs with SQLAlchemy's password hiding (:func:`graveler.storage.refs.db.redact_url`), which
    agrees with this."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if sep and at and ":" in userinfo:
        url = f"{scheme}://{userinfo.split(':', 1)[0]}:{REDACTED}@{host}"
    return _SECRET_QUERY.sub(rf"\1={REDACTED}", url)


def _store_options(raw: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in raw.items():
        convert = STORE_OPTION_TYPES.get(name)
        if convert is None:
            known = ", ".join(sorted(STORE_OPTION_TYPES))
            raise InvalidArgument(f"unknown store option {name!r}; known options: {known}")
        try:
            out[name] = value if not isinstance(value, str) else convert(value.strip())
        except ValueError:
            shown = REDACTED if name in SECRET_STORE_OPTIONS else repr(value)
            raise InvalidArgument(f"store option {name!r} has a malformed value {shown}") from None
    return out


def _merge_store(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """``first`` over ``second``; the credential set comes from one side only, so a key id
    from one source is never paired with a secret from another."""
    if any(k in first for k in SECRET_STORE_OPTIONS):
        second = {k: v for k, v in second.items() if k not in SECRET_STORE_OPTIONS}
    return {**second, **first}


def _names(value: Any) -> tuple[str, ...] | None:
    """A comma-separated list (or a sequence) of names, blanks dropped; None when unset."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    return tuple(i.strip() for i in items if i.strip())


def _flat(value: Any) -> str:
    return ",".join(value) if isinstance(value, tuple) else str(value)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _bytes(values: Mapping[str, Any], key: str) -> int | None:
    raw = values.get(key)
    if raw is None:
        return None
    try:
        number = int(str(raw).strip())
    except ValueError:
        raise InvalidArgument(f"{key} must be an integer number of bytes, got {raw!r}") from None
    if number < 0:
        raise InvalidArgument(f"{key} must not be negative, got {number}")
    return number
