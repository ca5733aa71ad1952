"""``python -m graveler``: the ``graveler`` command line (same as ``python -m graveler.cli``)."""

import sys

from graveler.cli.app import main

sys.exit(main())
