"""The foundation every other folder stands on: plain values and rules, no I/O.

* :mod:`.model` -- repositories, branches, tags, commits, staged entries (plain dataclasses);
* :mod:`.errors` -- the one error tree (public as :mod:`graveler.errors`);
* :mod:`.validate` -- checks of user-supplied names, keys and text;
* :mod:`.config` -- :class:`ClientSettings`, where a deployment lives (public as
  :mod:`graveler.config`); :mod:`.uri` -- ``graveler://`` URIs (public as :mod:`graveler.uri`);
* :mod:`.hookevents` -- what hooks are told; :mod:`.keyspace` -- key-range arithmetic;
  :mod:`.lru`, :mod:`.background` -- a bounded map and the shared I/O threads;
  :mod:`.extras` -- which optional extra an integration needs.

May import: the standard library and small pure libraries only; nothing else of graveler.
"""
