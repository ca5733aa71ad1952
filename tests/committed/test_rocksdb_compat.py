"""Every range and metarange file graveler writes is a real RocksDB table: it ingests into a
rocksdict ``Rdict`` and reads back equal to what our own reader decodes."""

from __future__ import annotations

from rocksdict import Options, Rdict

from graveler.core.model import RangeSettings
from graveler.storage.committed.apply import Change
from graveler.storage.committed.files import TREE_PREFIX
from graveler.storage.sstable import SstReader
from tests.committed.conftest import make_record


def test_every_written_file_ingests_into_rocksdb(manager_factory, store, tmp_path):
    cm = manager_factory(RangeSettings(min_size=0, max_size=4000, raggedness=8))
    keys = [f"lake/{i:05d}/{'x' * (i % 40)}".encode() for i in range(2000)]
    base, _ = cm.write_records(make_record(k, str(i)) for i, k in enumerate(keys))
    cm.apply(base, [Change(keys[7], make_record(keys[7], "new")), Change(keys[9], None)])
    files = [info.key for info in store.list(TREE_PREFIX)]
    assert len(files) > 20
    for n, key in enumerate(files):
        data = store.get(key)
        sst = tmp_path / f"{n}.sst"
        sst.write_bytes(data)
        db = Rdict(str(tmp_path / f"db{n}"), options=Options(raw_mode=True))
        try:
            db.ingest_external_file([str(sst)])
            from_rocksdb = list(db.items())
        finally:
            db.close()
        keys_read, values_read = SstReader.from_bytes(data).read_all()
        assert from_rocksdb == list(zip(keys_read, values_read, strict=True))
        assert from_rocksdb, key
