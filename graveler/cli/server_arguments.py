"""The arguments of the commands that serve: ``ui``, ``serve`` and ``credentials`` (their code,
in :mod:`graveler.cli.ui` and :mod:`graveler.cli.serve`, imports the web and server stacks)."""

from __future__ import annotations

import argparse
from typing import Any

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def ui_parser(sub: Any) -> None:
    """``graveler ui`` (its code, in :mod:`graveler.cli.ui`, imports the web stack)."""
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


SERVE_PORT = 8000


def serve_parser(sub: Any) -> None:
    """``graveler serve`` (its code, in :mod:`graveler.cli.serve`, imports the server stack)."""
    p = sub.add_parser(
        "serve", help="serve the web UI, the S3 gateway and the Iceberg REST catalog on one port"
    )
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on ({DEFAULT_HOST})")
    p.add_argument(
        "--port", type=_port, default=SERVE_PORT, help=f"port ({SERVE_PORT}; 0: any free one)"
    )
    p.add_argument("--workers", type=int, default=1, help="worker processes (1)")
    p.add_argument("--region", default="us-east-1", help="the S3 region reported (us-east-1)")
    p.add_argument("--domain", default=None, help="enable virtual-host S3 addressing: REPO.DOMAIN")
    p.add_argument(
        "--namespace-root",
        default=None,
        metavar="URI",
        help="where S3 CreateBucket puts new repositories (default: the home's data directory)",
    )
    p.add_argument(
        "--read-only-ui",
        action="store_true",
        help="the web UI offers no merge, revert or delete, even to signed-in keys",
    )
    p.add_argument(
        "--verify-reads",
        action="store_true",
        help="check the SHA-256 of every streamed whole-object S3 GET on the server (costs "
        "about 40%% of GET throughput on two cores; by default clients that ask for "
        "checksums check them, and objects up to 1 MiB are checked on the server)",
    )
    p.add_argument(
        "--access-log",
        nargs="?",
        const="on",
        choices=("on", "off", "text", "json"),
        default=None,
        help="one line per request on stderr: on (JSON under --json, else text), text, json "
        "or off (default: on beyond loopback, off on a loopback address)",
    )
    p.add_argument(
        "--body-timeout",
        type=float,
        default=20.0,
        metavar="SECONDS",
        help="answer an S3 request whose body stalls this long RequestTimeout (20)",
    )


def credentials_parser(sub: Any) -> None:
    cred = sub.add_parser("credentials", help="create, list and delete access keys of the server")
    cs = cred.add_subparsers(dest="action", required=True, parser_class=type(cred))
    c = cs.add_parser("create", help="create an access key (its secret is shown once)")
    c.add_argument(
        "--repository",
        action="append",
        default=[],
        metavar="REPO",
        help="limit the key to this repository (repeatable; default: every repository)",
    )
    c.add_argument("--read-only", action="store_true", help="reads only")
    c.add_argument("--admin", action="store_true", help="may also create repositories")
    c.add_argument("--description", default="", help="a note shown by 'credentials list'")
    c.add_argument(
        "--access-key-id",
        metavar="ID",
        help="import this existing key (one made by lakeFS, say) instead of making a new "
        "one; needs --secret-access-key",
    )
    c.add_argument(
        "--secret-access-key",
        metavar="SECRET",
        help="the imported key's secret ('-': read it from standard input); it is not printed",
    )
    cs.add_parser("list", help="list access keys (never their secrets)")
    d = cs.add_parser("delete", help="delete an access key")
    d.add_argument("access_key_id", metavar="ACCESS_KEY_ID")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a number from 0 to 65535, not {text!r}")
    return port
