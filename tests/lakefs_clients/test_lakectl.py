"""lakectl, lakeFS's own command-line client (release 1.84.0, built from source by
``make lakectl``), against ``graveler serve`` through the contract tap: repositories,
branches, objects, commits, log, diff, merge, tags, reset, revert, cherry-pick, branch
protection, import, ``lakectl local``, and the errors a script sees. Outputs are lakectl's
own text, asserted as a user reads them.

lakectl is configured the documented way, with ``~/.lakectl.yaml`` (HOME is the module's
temporary directory).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.lakefs_clients.server import LakeFS, unique

ROOT = Path(__file__).resolve().parents[2]


def lakectl_binary() -> Path:
    """Where ``make lakectl`` (scripts/build-lakectl.sh) caches the binary."""
    pin = (ROOT / "scripts" / "lakefs-hadoopfs.txt").read_text().splitlines()
    module = next(ln for ln in pin if ln.strip() and not ln.startswith("#")).split()[1]
    cache = os.environ.get("GRAVELER_BIN_CACHE") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "graveler" / "bin"
    )
    return Path(cache) / f"lakectl-{module.partition('@')[2]}"


@dataclass
class Lakectl:
    binary: Path
    env: dict[str, str]
    cwd: Path

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(self.binary), *args],
            env=self.env,
            cwd=self.cwd,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "WARNING" not in done.stderr, done.stderr
        if ok:
            assert done.returncode == 0, (args, done.stdout, done.stderr)
        else:
            assert done.returncode != 0, (args, done.stdout, done.stderr)
        return done

    def __call__(self, *args: str) -> str:
        return self.run(*args).stdout

    def fails(self, *args: str) -> str:
        """What a failing command prints (lakectl prints errors on stdout or stderr)."""
        done = self.run(*args, ok=False)
        return done.stdout + done.stderr


@pytest.fixture(scope="module")
def lakectl(server: LakeFS, tmp_path_factory: pytest.TempPathFactory) -> Lakectl:
    binary = lakectl_binary()
    assert binary.is_file(), f"{binary} is missing: run 'make lakectl'"
    home = tmp_path_factory.mktemp("lakectl-home")
    settings = {
        "credentials": {
            "access_key_id": server.key.access_key_id,
            "secret_access_key": server.key.secret_access_key,
        },
        "server": {"endpoint_url": server.url},
    }
    (home / ".lakectl.yaml").write_text(yaml.safe_dump(settings))
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAKECTL_")}
    env["HOME"] = str(home)
    return Lakectl(binary, env, home)


@pytest.fixture
def repo(lakectl: Lakectl) -> str:
    name = unique("ctl")
    out = lakectl("repo", "create", f"lakefs://{name}", f"local://{name}")
    assert f"Repository '{name}' created:" in out and "default branch: main" in out
    return name


def paths(listing: str) -> list[str]:
    """The paths of ``fs ls`` output (the last column)."""
    return [line.split()[-1] for line in listing.splitlines() if line.strip()]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_repositories_and_branches(lakectl: Lakectl, repo: str) -> None:
    listed = lakectl("repo", "list").splitlines()
    assert any(line.split("\t")[0] == repo and f"local://{repo}" in line for line in listed)
    out = lakectl("branch", "create", f"lakefs://{repo}/dev", "--source", f"lakefs://{repo}/main")
    assert "created branch 'dev'" in out
    listing = lakectl("branch", "list", f"lakefs://{repo}").splitlines()
    branches = dict(line.split("\t") for line in listing if line.strip())
    assert set(branches) == {"main", "dev"} and branches["main"] == branches["dev"]
    shown = lakectl("branch", "show", f"lakefs://{repo}/dev")
    assert f"Commit ID: {branches['dev']}" in shown
    lakectl("branch", "delete", f"lakefs://{repo}/dev", "--yes")
    assert "dev\t" not in lakectl("branch", "list", f"lakefs://{repo}")
    assert f"Repository '{repo}' deleted" in lakectl("repo", "delete", f"lakefs://{repo}", "--yes")
    assert f"{repo}\t" not in lakectl("repo", "list")


def test_objects_commit_log_diff_merge_and_tags(lakectl: Lakectl, repo: str) -> None:
    base = f"lakefs://{repo}"
    lakectl("branch", "create", f"{base}/dev", "--source", f"{base}/main")
    local = write(lakectl.cwd / repo / "a.txt", "hello lakectl\n")
    out = lakectl("fs", "upload", "-s", str(local), f"{base}/dev/data/a.txt")
    assert "Path: data/a.txt" in out and "Size: 14 bytes" in out
    top = lakectl("fs", "ls", f"{base}/dev/")
    assert top.split() == ["common_prefix", "data/"]
    assert paths(lakectl("fs", "ls", "-r", f"{base}/dev/")) == ["data/a.txt"]
    assert lakectl("fs", "cat", f"{base}/dev/data/a.txt") == "hello lakectl\n"
    stat = lakectl("fs", "stat", f"{base}/dev/data/a.txt")
    md5 = hashlib.md5(local.read_bytes()).hexdigest()
    assert f"Checksum: {md5}" in stat
    assert "+ added data/a.txt" in lakectl("diff", f"{base}/dev")

    out = lakectl("commit", f"{base}/dev", "-m", "add a", "--meta", "team=lake")
    assert 'Commit for branch "dev" completed.' in out
    commit_id = next(ln.split()[1] for ln in out.splitlines() if ln.startswith("ID: "))
    log = lakectl("log", f"{base}/dev", "--amount", "1")
    assert commit_id in log and "add a" in log and "team" in log and "lake" in log
    assert "add a" in lakectl("show", "commit", f"{base}/{commit_id}")
    assert "+ added data/a.txt" in lakectl("diff", f"{base}/main", f"{base}/dev")

    out = lakectl("merge", f"{base}/dev", f"{base}/main")
    assert 'Merged "dev" into "main"' in out
    assert lakectl("fs", "cat", f"{base}/main/data/a.txt") == "hello lakectl\n"
    assert "Created tag 'v1'" in lakectl("tag", "create", f"{base}/v1", f"{base}/main")
    tags = lakectl("tag", "list", base).split()
    assert tags[0] == "v1" and len(tags[1]) == 64
    assert lakectl("fs", "cat", f"{base}/v1/data/a.txt") == "hello lakectl\n"
    assert "already exists" in lakectl.fails("tag", "create", f"{base}/v1", f"{base}/main")
    lakectl("tag", "delete", f"{base}/v1", "--yes")
    assert lakectl("tag", "list", base).strip() == ""


def test_remove_reset_revert_and_cherry_pick(lakectl: Lakectl, repo: str) -> None:
    base = f"lakefs://{repo}"
    for name in ("a", "b"):
        local = write(lakectl.cwd / repo / f"{name}.csv", f"{name}\n")
        lakectl("fs", "upload", "-s", str(local), f"{base}/main/t/{name}.csv")
    lakectl("commit", f"{base}/main", "-m", "two files")

    lakectl("fs", "rm", f"{base}/main/t/a.csv")
    assert "- removed t/a.csv" in lakectl("diff", f"{base}/main")
    lakectl("branch", "reset", f"{base}/main", "--yes")
    assert lakectl("diff", f"{base}/main").strip() == f"Ref: {base}/main"
    lakectl("fs", "rm", "-r", f"{base}/main/t/")
    lakectl("branch", "reset", f"{base}/main", "--prefix", "t/", "--yes")
    assert paths(lakectl("fs", "ls", "-r", f"{base}/main/")) == ["t/a.csv", "t/b.csv"]

    out = lakectl("branch", "revert", f"{base}/main", "main", "--yes")
    assert "successfully reverted" in out
    assert lakectl("fs", "ls", "-r", f"{base}/main/").strip() == ""
    assert "404" in lakectl.fails("fs", "stat", f"{base}/main/t/a.csv")
    out = lakectl("cherry-pick", f"{base}/main~1", f"{base}/main")
    assert 'Commit for branch "main" completed.' in out
    assert lakectl("fs", "cat", f"{base}/main/t/b.csv") == "b\n"


def test_merge_conflicts_and_strategies(lakectl: Lakectl, repo: str) -> None:
    base = f"lakefs://{repo}"
    for branch in ("left", "right"):
        lakectl("branch", "create", f"{base}/{branch}", "--source", f"{base}/main")
        local = write(lakectl.cwd / repo / branch, f"{branch}\n")
        lakectl("fs", "upload", "-s", str(local), f"{base}/{branch}/same.txt")
        lakectl("commit", f"{base}/{branch}", "-m", branch)
    lakectl("merge", f"{base}/left", f"{base}/main")
    assert "Conflict found." in lakectl.fails("merge", f"{base}/right", f"{base}/main")
    lakectl("merge", f"{base}/right", f"{base}/main", "--strategy", "source-wins")
    assert lakectl("fs", "cat", f"{base}/main/same.txt") == "right\n"


def test_directories_up_and_down(lakectl: Lakectl, repo: str) -> None:
    base = f"lakefs://{repo}"
    tree = lakectl.cwd / repo / "tree"
    write(tree / "one.csv", "1\n")
    write(tree / "sub" / "two.csv", "2\n")
    out = lakectl("fs", "upload", "-r", "-s", str(tree), f"{base}/main/up/")
    assert "Uploaded: 2" in out
    listed = paths(lakectl("fs", "ls", "-r", f"{base}/main/up/"))
    assert listed == ["up/one.csv", "up/sub/two.csv"]
    down = lakectl.cwd / repo / "down"
    assert "Downloaded: 2" in lakectl("fs", "download", "-r", f"{base}/main/up/", str(down))
    assert (down / "sub" / "two.csv").read_text() == "2\n"

    clone = lakectl.cwd / repo / "clone"
    lakectl("commit", f"{base}/main", "-m", "up")
    assert "Successfully cloned" in lakectl("local", "clone", f"{base}/main/up/", str(clone))
    write(clone / "three.csv", "3\n")
    assert "three.csv" in lakectl("local", "status", str(clone))
    assert 'Commit for branch "main" completed.' in lakectl(
        "local", "commit", str(clone), "-m", "from a clone"
    )
    assert lakectl("fs", "cat", f"{base}/main/up/three.csv") == "3\n"


def test_import_of_a_directory(lakectl: Lakectl, repo: str) -> None:
    source = lakectl.cwd / repo / "export"
    write(source / "day1.csv", "id\n1\n")
    write(source / "nested" / "day2.csv", "id\n2\n")
    base = f"lakefs://{repo}"
    out = lakectl(
        "import", "--from", f"local://{source}/", "--to", f"{base}/main/raw/", "-m", "load"
    )
    assert 'Import of 2 object(s) into "main" completed.' in out
    assert lakectl("fs", "cat", f"{base}/main/raw/nested/day2.csv") == "id\n2\n"
    assert "load" in lakectl("log", f"{base}/main", "--amount", "1")


def test_branch_protection(lakectl: Lakectl, repo: str) -> None:
    base = f"lakefs://{repo}"
    lakectl("branch-protect", "add", base, "main")
    assert lakectl("branch-protect", "list", base).split() == ["main"]
    local = write(lakectl.cwd / repo / "p.txt", "p\n")
    refused = lakectl.fails("fs", "upload", "-s", str(local), f"{base}/main/p.txt")
    assert "cannot write to protected branch" in refused and "403" in refused
    lakectl("branch-protect", "delete", base, "main")
    lakectl("fs", "upload", "-s", str(local), f"{base}/main/p.txt")


def test_errors_a_script_sees(lakectl: Lakectl, repo: str) -> None:
    missing = unique("missing")
    assert "404" in lakectl.fails("fs", "cat", f"lakefs://{missing}/main/x")
    assert "404" in lakectl.fails("branch", "show", f"lakefs://{repo}/nope")
    assert "400" in lakectl.fails("commit", f"lakefs://{repo}/main", "-m", "nothing")
    assert "Valid configuration" in lakectl("doctor")
    assert f"User ID:          {lakectl_key(lakectl)}" in lakectl("identity")


def lakectl_key(lakectl: Lakectl) -> str:
    settings = yaml.safe_load((Path(lakectl.env["HOME"]) / ".lakectl.yaml").read_text())
    return str(settings["credentials"]["access_key_id"])


def test_every_command_reported_its_usage(lakectl: Lakectl, server: LakeFS) -> None:
    """lakectl posts a usage event for each command; the server accepts them (204)."""
    lakectl("repo", "list")
    assert server.tap.checked["POST /api/v1/statistics -> 204"] >= 1
    assert not [k for k in server.tap.checked if k.startswith("POST /api/v1/statistics -> 4")]
