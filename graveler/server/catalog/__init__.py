"""The Iceberg REST catalog of ``graveler serve``, at ``/iceberg/api``: warehouse = repository,
the first namespace level a ref (:mod:`.rest` routes, :mod:`.handlers` answer, :mod:`.errors`
speaks the spec's error model). It needs the ``tables`` extra (pyiceberg).

The table engine under it is :mod:`graveler.tables.iceberg`, shared with the in-process
:class:`graveler.tables.iceberg.GravelerCatalog`.
"""
