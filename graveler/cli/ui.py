"""``graveler ui [--host 127.0.0.1] [--port 8765] [--allow-writes]``: the web UI over the
same client configuration as every other command (``--home``, ``--database-url``, the
``GRAVELER_*`` / ``AWS_*`` environment).

The web stack (FastAPI, uvicorn, Jinja) is imported only when this command runs, so the
other commands start as fast without it; it comes with ``pip install graveler[ui]``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

from graveler.cli.output import Output
from graveler.client import Graveler
from graveler.errors import InvalidArgument

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def add_parser(sub: Any) -> None:
    p = sub.add_parser("ui", help="serve the web UI (read-only unless --allow-writes)")
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on ({DEFAULT_HOST})")
    p.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help=f"port ({DEFAULT_PORT}; 0: any free one)"
    )
    p.add_argument(
        "--allow-writes",
        action="store_true",
        help="offer merge, revert and delete-branch actions (default: read-only)",
    )


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a number from 0 to 65535, not {text!r}")
    return port


def ui(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    try:
        app_module = importlib.import_module("graveler.ui.app")
        server_module = importlib.import_module("graveler.ui.server")
        context = importlib.import_module("graveler.ui.context")
    except ImportError as exc:
        raise InvalidArgument(
            f"the web UI needs the 'ui' extra ({exc.name} is missing): pip install 'graveler[ui]'"
        ) from None
    options = context.UIOptions(allow_writes=a.allow_writes)
    hosts = server_module.allowed_hosts(a.host)
    app = app_module.create_app(gv, options, allowed_hosts=hosts)
    server = server_module.UIServer(app, a.host, a.port)
    mode = "read-write" if a.allow_writes else "read-only"
    if out.as_json:
        out.json({"url": server.url, "allow_writes": a.allow_writes})
    else:
        out.message(f"graveler UI ({mode}) on {server.url}  (Ctrl-C stops it)")
    sys.stdout.flush()  # the address, before serving (a pipe would hold it back)
    server.run()
    return 0


HANDLERS = {"ui": ui}
