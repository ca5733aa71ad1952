"""``TreeWriter.add_run`` (bulk, cut points found by binary search) must cut ranges exactly
where record-by-record ``TreeWriter.add`` does, whatever the settings and however the records
are split into runs."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graveler.core.model import RangeSettings
from graveler.storage.committed.cache import TieredCache
from graveler.storage.committed.files import TreeFiles
from graveler.storage.committed.writer import TreeWriter
from graveler.storage.objectstore import open_object_store
from tests.committed.conftest import make_record
from tests.committed.test_model import SETTINGS

records = st.dictionaries(
    st.binary(min_size=1, max_size=8), st.binary(max_size=40), min_size=1, max_size=80
).map(lambda d: [make_record(k, d[k]) for k in sorted(d)])


def _ranges(settings_: RangeSettings, runs: list[list]) -> list:
    files = TreeFiles(open_object_store("mem://runs"), TieredCache(None))
    writer = TreeWriter(files, settings_)
    for run in runs:
        if len(run) == 1:
            writer.add(run[0])
        else:
            writer.add_run(run)
    writer.finish()
    return writer._ranges  # the partition is what is compared


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    recs=records,
    cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=6),
    which=st.sampled_from([*SETTINGS, RangeSettings(30, 90, 2), RangeSettings(0, 50, 1 << 30)]),
)
def test_runs_cut_where_single_records_cut(recs, cuts, which):
    singles = [[r] for r in recs]
    bounds = sorted({0, len(recs), *(c for c in cuts if c < len(recs))})
    runs = [recs[a:b] for a, b in itertools.pairwise(bounds)]
    assert _ranges(which, runs) == _ranges(which, singles)
    assert _ranges(which, [recs]) == _ranges(which, singles)
