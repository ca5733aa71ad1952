"""How ``graveler serve`` is set up: where it listens and what it offers. Plain data, passed
to worker processes as JSON in an environment variable."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from graveler.core.config import ClientSettings

CONFIG_ENV = "GRAVELER_SERVE_CONFIG"


@dataclass(frozen=True)
class ServerConfig:
    """``host``/``port``: where to listen; ``workers``: uvicorn worker processes;
    ``region``: the S3 region the gateway reports; ``domain``: enables virtual-host style
    S3 addressing (``REPO.DOMAIN``); ``namespace_root``: where S3 CreateBucket puts new
    repositories (default: the home's data directory); ``ui_writes``: the web UI offers
    merge, revert and delete to signed-in keys that may write; ``verify_reads``: the gateway
    hashes every streamed whole-object GET and breaks it off before its last byte when the
    bytes are not the recorded SHA-256 (default: clients that ask for checksums get the
    SHA-256 to check themselves, as S3 does); ``body_timeout``: seconds an S3 request body
    may stall before the gateway answers RequestTimeout; ``access_log``: one line per
    request on stderr, ``"text"`` or ``"json"`` (None: off)."""

    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    region: str = "us-east-1"
    domain: str | None = None
    namespace_root: str | None = None
    ui_writes: bool = True
    verify_reads: bool = False
    body_timeout: float = 20.0
    access_log: str | None = None
    home: str | None = None
    database_url: str | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServerConfig:
        return cls(**json.loads(text))

    def client_settings(self) -> ClientSettings:
        """The client settings of a worker: these over the environment's."""
        return ClientSettings(home=self.home, database_url=self.database_url).over(
            ClientSettings.from_env()
        )
