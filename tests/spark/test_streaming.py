"""``writeStream.format("graveler")``: one commit per micro-batch, exactly once on restart."""

from __future__ import annotations

import json
from pathlib import Path

from graveler_spark.streaming import BATCH_KEY, STREAM_KEY

from tests.spark.conftest import Lake


def test_one_commit_per_batch_and_exactly_once_after_restart(
    spark, lake: Lake, tmp_path: Path
) -> None:
    source, checkpoint = tmp_path / "in", tmp_path / "checkpoint"
    source.mkdir()

    def add(name: str, ids: list[int]) -> None:
        (source / name).write_text("".join(json.dumps({"id": i}) + "\n" for i in ids))

    def run() -> None:
        query = (
            spark.readStream.schema("id long")
            .option("maxFilesPerTrigger", 1)
            .json(str(source))
            .writeStream.format("graveler")
            .options(**lake.options)
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start(lake.uri("main", "stream"))
        )
        query.awaitTermination(600)
        assert query.exception() is None

    def batches() -> list[str]:
        return [c.metadata[BATCH_KEY] for c in lake.repo.log("main") if STREAM_KEY in c.metadata]

    add("a.json", [0, 1])
    add("b.json", [2, 3])
    run()
    assert batches() == ["1", "0"]
    assert list(lake.repo.diff_uncommitted("main")) == []
    # Spark lost its record of batch 1's commit (a crash right after our commit): on restart
    # it runs batch 1 again, then the new file as batch 2.
    (checkpoint / "commits" / "1").unlink()
    (checkpoint / "commits" / ".1.crc").unlink(missing_ok=True)
    add("c.json", [4])
    run()
    assert batches() == ["2", "1", "0"]
    back = spark.read.format("graveler").options(**lake.options).load(lake.uri("main", "stream"))
    assert sorted(r.id for r in back.collect()) == [0, 1, 2, 3, 4]
    assert list(lake.repo.store.list("data/")) == [
        i for i in lake.repo.store.list("data/") if i.key in _addresses(lake)
    ]


def _addresses(lake: Lake) -> set[str]:
    return {e.physical_address for e in lake.repo.iter_objects("main", "stream/")}
