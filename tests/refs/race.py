"""Helpers of the stage-versus-seal race tests, importable by ``spawn`` worker processes.

Writers stage batches of unique keys on ``repo``/``main`` while a sealer keeps moving the
staging token into ``sealed_tokens`` (what a commit does first). :func:`check_no_lost_writes`
then proves the contract of :meth:`StagingStore.stage`: every acknowledged entry is in exactly
the token ``stage`` returned, that token was the branch's staging or sealed token right after,
and no entry reached a token after it was sealed.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field, replace

from graveler.core.model import StagedEntry
from graveler.storage.refs.sql import SqlMetadataStore
from graveler.storage.refs.sqlite_store import SqliteMetadataStore
from graveler.storage.refs.store import MetadataStore


@dataclass
class Ack:
    """One acknowledged ``stage`` call."""

    keys: list[bytes]
    token: str
    token_was_live: bool  # current or sealed when re-read right after stage returned


@dataclass
class SealLog:
    """What the sealer saw: entry count of each token read right after sealing it."""

    counts_at_seal: dict[str, int] = field(default_factory=dict)


def entry(key: bytes) -> StagedEntry:
    return StagedEntry(key, b"id-" + key, b"value-" + key)


def write_batches(store: MetadataStore, writer: int, rounds: int, batch: int) -> list[Ack]:
    """Stage ``rounds`` batches of ``batch`` unique keys; return what was acknowledged."""
    acks: list[Ack] = []
    for round_no in range(rounds):
        keys = [b"w%02d/r%04d/%03d" % (writer, round_no, i) for i in range(batch)]
        token = store.stage("repo", "main", [entry(k) for k in keys])
        branch = store.get_branch("repo", "main")
        live = token == branch.staging_token or token in branch.sealed_tokens
        acks.append(Ack(keys, token, live))
    return acks


def process_writer(
    url: str, writer: int, rounds: int, batch: int, kind: str = "sqlite"
) -> list[Ack]:
    """Entry point of a spawned writer process: its own store (``kind``: a STORES id of the
    conftest) on the shared database."""
    opened = SqliteMetadataStore if kind == "sqlite-stdlib" else SqlMetadataStore
    with opened(url, migrate=False) as store:
        return write_batches(store, writer, rounds, batch)


def seal_until(store: MetadataStore, stop: threading.Event, log: SealLog) -> None:
    """Seal the staging token of ``repo``/``main`` again and again until ``stop`` is set."""
    while not stop.is_set():
        branch = store.get_branch("repo", "main")
        sealed = replace(
            branch,
            staging_token=f"tok-{uuid.uuid4()}",
            sealed_tokens=(branch.staging_token, *branch.sealed_tokens),
        )
        store.update_branch("repo", branch, sealed)
        log.counts_at_seal[branch.staging_token] = store.count_staged(branch.staging_token)
        stop.wait(0.002)


def check_no_lost_writes(store: MetadataStore, acks: list[Ack], log: SealLog) -> None:
    """Assert the stage/seal contract over everything that was acknowledged."""
    final = store.get_branch("repo", "main")
    tokens = [final.staging_token, *final.sealed_tokens]
    assert set(log.counts_at_seal) == set(final.sealed_tokens)
    where: dict[bytes, list[str]] = {}
    for token in tokens:
        for staged in store.iter_staged(token, batch_size=997):
            where.setdefault(staged.key, []).append(token)
    acked = {key: ack.token for ack in acks for key in ack.keys}
    assert all(ack.token_was_live for ack in acks), "stage returned a token nobody reads"
    assert set(where) == set(acked), "entries lost or invented"
    for key, token in acked.items():
        assert where[key] == [token], f"{key!r} acknowledged in {token}, found in {where[key]}"
    for token, count in log.counts_at_seal.items():
        assert store.count_staged(token) == count, f"writes reached {token} after its seal"
    assert len(log.counts_at_seal) >= 3, "the sealer did not get to run; race not exercised"
    assert len({ack.token for ack in acks}) >= 2, "all writes hit one token; race not exercised"
