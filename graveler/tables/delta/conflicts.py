"""Delta's conflict rules between two commits made from the same table version.

A merge replays each of the source's commits (the *current* transaction, in Delta's words)
after the destination's (the *winning* ones), so every source commit is checked against
every destination commit since the merge base, in the order and with the rules of
delta-spark's ``ConflictChecker`` (Delta's reference implementation):

1. protocol: a winner that changes the protocol fails a current one that changes it too,
   or any current one when it drops features (``ProtocolChanged``);
2. metadata: a winner's ``metaData`` fails the current transaction (``MetadataChanged``)
   unless the current one changes none and the winner only enables a feature Delta allows
   concurrently (row tracking, deletion vectors, in-commit timestamps, V2 checkpoints) or
   only moves IDENTITY high-water marks;
3. domains and application transactions: the same ``domainMetadata`` domain (row tracking
   aside) or the same ``txn`` application ID on both sides (``ConcurrentTransaction``);
4. files the winner added that the current transaction should have read: at Serializable
   all of them, at WriteSerializable only those of non-blind appends (all of them when the
   current one changes metadata), none when the current transaction only rearranges data
   (SnapshotIsolation, as delta-spark downgrades ``dataChange=false`` commits)
   (``ConcurrentAppend``);
5. files the winner removed that the current transaction read (``ConcurrentDeleteRead``)
   or removes too (``ConcurrentDeleteDelete``).

What the current transaction read is rebuilt from its commit (:mod:`.predicates`).
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from graveler.tables.delta.actions import Action, DeltaCommit
from graveler.tables.delta.predicates import ReadSet

SERIALIZABLE = "Serializable"
WRITE_SERIALIZABLE = "WriteSerializable"
SNAPSHOT = "SnapshotIsolation"
ROW_TRACKING_DOMAIN = "delta.rowTracking"
IDENTITY_TAG = "delta.identity.schemaUpdate"
#: Table properties a winner may add or change without failing a concurrent transaction
#: that changes no metadata, each with the protocol feature it needs (delta-spark's
#: metadataConfigurationChangeAllowList, less column mapping, which also rewrites the
#: schema and is refused here).
CONCURRENT_ENABLEMENT = {
    "delta.enableRowTracking": "rowTracking",
    "delta.rowTracking.materializedRowIdColumnName": "rowTracking",
    "delta.rowTracking.materializedRowCommitVersionColumnName": "rowTracking",
    "delta.enableDeletionVectors": "deletionVectors",
    "delta.checkpointPolicy": "v2Checkpoint",
    "delta.enableInCommitTimestamps": "inCommitTimestamp",
    "delta.inCommitTimestampEnablementVersion": "inCommitTimestamp",
    "delta.inCommitTimestampEnablementTimestamp": "inCommitTimestamp",
}


class DeltaConflict(Exception):
    """Delta would refuse the current transaction: ``kind`` is Delta's exception name
    without ``Exception`` (``ConcurrentAppend``...)."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(f"{kind}: {reason}")
        self.kind = kind
        self.reason = reason


@dataclass(frozen=True)
class ReadSnapshot:
    """The table as the current transaction read it: its metadata and protocol bodies."""

    metadata: Action
    protocol: Action

    @property
    def partition_columns(self) -> tuple[str, ...]:
        return tuple(self.metadata.get("partitionColumns") or ())

    @property
    def configuration(self) -> Mapping[str, str]:
        found = self.metadata.get("configuration")
        return found if isinstance(found, dict) else {}

    @property
    def isolation_level(self) -> str:
        """``delta.isolationLevel``; Serializable when unset, as delta-spark reads it."""
        level = self.configuration.get("delta.isolationLevel", SERIALIZABLE)
        return WRITE_SERIALIZABLE if level == WRITE_SERIALIZABLE else SERIALIZABLE

    def supports(self, feature: str) -> bool:
        return feature in (self.protocol.get("writerFeatures") or ())


def check(
    current: DeltaCommit,
    read: ReadSet,
    winner: DeltaCommit,
    snapshot: ReadSnapshot,
    winner_own: Set[str],
) -> None:
    """Raise DeltaConflict when Delta would refuse ``current`` after ``winner``.
    ``winner_own`` holds the paths the destination added since the base (a file it added
    and removed itself is none the current transaction read)."""
    _check_protocol(current, winner, snapshot)
    _check_metadata(current, winner, snapshot)
    _check_domains(current, winner)
    _check_app_transactions(current, winner)
    _check_appends(current, read, winner, snapshot)
    _check_deletes(current, read, winner, winner_own)


def _check_protocol(current: DeltaCommit, winner: DeltaCommit, snapshot: ReadSnapshot) -> None:
    new = winner.first("protocol")
    if new is None:
        return
    if current.first("protocol") is not None:
        raise DeltaConflict("ProtocolChanged", f"version {winner.version} changed the protocol too")
    if _drops_features(new, snapshot.protocol):
        raise DeltaConflict("ProtocolChanged", f"version {winner.version} dropped table features")


def _drops_features(new: Action, old: Action) -> bool:
    for key in ("minReaderVersion", "minWriterVersion"):
        if int(new.get(key) or 0) < int(old.get(key) or 0):
            return True
    return any(
        not set(old.get(key) or ()) <= set(new.get(key) or ())
        for key in ("readerFeatures", "writerFeatures")
    )


def _check_metadata(current: DeltaCommit, winner: DeltaCommit, snapshot: ReadSnapshot) -> None:
    new = winner.first("metaData")
    if new is None:
        return
    if current.first("metaData") is not None:
        raise DeltaConflict("MetadataChanged", f"version {winner.version} changed the metadata")
    tags = winner.commit_info.get("tags")
    if isinstance(tags, dict) and str(tags.get(IDENTITY_TAG, "")).lower() == "true":
        return  # only IDENTITY high-water marks moved
    if not _concurrent_enablement(snapshot.metadata, new, winner, snapshot):
        raise DeltaConflict("MetadataChanged", f"version {winner.version} changed the metadata")


def _concurrent_enablement(
    old: Action, new: Action, winner: DeltaCommit, snapshot: ReadSnapshot
) -> bool:
    """Whether ``new`` differs from ``old`` only by enabling what Delta lets through."""
    differing = {k for k in set(old) | set(new) if old.get(k) != new.get(k)}
    if not differing <= {"configuration"}:
        return False
    before: dict[str, Any] = old.get("configuration") or {}
    after: dict[str, Any] = new.get("configuration") or {}
    if set(before) - set(after):
        return False
    protocol = winner.first("protocol") or snapshot.protocol
    features = set(protocol.get("writerFeatures") or ())
    for key in (k for k in after if before.get(k) != after[k]):
        needed = CONCURRENT_ENABLEMENT.get(key)
        if needed is None or needed not in features:
            return False
        if key.startswith("delta.enable") and str(after[key]).lower() != "true":
            return False
        if key == "delta.checkpointPolicy" and str(after[key]).lower() != "v2":
            return False
    return True


def _check_domains(current: DeltaCommit, winner: DeltaCommit) -> None:
    ours = {str(d.get("domain")) for d in current.of("domainMetadata")} - {ROW_TRACKING_DOMAIN}
    theirs = {str(d.get("domain")) for d in winner.of("domainMetadata")}
    both = sorted(ours & theirs)
    if both:
        raise DeltaConflict(
            "ConcurrentTransaction", f"a conflicting metadata domain {both[0]} is added"
        )


def _check_app_transactions(current: DeltaCommit, winner: DeltaCommit) -> None:
    ours = {str(t.get("appId")) for t in current.of("txn")}
    theirs = {str(t.get("appId")) for t in winner.of("txn")}
    both = sorted(ours & theirs)
    if both:
        raise DeltaConflict(
            "ConcurrentTransaction",
            f"application {both[0]!r} committed version {winner.version} concurrently "
            "(the same streaming query or idempotent writer ran twice)",
        )


def isolation_level(current: DeltaCommit, snapshot: ReadSnapshot) -> str:
    """The isolation level the current transaction commits at: the one its writer
    recorded, else SnapshotIsolation for a commit that changes no data (only
    ``dataChange=false`` file actions), else the table's."""
    recorded = current.commit_info.get("isolationLevel")
    if recorded in (SERIALIZABLE, WRITE_SERIALIZABLE, SNAPSHOT):
        return str(recorded)
    files = [*current.of("add"), *current.of("remove")]
    others = [
        a
        for a in current.actions
        if not ({"add", "remove", "commitInfo"} & set(a))
        and not ("domainMetadata" in a and a["domainMetadata"].get("domain") == ROW_TRACKING_DOMAIN)
    ]
    if files and not others and not any(f.get("dataChange", True) for f in files):
        return SNAPSHOT
    return snapshot.isolation_level


def _check_appends(
    current: DeltaCommit, read: ReadSet, winner: DeltaCommit, snapshot: ReadSnapshot
) -> None:
    level = isolation_level(current, snapshot)
    if level == SNAPSHOT or read.blind:
        return
    added = list(winner.of("add"))
    winner_blind = winner.commit_info.get("isBlindAppend") is True
    if level == WRITE_SERIALIZABLE and current.first("metaData") is None and winner_blind:
        added = []
    unpartitioned = not snapshot.partition_columns
    for body in added:
        if unpartitioned or read.matches(body.get("partitionValues")):
            raise DeltaConflict(
                "ConcurrentAppend",
                f"version {winner.version} added data{_where(body, snapshot)} that this "
                "transaction read",
            )


def _check_deletes(
    current: DeltaCommit, read: ReadSet, winner: DeltaCommit, winner_own: Set[str]
) -> None:
    removed = winner.paths("remove")
    if not read.blind:
        for path, body in removed.items():
            values = body.get("partitionValues")
            seen = values is None or read.matches(values)
            if path not in winner_own and seen:
                raise DeltaConflict(
                    "ConcurrentDeleteRead",
                    f"version {winner.version} removed {path!r}, which this transaction read",
                )
    both = sorted(set(current.paths("remove")) & set(removed))
    if both:
        raise DeltaConflict(
            "ConcurrentDeleteDelete", f"version {winner.version} removed {both[0]!r} too"
        )


def _where(body: Action, snapshot: ReadSnapshot) -> str:
    values = body.get("partitionValues")
    if not snapshot.partition_columns or not isinstance(values, dict):
        return ""
    shown = ", ".join(f"{c}={values.get(c)}" for c in snapshot.partition_columns)
    return f" in partition [{shown}]"
