"""The ``graveler`` command line (lakectl-like, ``--json`` for scripts).

Exit codes: 0 success, 2 usage or bad input, 3 not found, 4 conflict, 1 any other error.
Errors are one line on stderr saying what went wrong and what to do.
"""

from __future__ import annotations

import sys

from graveler.cli.app import main

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
