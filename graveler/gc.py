"""Garbage collection: retention rules, the plan, and the collector.

Public API: this module's names are those of :mod:`graveler.maintenance.gc`, where they are
defined; import them from here.
"""

from graveler.maintenance.gc import *  # noqa: F403
