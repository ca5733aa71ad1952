"""Hooks: code that runs before and after repository operations (lakeFS's actions).

Two sources, run in this order for every event:

* Python callables registered with a :class:`~graveler.hooks.registry.HookRegistry`, given to
  the client (``Graveler(hooks=...)``) or contributed by installed packages through the
  ``graveler.hooks`` entry-point group;
* action files stored in the repository under ``_graveler_actions/`` (YAML, lakeFS's format),
  whose hooks are Python callables named by import path or webhooks. They only run what the
  operator allowed: modules listed in the ``hook_modules`` setting, URLs under ``hook_urls``.

A failing ``pre-`` hook aborts the operation with :class:`graveler.errors.HookAborted` and
changes nothing; ``post-`` hook failures are recorded and logged. Every run is recorded in the
refs database (``Repository.hook_runs``, ``graveler actions runs list``).

The modules: :mod:`~graveler.hookevents` (types), :mod:`~graveler.hooks.registry`
(registration), :mod:`~graveler.hooks.actions` (action files), :mod:`~graveler.hooks.runners`
(running one hook), :mod:`~graveler.hooks.dispatch` (running an event's hooks).
"""
