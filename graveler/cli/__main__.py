"""``python -m graveler.cli``: same as the ``graveler`` entry point."""

import sys

from graveler.cli.app import main

sys.exit(main())
