"""Changing a repository: every operation that stages, commits or moves a branch.

* :mod:`.writes` -- a staged write: upload, link, delete (bytes first, then the entry);
  :mod:`.bulk_writes` -- many objects staged in one transaction; :mod:`.multipart` --
  uploads in parts (S3's protocol); :mod:`.imports` -- import objects by reference;
* :mod:`.branches` -- branches and tags: create, protect, delete;
* :mod:`.commit` -- commit, and the one way a branch moves (a compare-and-swap);
  :mod:`.reset` -- drop uncommitted changes, or hard-reset a branch to a commit;
* :mod:`.merge` -- merging a ref into a branch; :mod:`.conflicts` -- conflict resolvers;
  :mod:`.cherrypick` -- cherry-pick and revert;
* :mod:`.runs` -- the run-branch lifecycle of a pipeline run (public as
  :mod:`graveler.runs`); :mod:`.transaction` -- all-or-nothing changes on an ephemeral
  branch; :mod:`.hooks` -- hooks and lakeFS-style action files.

May import: :mod:`graveler.views`, :mod:`graveler.storage` and :mod:`graveler.core`. Table
formats are not imported: a merge reaches them through the repository's parts
(:attr:`graveler.views.context.RepositoryParts.table_merges`).
"""
