"""graveler.storage.objectstore.durability: which filesystems commit a new file's entry with the
file, and the batch flush."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graveler.storage.objectstore import durability


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(durability, "_by_device", {})
    monkeypatch.delenv("GRAVELER_FSYNC_DIRECTORIES", raising=False)


def test_the_filesystem_type_is_read_from_mountinfo(tmp_path: Path) -> None:
    """What the kernel says of the test directory's filesystem (statfs' view, via
    /proc/self/mounts by mount point) is what mountinfo gives for its device."""
    dev = os.stat(tmp_path).st_dev
    found = durability._filesystem_type(dev)
    best = ""
    expected = None
    with open("/proc/self/mounts", encoding="utf-8") as fh:
        for line in fh:
            _, point, fstype, *_ = line.split()
            if str(tmp_path).startswith(point.rstrip("/") + "/") and len(point) >= len(best):
                best, expected = point, fstype
    assert found == expected
    assert durability.fsync_covers_new_entry(dev) is (found in durability.ENTRY_WITH_FILE)


def test_unknown_devices_and_the_override_keep_the_directory_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert durability._filesystem_type(os.makedev(4095, 4095)) is None
    assert durability.fsync_covers_new_entry(os.makedev(4095, 4095)) is False
    monkeypatch.setattr(durability, "_filesystem_type", lambda dev: "ext4")
    assert durability.fsync_covers_new_entry(1) is True
    monkeypatch.setenv("GRAVELER_FSYNC_DIRECTORIES", "1")
    assert durability.fsync_covers_new_entry(2) is False
    monkeypatch.setattr(durability, "_filesystem_type", lambda dev: "nfs")
    assert durability.fsync_covers_new_entry(3) is False


def test_syncfs_flushes_or_says_it_cannot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "f").write_bytes(b"x")
    assert durability.syncfs(str(tmp_path)) is True  # Linux
    with pytest.raises(FileNotFoundError):
        durability.syncfs(str(tmp_path / "missing"))
    monkeypatch.setattr(durability, "_SYNCFS", [None])
    assert durability.syncfs(str(tmp_path)) is False
