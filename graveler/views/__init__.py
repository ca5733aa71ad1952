"""What a ref shows: every read-only question about a repository.

* :mod:`.context` -- :class:`RepoContext`, the narrow view of a repository that every
  function of this folder and of :mod:`graveler.versioning` takes;
* :mod:`.refexpr`, :mod:`.resolve` -- ref expressions (``main~2``, tags, commit prefixes)
  and their resolution;
* :mod:`.cache` -- read views (a ref's commit and staged entries) found without a database
  round trip when that is safe; :mod:`.layers` -- staging tokens layered over a tree;
* :mod:`.reads` -- stat, get, open and list objects at a ref; :mod:`.listing` -- paged
  listings with a delimiter; :mod:`.uncommitted` -- what is staged and not committed;
* :mod:`.diff` -- differences between two refs, and a branch's uncommitted changes;
* :mod:`.history` -- commit identity, history walks and merge bases; :mod:`.log` -- the log.

May import: :mod:`graveler.storage` and :mod:`graveler.core`.
"""
