"""graveler:// URIs (GravelerURI), parsed and formatted in one place.

Public API: this module's names are those of :mod:`graveler.core.uri`, where they are
defined; import them from here.
"""

from graveler.core.uri import *  # noqa: F403
