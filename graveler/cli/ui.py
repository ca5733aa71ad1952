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
from typing import TYPE_CHECKING

from graveler.cli.output import Output
from graveler.errors import InvalidArgument

if TYPE_CHECKING:
    from graveler.client import Graveler


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
