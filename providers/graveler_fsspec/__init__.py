"""fsspec filesystem for ``graveler://`` (and ``lakefs://``) URIs.

    import pandas as pd
    df = pd.read_parquet("graveler://lake/main/tables/daily.parquet",
                         storage_options={"home": "/srv/graveler"})

The ``graveler`` protocol is registered through the ``fsspec.specs`` entry point, so
``fsspec.filesystem("graveler", ...)`` and every fsspec-aware library find it once graveler is
installed. ``lakefs`` is registered too and resolves to lakefs-spec when that is installed
(see :mod:`graveler_fsspec.lakefs`).
"""

# ruff: noqa: E402 -- the extra is checked before anything imports fsspec
from graveler.extras import require_extra

require_extra("fsspec", package=__name__)

from graveler_fsspec.errors import PathExists, PathNotFound, ReadOnlyBranch, ReadOnlyRef
from graveler_fsspec.filesystem import GravelerFileSystem
from graveler_fsspec.transaction import GravelerTransaction

__all__ = [
    "GravelerFileSystem",
    "GravelerTransaction",
    "PathExists",
    "PathNotFound",
    "ReadOnlyBranch",
    "ReadOnlyRef",
]
