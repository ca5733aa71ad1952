"""``graveler ui [--host 127.0.0.1] [--port 8765] [--allow-writes]``: the web UI over the
same client configuration as every other command (``--home``, ``--database-url``, the
``GRAVELER_*`` / ``AWS_*`` environment), behind the same sign-in as ``graveler serve``:
anonymous visitors read on loopback only, and writes (``--allow-writes``) need a signed-in
access key that may write.

The web stack (FastAPI, uvicorn, Jinja) is imported only when this command runs, so the
other commands start as fast without it; it comes with ``pip install graveler[ui]``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import TYPE_CHECKING

from graveler.cli.output import Output
from graveler.core.errors import InvalidArgument

if TYPE_CHECKING:
    from graveler.client import Graveler


def ui(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    try:
        server_module = importlib.import_module("graveler.server.listen")
        session = importlib.import_module("graveler.server.ui.signin")
        server_app = importlib.import_module("graveler.server.app")
        config_module = importlib.import_module("graveler.server.config")
    except ImportError as exc:
        raise InvalidArgument(
            f"the web UI needs the 'ui' extra ({exc.name} is missing): pip install 'graveler[ui]'"
        ) from None
    config = config_module.ServerConfig(host=a.host, port=a.port, ui_writes=a.allow_writes)
    app = session.signed_in_ui(gv, server_app.authenticator_for(gv), config)
    server = server_module.UIServer(app, a.host, a.port)
    mode = "read-write" if a.allow_writes else "read-only"
    if out.as_json:
        out.json({"url": server.url, "allow_writes": a.allow_writes})
    else:
        out.message(f"graveler UI ({mode}) on {server.url}  (Ctrl-C stops it)")
    sys.stdout.flush()  # the address, before serving (a pipe would hold it back)
    server.run()
    return 0
