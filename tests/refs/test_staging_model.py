"""Model-based test of staging: random stage / drop-with-prefix sequences against a dict, then
every read (get, iterate with start / prefix / batch size, count) compared with the model."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graveler.core.model import StagedEntry
from graveler.storage.refs.store import MetadataStore
from tests.refs.conftest import a_branch, new_repository

# Few atoms so that keys share prefixes often; 0x00 / 0x80 / 0xFF and UTF-8 test byte order.
_ATOMS = [b"a", b"b", b"/", b"\x00", b"\x7f", b"\x80", b"\xff", "é".encode(), "日".encode()]
keys = st.one_of(
    st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=4).map(b"".join),
    st.binary(min_size=1, max_size=6),
)
prefixes = st.one_of(
    st.just(b""), keys, st.lists(st.sampled_from(_ATOMS), max_size=2).map(b"".join)
)
entries = st.builds(
    lambda key, payload: (
        StagedEntry(key, None, None)
        if payload is None
        else StagedEntry(key, b"id-" + payload, payload)
    ),
    keys,
    st.one_of(st.none(), st.binary(max_size=4)),
)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("stage"), st.lists(entries, max_size=12)),
        st.tuples(st.just("drop"), prefixes),
    ),
    min_size=1,
    max_size=6,
)

Model = dict[bytes, StagedEntry]


def _apply(
    store: MetadataStore, branch: str, token: str, ops: list[tuple[str, object]], model: Model
) -> None:
    for kind, arg in ops:
        if kind == "stage":
            assert isinstance(arg, list)
            assert store.stage("repo", branch, arg) == token
            model.update((e.key, e) for e in arg)
        else:
            assert isinstance(arg, bytes)
            store.drop_tokens([token], prefix=arg)
            for key in [k for k in model if k.startswith(arg)]:
                del model[key]


def _window(model: Model, start: bytes, prefix: bytes) -> list[StagedEntry]:
    return [model[k] for k in sorted(model) if k >= start and k.startswith(prefix)]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    ops=operations,
    reads=st.lists(st.tuples(keys | st.just(b""), prefixes, st.integers(1, 5)), max_size=4),
    probes=st.lists(keys, max_size=5),
)
def test_staging_matches_a_dict_model(
    store: MetadataStore,
    ops: list[tuple[str, object]],
    reads: list[tuple[bytes, bytes, int]],
    probes: list[bytes],
) -> None:
    if not store.list_repositories():
        new_repository(store)
    branch = a_branch(f"b-{uuid.uuid4().hex}")  # a fresh token per example
    store.create_branch("repo", branch)
    token = branch.staging_token
    model: Model = {}

    _apply(store, branch.name, token, ops, model)

    assert list(store.iter_staged(token)) == _window(model, b"", b"")
    assert store.count_staged(token) == len(model)
    for start, prefix, batch_size in reads:
        got = list(store.iter_staged(token, start=start, prefix=prefix, batch_size=batch_size))
        assert got == _window(model, start, prefix)
    for key in probes + list(model)[:3]:
        assert store.get_staged(token, key) == model.get(key)
