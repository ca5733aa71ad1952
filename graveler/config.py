"""Client settings: ClientSettings, and the redaction of secrets in URLs and options.

Public API: this module's names are those of :mod:`graveler.core.config`, where they are
defined; import them from here.
"""

from graveler.core.config import *  # noqa: F403
