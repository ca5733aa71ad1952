"""Tables: a layer above files for table formats (Delta Lake, Iceberg) kept in a repository.

A table format recognises its tables by their metadata paths (Delta's ``_delta_log/``, say)
and knows how to merge two histories of one table the way the format itself reconciles two
concurrent transactions. The three-way merge of :mod:`graveler.versioning.commit` asks this layer
first (:func:`graveler.tables.merge.plan_table_merges`):

* a table that only one side changed since the merge base is merged as files, as before;
* a table that both sides changed is handed to its format, which either returns the table's
  merged state (new metadata objects written to the namespace, staged in the merge commit)
  or raises :class:`graveler.core.errors.TableConflict`, naming the table and the reason;
* the ``dest-wins`` / ``source-wins`` strategies settle a table only when its format
  refuses the merge, and then take it whole from one side, never a mix of its files.

The port every format implements is :class:`graveler.tables.port.TableFormat`; the formats
this build knows are listed in :mod:`graveler.tables.registry`.
"""
