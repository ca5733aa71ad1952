"""The run-branch lifecycle (Run, open_run, commit_pending, publish, discard).

Public API: this module's names are those of :mod:`graveler.versioning.runs`, where they are
defined; import them from here.
"""

from graveler.versioning.runs import *  # noqa: F403
