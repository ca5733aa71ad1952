"""The one error tree (every failure that crosses a public boundary is a GravelerError).

Public API: this module's names are those of :mod:`graveler.core.errors`, where they are
defined; import them from here.
"""

from graveler.core.errors import *  # noqa: F403
