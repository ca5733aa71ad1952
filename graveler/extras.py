"""The optional extras each integration needs (require_extra).

Public API: this module's names are those of :mod:`graveler.core.extras`, where they are
defined; import them from here.
"""

from graveler.core.extras import *  # noqa: F403
