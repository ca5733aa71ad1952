"""Rewriting the source's commits as new versions after the destination's latest.

A replayed commit keeps its actions as the writer wrote them; what names a version or a
time is rewritten, as delta-spark rewrites a transaction it retries after a conflict:

* the version itself (the file's name);
* ``commitInfo.readVersion``: a read of the base stays; a read of an earlier source commit
  points at that commit's new version;
* in-commit timestamps (``commitInfo.inCommitTimestamp``, when the table enables them):
  at least one millisecond after the previous version's, so they stay strictly increasing,
  and the enablement version/timestamp of a commit that turns them on;
* ``add.defaultRowCommitVersion`` (row tracking) equal to the old version.

Checkpoints and ``.crc`` files of the source describe states of the source's numbering and
are never replayed (see :mod:`graveler.tables.delta.merge`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graveler.tables.delta.actions import Action, DeltaCommit

ICT_ENABLED = "delta.enableInCommitTimestamps"
ICT_VERSION = "delta.inCommitTimestampEnablementVersion"
ICT_TIMESTAMP = "delta.inCommitTimestampEnablementTimestamp"


def replay(
    commits: Sequence[DeltaCommit],
    base_version: int,
    dest_version: int,
    *,
    previous_ict: int | None,
    ict_enabled: bool,
) -> list[DeltaCommit]:
    """``commits`` (the source's versions ``base_version + 1...``) renumbered to follow
    ``dest_version``. ``previous_ict`` is the destination's latest in-commit timestamp;
    ``ict_enabled`` whether the table enables them at the destination's latest version."""
    out: list[DeltaCommit] = []
    shift = dest_version - base_version
    for commit in commits:
        new_version = commit.version + shift
        metadata = commit.first("metaData")
        if metadata is not None:
            ict_enabled = _ict_on(metadata)
        rewritten, previous_ict = _rewrite(
            commit, new_version, base_version, shift, previous_ict, ict_enabled
        )
        out.append(rewritten)
    return out


def _rewrite(
    commit: DeltaCommit,
    new_version: int,
    base_version: int,
    shift: int,
    previous_ict: int | None,
    ict_enabled: bool,
) -> tuple[DeltaCommit, int | None]:
    bodies: dict[int, Action | None] = {}
    info_at = commit.index_of("commitInfo")
    ict = None
    if info_at is not None:
        original = commit.actions[info_at]["commitInfo"]
        info = dict(original)
        read = info.get("readVersion")
        if isinstance(read, int) and read > base_version:
            info["readVersion"] = read + shift
        if "version" in info:
            info["version"] = new_version
        if ict_enabled or "inCommitTimestamp" in info:
            ict = _next_ict(info, previous_ict)
            info["inCommitTimestamp"] = ict
        if info != original:
            bodies[info_at] = info
    for i, action in enumerate(commit.actions):
        if "metaData" in action and ict is not None:
            bodies[i] = _ict_enablement(action["metaData"], commit.version, new_version, ict)
        elif "add" in action and action["add"].get("defaultRowCommitVersion") == commit.version:
            bodies[i] = {**action["add"], "defaultRowCommitVersion": new_version}
    rewritten = commit.replaced(new_version, bodies)
    if info_at not in (None, 0) and ict is not None:
        rewritten = _commit_info_first(rewritten)
    return rewritten, ict if ict is not None else previous_ict


def _next_ict(info: dict[str, Any], previous: int | None) -> int:
    own = info.get("inCommitTimestamp", info.get("timestamp"))
    stamp = int(own) if isinstance(own, int) else 0
    return stamp if previous is None else max(stamp, previous + 1)


def _ict_on(metadata: Action) -> bool:
    conf = metadata.get("configuration") or {}
    return str(conf.get(ICT_ENABLED, "")).lower() == "true"


def _ict_enablement(metadata: Action, old: int, new: int, ict: int) -> Action:
    """A metaData that enables in-commit timestamps at ``old`` now enables them at ``new``."""
    conf = dict(metadata.get("configuration") or {})
    if conf.get(ICT_VERSION) != str(old):
        return metadata
    conf[ICT_VERSION] = str(new)
    conf[ICT_TIMESTAMP] = str(ict)
    return {**metadata, "configuration": conf}


def _commit_info_first(commit: DeltaCommit) -> DeltaCommit:
    """With in-commit timestamps the ``commitInfo`` must be the commit's first action."""
    at = commit.index_of("commitInfo")
    if at in (None, 0):
        return commit
    assert at is not None
    info = commit.actions[at]
    rest = commit.replaced(commit.version, {at: None})
    return rest.with_first(info)
