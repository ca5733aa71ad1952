"""Keeping repositories healthy, over a whole client or repository.

* :mod:`.gc` -- garbage collection of object bytes no retained commit needs (public as
  :mod:`graveler.gc`);
* :mod:`.fsck` -- the consistency check of refs, history, trees and objects;
* :mod:`.refdump` -- the refs backup: commits, branches and tags dumped into the namespace,
  and restored into a database that lost them.

May import: the facade (:mod:`graveler.client`, :mod:`graveler.repository`) and every folder
below it.
"""
