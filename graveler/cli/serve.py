"""``graveler serve`` (the web UI, the S3 gateway, the Iceberg catalog and lakeFS's REST API
on one port) and ``graveler credentials`` (the access keys they accept).

The server stack (uvicorn, FastAPI, cryptography) is imported only when these commands run;
it comes with ``pip install 'graveler[server]'``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from graveler.cli.output import Output
from graveler.core import uri as uris
from graveler.core.errors import InvalidArgument

if TYPE_CHECKING:
    from graveler.client import Graveler


def _server(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise InvalidArgument(
            f"graveler serve needs the 'server' extra ({exc.name} is missing): "
            "pip install 'graveler[server]'"
        ) from None


def serve(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    config_module = _server("graveler.server.config")
    run = _server("graveler.server.run")
    ui_server = _server("graveler.server.listen")
    if a.workers < 1:
        raise InvalidArgument("--workers must be at least 1")
    if not a.body_timeout > 0:
        raise InvalidArgument("--body-timeout must be a positive number of seconds")
    config = config_module.ServerConfig(
        host=a.host,
        port=a.port,
        workers=a.workers,
        region=a.region,
        domain=a.domain,
        namespace_root=a.namespace_root,
        ui_writes=not a.read_only_ui,
        verify_reads=a.verify_reads,
        body_timeout=a.body_timeout,
        access_log=_access_log(a, out, ui_server.is_loopback(a.host)),
        home=str(gv.home),
        database_url=gv.database_url,
    )
    run.check(config)
    gv.close()  # workers open their own clients
    sock = ui_server.bind(config.host, config.port)
    config = replace(config, port=sock.getsockname()[1])
    _banner(out, config, run.urls(config, config.port), run.addresses(config.host))
    sys.stdout.flush()
    run.serve(config, sock)
    return 0


def _access_log(a: argparse.Namespace, out: Output, loopback: bool) -> str | None:
    """The access log's format: as asked, else off on a loopback address and on beyond it
    (JSON under ``--json``, else text)."""
    chosen = a.access_log or ("off" if loopback else "on")
    if chosen == "off":
        return None
    if chosen == "on":
        return "json" if out.as_json else "text"
    return str(chosen)


def _banner(out: Output, config: Any, urls: dict[str, str], addresses: list[str]) -> None:
    if out.as_json:
        out.json({**urls, "workers": config.workers, "addresses": addresses})
        return
    workers = f"{config.workers} worker{'s' if config.workers > 1 else ''}"
    out.message(f"graveler serve ({workers}), Ctrl-C stops it")
    out.message(f"  web UI                {urls['ui']}")
    out.message(f"  S3 endpoint           {urls['s3']}")
    out.message(f"  Iceberg REST catalog  {urls['iceberg']}")
    out.message(f"  lakeFS API            {urls['lakefs']}")
    for address in addresses:
        host = f"[{address}]" if ":" in address else address
        out.message(f"  from other machines   http://{host}:{config.port}/")


def credentials_create(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    creds = _credentials(gv)
    repos = tuple(uris.parse(r).repository if "://" in r else r for r in a.repository) or None
    scopes = {
        "repositories": repos,
        "read_only": a.read_only,
        "admin": a.admin,
        "description": a.description,
    }
    if a.access_key_id is not None or a.secret_access_key is not None:
        return _credentials_import(creds, a, scopes, out)
    new = creds.create(**scopes)
    if out.as_json:
        out.json({"access_key_id": new.access_key_id, "secret_access_key": new.secret_access_key})
    else:
        out.message(f"access_key_id:     {new.access_key_id}")
        out.message(f"secret_access_key: {new.secret_access_key}")
        out.message("The secret is shown only now: keep it somewhere safe.")
    return 0


def _credentials_import(
    creds: Any, a: argparse.Namespace, scopes: dict[str, Any], out: Output
) -> int:
    """``credentials create --access-key-id ID --secret-access-key SECRET``: stores a key pair
    made elsewhere; prints its ID, never its secret."""
    if a.access_key_id is None or a.secret_access_key is None:
        raise InvalidArgument("--access-key-id and --secret-access-key go together")
    secret = a.secret_access_key
    if secret == "-":
        secret = sys.stdin.readline().rstrip("\r\n")
    new = creds.import_key(a.access_key_id, secret, **scopes)
    if out.as_json:
        out.json({"access_key_id": new.access_key_id, "imported": True})
    else:
        out.message(f"access_key_id: {new.access_key_id} (imported; its secret is the one given)")
    return 0


def credentials_list(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    keys = gv.access_keys.list()
    docs = [_key_doc(k) for k in keys]
    if out.as_json:
        out.json(docs)
    else:
        out.table(
            None,
            ["ACCESS KEY ID", "REPOSITORIES", "ACCESS", "CREATED", "DESCRIPTION"],
            [
                [
                    k.access_key_id,
                    ",".join(k.repositories or ["*"]),
                    d["access"],
                    f"{k.created:%Y-%m-%d %H:%M}",
                    d["description"],
                ]
                for k, d in zip(keys, docs, strict=True)
            ],
            whole=["ACCESS KEY ID"],  # copied to delete a key
        )
    return 0


def credentials_delete(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    gv.access_keys.delete(a.access_key_id)
    if out.as_json:
        out.json({"deleted": a.access_key_id})
    else:
        out.message(f"Access key {a.access_key_id} deleted")
    return 0


def _credentials(gv: Graveler) -> Any:
    from pathlib import Path

    creds = _server("graveler.server.credentials")
    key = creds.server_key(Path(gv.home), gv.database_url)
    return creds.Credentials(gv.access_keys, key)


def _key_doc(key: Any) -> dict[str, Any]:
    access = "admin" if key.admin else "read-only" if key.read_only else "read-write"
    return {
        "access_key_id": key.access_key_id,
        "repositories": list(key.repositories) if key.repositories is not None else None,
        "access": access,
        "created": key.created.isoformat(),
        "description": key.description,
    }
