"""graveler's tables inside a database that another system manages.

Public API: this module's names are those of :mod:`graveler.storage.database`, where they are
defined; import them from here.
"""

from graveler.storage.database import *  # noqa: F403
