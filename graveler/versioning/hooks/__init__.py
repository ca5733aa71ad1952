"""Hooks: code that runs before and after repository operations (lakeFS's actions).

Two sources, run in this order for every event:

* Python callables registered with a :class:`~graveler.versioning.hooks.registry.HookRegistry`,
given to
  the client (``Graveler(hooks=...)``) or contributed by installed packages through the
  ``graveler.hooks`` entry-point group;
* action files stored in the repository under ``_graveler_actions/`` (YAML, lakeFS's format),
  whose hooks are Python callables named by import path or webhooks. They only run what the
  operator allowed: modules listed in the ``hook_modules`` setting, URLs under ``hook_urls``.

A failing ``pre-`` hook aborts the operation with :class:`graveler.core.errors.HookAborted` and
changes nothing; ``post-`` hook failures are recorded and logged. Every run is recorded in the
refs database (``Repository.hook_runs``, ``graveler actions runs list``).

The modules: :mod:`~graveler.core.hookevents` (types), :mod:`~graveler.versioning.hooks.registry`
(registration), :mod:`~graveler.versioning.hooks.actions` (action files),
:mod:`~graveler.versioning.hooks.runners` (running one hook),
:mod:`~graveler.versioning.hooks.dispatch` (running an event's hooks).
"""
