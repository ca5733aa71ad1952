"""The tail scan of a JSON array (:class:`TailScanner`) against the plain parse: every element
it finds is exactly the element there, it finds all of them in compact arrays of objects, and
where it cannot tell (escapes, elements that are not objects) it says so instead of
guessing."""

from __future__ import annotations

import json
import random
from typing import Any

import orjson
import pytest

from graveler.tables.iceberg.jsontail import TailScanner

TRICKY = ["}", "{", "{}", '"', "[", "]", ",", '{"snapshot-id": 1}', "}{", "} ,{", "", "é"]


def _value(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.random()
    if depth < 3 and pick < 0.25:
        return {rng.choice(TRICKY): _value(rng, depth + 1) for _ in range(rng.randrange(4))}
    if depth < 3 and pick < 0.35:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    return rng.choice([*TRICKY, 1, -2.5, None, True])


def _element(rng: random.Random, i: int) -> Any:
    element = {"snapshot-id": i, "summary": _value(rng)}
    for _ in range(rng.randrange(3)):
        element[rng.choice(TRICKY)] = _value(rng)
    return element


def _text(elements: list[Any], rng: random.Random) -> bytes:
    style = rng.choice(["compact", "spaced", "indented", "orjson"])
    if style == "orjson":
        return orjson.dumps(elements)
    if style == "indented":
        return json.dumps(elements, indent=rng.choice([1, 2]), ensure_ascii=False).encode()
    separators = (",", ":") if style == "compact" else (" , ", " : ")
    return json.dumps(elements, separators=separators, ensure_ascii=False).encode()


def _check(text: bytes) -> TailScanner:
    plain = json.loads(text)
    scan = TailScanner(text)
    for k in range(len(plain) + 2):
        span = scan.span(k)
        if span is None:
            assert k >= len(plain) or not scan.complete
            break
        assert json.loads(text[span[0] : span[1]]) == plain[-1 - k]
        assert scan.element(k) == text[span[0] : span[1]]
    if scan.complete:
        assert len(scan.spans) == len(plain)
    return scan


@pytest.mark.parametrize("seed", range(200))
def test_found_elements_are_the_elements_there(seed: int) -> None:
    rng = random.Random(seed)
    elements = [_element(rng, i) for i in range(rng.choice([0, 1, 2, 5, 30]))]
    _check(_text(elements, rng))


@pytest.mark.parametrize("seed", range(50))
def test_compact_objects_without_escapes_are_found_to_the_start(seed: int) -> None:
    rng = random.Random(seed)
    elements = [_element(rng, i) for i in range(rng.randrange(1, 40))]
    text = orjson.dumps(elements)
    if b"\\" in text:  # an escaped quote: the scan stops there, by design
        return
    scan = _check(text)
    assert scan.complete and len(scan.spans) == len(elements)


@pytest.mark.parametrize(
    "text",
    [
        b"[]",
        b"[ \n ]",
        b"[1, 2, 3]",
        b'[{"a": 1}, 2]',
        b'[{"a": "\\"}"}, {"b": 1}]',
        b'[{"a": "\\\\"}, {"b": "}{"}]',
        b'[{"a": {"b": {"c": {}}}}, {"x": [{}, {"y": "{"}]}]',
        b'[\n  {"a": 1}\n  ,\n  {"b": 2}\n]',
    ],
)
def test_awkward_arrays(text: bytes) -> None:
    _check(text)


def test_the_window_grows_past_long_elements(monkeypatch: pytest.MonkeyPatch) -> None:
    from graveler.tables.iceberg import jsontail

    monkeypatch.setattr(jsontail, "WINDOW", 16)
    elements = [{"snapshot-id": i, "pad": "x" * (i * 7 % 50), "s": {"a": "{"}} for i in range(60)]
    scan = _check(orjson.dumps(elements))
    assert scan.complete


def test_an_element_that_is_not_an_object_stops_the_scan() -> None:
    scan = TailScanner(b'[{"a": 1}, 7, {"b": 2}]')
    assert scan.span(0) is not None and scan.span(1) is None and not scan.complete
