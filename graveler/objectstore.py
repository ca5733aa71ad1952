"""Object stores (open_object_store, the ObjectStore port).

Public API: this module's names are those of :mod:`graveler.storage.objectstore`, where they are
defined; import them from here.
"""

from graveler.storage.objectstore import *  # noqa: F403
