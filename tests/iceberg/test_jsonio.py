"""The merge's lazy metadata documents (:func:`jsonio.loads_metadata`), checked against the
plain parse as the oracle: the same values read, the same JSON written after extending,
only what is read decoded; and a merge on the lazy path beside the same merge on the plain
one."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from graveler.client import Graveler
from graveler.repository import Repository
from graveler.tables.iceberg import GravelerCatalog, jsonio
from graveler.tables.iceberg.jsonio import LazyArray
from graveler.tables.iceberg.names import POINTER
from graveler.tables.iceberg.snapshots import (
    appended,
    by_id,
    main_snapshot,
    snapshot_ids,
    snapshots_except,
)
from tests.iceberg.helpers import content, forked_catalog, rows

AWKWARD = ["plain", "]", "[", '"]}', "\\", "é ☃ \u0000", '{"snapshot-id": 5}', ""]


def _snapshot(rng: random.Random, sid: int) -> Any:
    if rng.random() < 0.05:
        return rng.choice([3, None, "x", [1, [2]]])  # not an object: still JSON
    snap: dict[str, Any] = {"parent-snapshot-id": sid - 1, "summary": {}}
    if rng.random() < 0.95:
        snap["snapshot-id"] = sid
    for _ in range(rng.randrange(4)):
        snap["summary"][rng.choice(AWKWARD)] = rng.choice(AWKWARD)
    return snap


def _doc(seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    count = rng.choice([0, 1, 2, 50])
    snapshots = [_snapshot(rng, sid) for sid in range(1, count + 1)]
    doc: dict[str, Any] = {
        "format-version": 2,
        "snapshots": snapshots,
        "snapshot-log": [{"snapshot-id": i, "timestamp-ms": i} for i in range(count)],
        "refs": {"main": {"snapshot-id": count, "type": "branch"}} if count else {},
        "properties": {"snapshots": "a property, not the array"},
    }
    if rng.random() < 0.3:
        doc["snapshots"] = None
    return doc


def _text(doc: dict[str, Any], seed: int) -> bytes:
    indent = random.Random(seed).choice([None, 1, 4])
    return json.dumps(doc, indent=indent, ensure_ascii=seed % 2 == 0).encode()


@pytest.mark.parametrize("seed", range(40))
def test_a_lazy_document_reads_and_writes_as_the_plain_one(seed: int) -> None:
    doc = _doc(seed)
    raw = _text(doc, seed)
    lazy, plain = jsonio.loads_metadata(raw), jsonio.loads(raw)
    assert plain == doc
    assert {k: v for k, v in lazy.items() if not isinstance(v, LazyArray)} == {
        k: v for k, v in plain.items() if not isinstance(lazy[k], LazyArray)
    }
    for key in jsonio.HISTORY_ARRAYS:
        if isinstance(plain[key], list):
            assert isinstance(lazy[key], LazyArray)
            assert list(lazy[key]) == plain[key]
            assert list(reversed(lazy[key])) == plain[key][::-1]
            assert lazy[key][1:-1:2] == plain[key][1:-1:2]
    assert orjson.loads(jsonio.dumps(lazy)) == doc
    rng = random.Random(seed)
    added = [_snapshot(rng, 1000 + i) for i in range(rng.randrange(3))]
    for doc_ in (lazy, plain):
        doc_["snapshots"] = jsonio.extended(doc_["snapshots"], added)
        doc_["snapshots"] = jsonio.extended(doc_["snapshots"], added[:1])
    assert orjson.loads(jsonio.dumps(lazy)) == orjson.loads(jsonio.dumps(plain))
    assert b"".join(jsonio.dumps_chunks(lazy)) == jsonio.dumps(lazy)
    assert b"".join(jsonio.dumps_chunks(plain)) == jsonio.dumps(plain)
    assert list(lazy["snapshots"]) == plain["snapshots"]
    if isinstance(lazy["snapshots"], LazyArray):
        ids = [s.get("snapshot-id") if isinstance(s, dict) else None for s in plain["snapshots"]]
        assert list(lazy["snapshots"].values_of("snapshot-id")) == ids


@pytest.mark.parametrize("seed", range(40))
def test_snapshot_lookups_agree_with_the_plain_document(seed: int) -> None:
    raw = _text(_doc(seed), seed)
    lazy, plain = jsonio.loads_metadata(raw), jsonio.loads(raw)
    objects = all(isinstance(s, dict) and "snapshot-id" in s for s in plain["snapshots"] or [])
    if not objects:  # the plain walks need every snapshot to be an object with an ID
        assert list(snapshot_ids(lazy)) == [
            s.get("snapshot-id") if isinstance(s, dict) else None for s in plain["snapshots"]
        ]
        return
    for extend in (False, True):
        if extend:  # a new snapshot, and one that repeats the first ID: the later one wins
            again = {**(plain["snapshots"] or [{"snapshot-id": 7}])[0], "again": True}
            added = [{"snapshot-id": 999, "parent-snapshot-id": 1}, again]
            for doc in (lazy, plain):
                doc["snapshots"] = jsonio.extended(doc["snapshots"], added)
        assert list(snapshot_ids(lazy)) == list(snapshot_ids(plain))
        assert dict(by_id(lazy)) == by_id(plain)
        assert main_snapshot(lazy) == main_snapshot(plain)
        some = set(list(snapshot_ids(plain))[::3])
        assert snapshots_except(lazy, some) == snapshots_except(plain, some)


def test_only_what_is_read_is_decoded() -> None:
    """The newest snapshots are found from the array's end without reading the others; a
    lookup further back reads the IDs and the bounds in one pass each and decodes one
    snapshot."""
    snapshots = [{"snapshot-id": i, "parent-snapshot-id": i - 1} for i in range(1, 1001)]
    doc = {"snapshots": snapshots, "refs": {"main": {"snapshot-id": 1000}}}
    lazy = jsonio.loads_metadata(orjson.dumps(doc))
    stored = lazy["snapshots"]._stored
    assert main_snapshot(lazy) == snapshots[-1]
    assert by_id(lazy)[990] == snapshots[989]
    assert (len(stored.from_end), stored.decoded, stored.keys, stored._bounds) == (11, {}, {}, None)
    assert by_id(lazy)[5] == snapshots[4]  # past the tail lookups: by the IDs read once
    assert by_id(lazy)[999] == snapshots[998]
    assert sorted(stored.decoded) == [4, 998]
    assert stored.decoded[998] is stored.from_end[1]  # found again, not built again
    assert len(snapshot_ids(lazy)) == 1000
    built = {id(x) for x in [*stored.from_end.values(), *stored.decoded.values()]}
    assert len(built) == jsonio.TAIL_LOOKUPS + 1


def test_what_an_extended_history_added_is_known_without_reading_it() -> None:
    lazy = jsonio.loads_metadata(b'{"snapshots": [{"snapshot-id": 1}, {"snapshot-id": 2}]}')
    first = {"snapshot-id": 3}
    grown = dict(lazy, snapshots=jsonio.extended(lazy["snapshots"], [first]))
    more = dict(grown, snapshots=jsonio.extended(grown["snapshots"], [{"snapshot-id": 4}]))
    assert appended(lazy, more) == [first, {"snapshot-id": 4}]
    assert appended(grown, more) == [{"snapshot-id": 4}]
    assert appended(more, grown) is None  # not an extension of it
    other = jsonio.loads_metadata(b'{"snapshots": [{"snapshot-id": 1}, {"snapshot-id": 2}]}')
    assert appended(other, more) is None  # the same text, read apart: not known to be
    assert lazy["snapshots"]._stored._bounds is None and not lazy["snapshots"]._stored.keys


@pytest.mark.parametrize("text", [b"[]", b"[ \n ]", b'[{"a": "]"}]', b"[1, [2, 3], {}]"])
def test_an_array_only_extended_is_never_split(text: bytes) -> None:
    """A merge only extends ``snapshot-log``: its elements' bounds are not looked for, and
    the spliced JSON is the plain one (a comma only after an element)."""
    lazy = jsonio.loads_metadata(b'{"snapshot-log": ' + text + b"}")
    grown = jsonio.extended(lazy["snapshot-log"], [{"b": 1}, 2])
    assert orjson.loads(jsonio.dumps({"x": grown})) == {"x": [*orjson.loads(text), {"b": 1}, 2]}
    assert grown._stored._bounds is None
    assert list(grown) == [*orjson.loads(text), {"b": 1}, 2]


def test_a_document_that_is_not_json_or_not_an_object_is_refused_as_before() -> None:
    for bad in (b'{"snapshots": [1, 2}', b"[1, 2]", b"", b'{"a": 1} tail'):
        try:
            plain: Any = jsonio.loads(bad)
        except ValueError:
            with pytest.raises(ValueError):
                jsonio.loads_metadata(bad)
        else:
            assert jsonio.loads_metadata(bad) == plain


def _merged_table(repo: Repository, monkeypatch: pytest.MonkeyPatch, lazy: bool) -> Any:
    """Appends on both sides, a tag and a property on the run; main after the merge."""
    if not lazy:
        monkeypatch.setattr(jsonio, "msgspec", None)
    catalog: GravelerCatalog = forked_catalog(repo)
    run = catalog.load_table("run.db.t")
    for i in range(3):
        run.append(rows([10 + i], 1))
    run = catalog.load_table("run.db.t")
    run.manage_snapshots().create_tag(run.metadata.snapshots[-2].snapshot_id, "t1").commit()
    catalog.load_table("main.db.t").append(rows([20], 1))
    repo.merge("run", "main")
    merged = catalog.load_table("main.db.t")
    raw = jsonio.loads(repo.get("main", "db/t/" + POINTER))
    assert not isinstance(raw["snapshots"], LazyArray)
    monkeypatch.undo()
    return merged, raw


def test_a_merge_on_the_lazy_path_matches_the_plain_one(
    gv: Graveler, repo: Repository, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same merge in two repositories, one with the lazy documents turned off: the same
    rows, the same snapshot chain (IDs, parents, sequence numbers, summaries), log and refs."""
    (lazy, lazy_raw), (plain, plain_raw) = (
        _merged_table(repo, monkeypatch, True),
        _merged_table(
            gv.create_repository("plain", (tmp_path / "plain-ns").as_uri()), monkeypatch, False
        ),
    )
    assert content(lazy) == content(plain)

    def shape(raw: dict[str, Any]) -> Any:
        snaps = [
            (s.get("sequence-number"), s["summary"]["operation"], s["summary"]["total-records"])
            for s in raw["snapshots"]
        ]
        return snaps, len(raw["snapshot-log"]), sorted(raw["refs"]), raw["last-sequence-number"]

    assert shape(lazy_raw) == shape(plain_raw)
    assert lazy_raw["snapshot-log"][-1]["snapshot-id"] == lazy_raw["current-snapshot-id"]
    assert len(lazy_raw["metadata-log"]) == len(plain_raw["metadata-log"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b'{"snapshots": [], "current-snapshot-id": 12}', [b"12"]),
        (b'{"a": 1,\n  "current-snapshot-id" : null\n}\n', [b"null"]),
        (b'{"current-snapshot-id": 3, "x": {"current-snapshot-id": 4}}', [b"3", b"4"]),
        (b'{"x": {"current-snapshot-id": 4}, "current-snapshot-id": 5}', [b"5"]),
        (b'{"current-snapshot-id": 6, "p": {"k": ", \\"current-snapshot-id\\": 7}"}}', [b"6"]),
        (b'{"current-snapshot-id": 8}', [b"8"]),
    ],
)
def test_the_base_head_is_read_from_the_documents_end_or_by_every_occurrence(
    text: bytes, expected: list[bytes]
) -> None:
    """The base's head snapshot ID: the last top-level member when it is that key (a
    parser keeps the last of duplicate keys), else every occurrence (more than one: the
    base is parsed in full)."""
    from graveler.tables.iceberg.basemeta import _current_ids

    assert _current_ids(text) == expected
    parsed = json.loads(text)["current-snapshot-id"]
    if len(expected) == 1:
        assert expected[0] == json.dumps(parsed).encode()
