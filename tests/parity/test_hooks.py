"""Hooks registered in Python (client and entry points): pre-hooks refuse operations and
change nothing, post-hooks cannot undo them, and every run is recorded."""

from __future__ import annotations

import sys
import textwrap

import pytest

from graveler import HookContext, HookEvent, HookRegistry
from graveler.core.errors import HookAborted, InvalidArgument, NotFound, TagNotFound
from graveler.versioning.hooks.registry import installed_entry_points


class Recorder:
    """A hook that records its calls and fails while ``error`` is set."""

    def __init__(self) -> None:
        self.calls: list[HookContext] = []
        self.error: Exception | None = None

    def __call__(self, ctx: HookContext) -> None:
        self.calls.append(ctx)
        if self.error is not None:
            raise self.error


def _state(repo):
    """Everything a failed operation must leave as it was: branches and their heads, tags,
    commits, staged changes. (A failed pre-commit hook leaves the staged changes in a sealed
    staging token, as lakeFS does; that is invisible to every read and operation.)"""
    return (
        [(b.name, b.commit_id, b.protected) for b in repo.list_branches()],
        repo.list_tags(),
        sorted(c.id for c in repo.refs.iter_commits(repo.name)),
        [(d.type, d.path) for d in repo.diff_uncommitted("main")],
    )


@pytest.mark.parametrize("failing", [False, True])
def test_pre_commit_hook(make_repo, failing):
    # Ported from lakeFS pkg/graveler/graveler_test.go TestGraveler_PreCommitHook (hook no
    # error, hook error; "without hook" is every other test).
    hook = Recorder()
    hooks = HookRegistry()
    hooks.add("pre-commit", hook)
    repo = make_repo(hooks)
    repo.put("main", "a", b"1")
    before = _state(repo)
    hook.error = ValueError("something bad") if failing else None
    if failing:
        with pytest.raises(HookAborted, match=r"pre-commit hook failed .*something bad") as info:
            repo.commit("main", "message", metadata={"key1": "val1"}, committer="committer")
        assert _state(repo) == before  # nothing changed: head, commits, staged changes
        run = repo.hook_run(info.value.run_id)
        assert not run.passed and "something bad" in run.hooks[0].error
        hook.error = None
    c = repo.commit("main", "message", metadata={"key1": "val1"}, committer="committer")
    ctx = hook.calls[-1]
    assert (ctx.repository, ctx.branch, ctx.event) == ("lake", "main", "pre-commit")
    assert ctx.commit.message == "message" and ctx.commit.metadata == {"key1": "val1"}
    assert ctx.commit.id == c.id  # the proposed commit is the one that lands
    assert ctx.get("a") == b"1" and [e.path for e in ctx.iter_objects()] == ["a"]
    assert repo.get("main", "a") == b"1"


def test_pre_merge_hook(make_repo):
    # Ported from lakeFS pkg/graveler/graveler_test.go TestGraveler_PreMergeHook.
    hook = Recorder()
    hooks = HookRegistry()
    hooks.add(["pre-merge"], hook, branches=["dest*"])
    repo = make_repo(hooks)
    repo.create_branch("destination", "main")
    repo.create_branch("src", "main")
    repo.put("src", "s", b"1")
    source = repo.commit("src", "source work")
    repo.put("destination", "d", b"1")
    dest = repo.commit("destination", "dest work")
    hook.error = RuntimeError("first error")
    before = _state(repo)
    with pytest.raises(HookAborted, match="first error"):
        repo.merge(source.id, "destination", message="message", metadata={"key1": "val1"})
    assert _state(repo) == before and repo.branch("destination").commit_id == dest.id
    hook.error = None
    merged = repo.merge(
        source.id, "destination", message="message", metadata={"key1": "val1"}
    ).commit
    ctx = hook.calls[-1]
    assert ctx.branch == "destination" and ctx.source_ref == source.id
    assert ctx.commit.id == merged.id and ctx.commit.parents == (dest.id, source.id)
    assert ctx.commit.metadata == {"key1": "val1", ".lakefs.merge.strategy": "default"}
    repo.merge("destination", "main")  # "main" does not match dest*: no call
    assert len(hook.calls) == 2


def test_branch_and_tag_pre_hooks(make_repo):
    # Ported from lakeFS pkg/graveler/graveler_test.go TestGraveler_PreCreateBranchHook,
    # TestGraveler_PreDeleteBranchHook, TestGraveler_PreCreateTagHook,
    # TestGraveler_PreDeleteTagHook.
    hooks = HookRegistry()
    hook = Recorder()
    events = ["pre-create-branch", "pre-delete-branch", "pre-create-tag", "pre-delete-tag"]
    hooks.add(events, hook)
    repo = make_repo(hooks)
    head = repo.branch("main").commit_id
    hook.error = ValueError("no")
    with pytest.raises(HookAborted):
        repo.create_branch("b1", "main")
    with pytest.raises(HookAborted):
        repo.create_tag("t1", "main")
    assert repo.list_tags() == [] and [b.name for b in repo.list_branches()] == ["main"]
    hook.error = None
    repo.create_branch("b1", "main")
    repo.create_tag("t1", "main")
    assert [(c.event, c.branch, c.tag, c.commit.id) for c in hook.calls[-2:]] == [
        ("pre-create-branch", "b1", None, head),
        ("pre-create-tag", None, "t1", head),
    ]
    hook.error = ValueError("keep them")
    with pytest.raises(HookAborted):
        repo.delete_branch("b1")
    with pytest.raises(HookAborted):
        repo.delete_tag("t1")
    assert repo.branch("b1") and repo.tag("t1")
    hook.error = None
    repo.delete_branch("b1")
    repo.delete_tag("t1")
    with pytest.raises(TagNotFound):
        repo.tag("t1")


def test_cherry_pick_and_revert_hooks(make_repo):
    # Ported from lakeFS pkg/graveler/graveler_test.go TestGraveler_CherryPickHooks, and the
    # pre-revert hook of TestGraveler_Revert.
    hooks = HookRegistry()
    pre, post = Recorder(), Recorder()
    hooks.add(["pre-cherry-pick", "pre-revert"], pre)
    hooks.add(["post-cherry-pick", "post-revert"], post)
    repo = make_repo(hooks)
    repo.create_branch("dev", "main")
    repo.put("dev", "x", b"1")
    picked = repo.commit("dev", "x")
    pre.error = ValueError("cherry pick hook error")
    with pytest.raises(HookAborted, match="cherry pick hook error"):
        repo.cherry_pick(
            "main", picked.id, message="cherry pick message", metadata={"key1": "val1"}
        )
    with pytest.raises(HookAborted):
        repo.revert("dev", picked.id)
    assert post.calls == []
    pre.error = None
    new = repo.cherry_pick(
        "main", picked.id, message="cherry pick message", metadata={"key1": "val1"}
    )
    assert pre.calls[-1].commit.id == new.id and post.calls[-1].commit.id == new.id
    assert pre.calls[-1].commit.message == "cherry pick message"
    reverted = repo.revert("main", new.id)
    assert [c.event for c in post.calls] == ["post-cherry-pick", "post-revert"]
    assert post.calls[-1].commit.id == reverted.id


def test_post_hook_failure_is_recorded_not_raised(make_repo):
    hooks = HookRegistry()
    post = Recorder()
    post.error = ValueError("post failed")
    hooks.add("post-commit", post, name="notify")
    repo = make_repo(hooks)
    repo.put("main", "a", b"1")
    c = repo.commit("main", "landed")
    assert repo.branch("main").commit_id == c.id
    (run,) = repo.hook_runs(commit_id=c.id)
    assert run.event is HookEvent.POST_COMMIT and not run.passed
    assert run.hooks[0].hook_id == "notify" and "post failed" in run.hooks[0].error


def test_runs_are_listed_newest_first_and_filtered(make_repo):
    hooks = HookRegistry()
    hooks.add(["pre-commit", "post-commit", "pre-create-branch"], lambda ctx: None, name="ok")
    repo = make_repo(hooks)
    repo.create_branch("dev", "main")
    repo.put("dev", "a", b"1")
    c = repo.commit("dev", "one")
    runs = repo.hook_runs()
    assert [r.event.value for r in runs] == ["post-commit", "pre-commit", "pre-create-branch"]
    assert all(r.passed and r.repository == "lake" for r in runs)
    assert [r.event.value for r in repo.hook_runs(branch="dev", commit_id=c.id)] == [
        "post-commit",
        "pre-commit",
    ]
    assert [r.run_id for r in repo.hook_runs(after=runs[0].run_id, amount=1)] == [runs[1].run_id]
    assert repo.hook_run(runs[2].run_id) == runs[2]
    with pytest.raises(NotFound):
        repo.hook_run("no-such-run")
    other = make_repo()  # another client of the same database sees the same runs
    assert [r.run_id for r in other.hook_runs()] == [r.run_id for r in runs]


def test_repositories_filter_and_bad_registrations(make_repo):
    hooks = HookRegistry()
    hooks.add("pre-commit", lambda ctx: 1 / 0, repositories=["elsewhere"])
    repo = make_repo(hooks)
    repo.put("main", "a", b"1")
    repo.commit("main", "not for this repository")
    assert repo.hook_runs() == []
    with pytest.raises(InvalidArgument, match="unknown hook event"):
        hooks.add("pre-push", lambda ctx: None)
    with pytest.raises(InvalidArgument, match="callable"):
        hooks.add("pre-commit", "not callable")  # type: ignore[arg-type]


@pytest.fixture
def entry_point_package(tmp_path, monkeypatch):
    """An installed distribution with a graveler.hooks entry point (a dist-info on sys.path)."""

    def install(source: str) -> None:
        root = tmp_path / "site"
        (root / "myhooks-1.0.dist-info").mkdir(parents=True)
        (root / "myhooks-1.0.dist-info" / "METADATA").write_text("Name: myhooks\nVersion: 1.0\n")
        (root / "myhooks-1.0.dist-info" / "entry_points.txt").write_text(
            "[graveler.hooks]\nmine = myhooks_plugin:register\n"
        )
        (root / "myhooks_plugin.py").write_text(textwrap.dedent(source))
        monkeypatch.syspath_prepend(str(root))
        sys.modules.pop("myhooks_plugin", None)
        installed_entry_points.cache_clear()

    yield install
    sys.modules.pop("myhooks_plugin", None)
    installed_entry_points.cache_clear()


def test_entry_point_hooks(make_repo, entry_point_package):
    entry_point_package(
        """
        def register(hooks):
            @hooks.on("pre-commit", branches=["main"])
            def no_tmp(ctx):
                if any(e.path.endswith(".tmp") for e in ctx.iter_objects()):
                    raise ValueError("no .tmp files on main")
        """
    )
    repo = make_repo()
    repo.put("main", "x.tmp", b"1")
    with pytest.raises(HookAborted, match=r"no \.tmp files"):
        repo.commit("main", "tmp")
    repo.delete("main", "x.tmp")
    repo.put("main", "x.csv", b"1")
    repo.commit("main", "fine")


def test_a_broken_entry_point_fails_pre_events(make_repo, entry_point_package):
    entry_point_package("raise ImportError('plugin is broken')\n")
    repo = make_repo()
    repo.put("main", "a", b"1")
    with pytest.raises(HookAborted, match=r"entry point .mine.*plugin is broken"):
        repo.commit("main", "x")


def test_entry_points_are_scanned_only_when_a_distribution_may_declare_some(tmp_path, monkeypatch):
    """Without a distribution naming the group, importlib.metadata is not even imported (its
    import and scan cost every commit of a short-lived process tens of milliseconds); with
    one, or with anything the text search cannot read (a zip, an egg), it runs as before."""
    import subprocess

    from graveler.versioning.hooks.registry import _declared_anywhere

    assert not _declared_anywhere("graveler.versioning.hooks.no-such-group")
    assert _declared_anywhere("console_scripts")
    site = tmp_path / "site"
    (site / "other-1.0.dist-info").mkdir(parents=True)
    (site / "other-1.0.dist-info" / "entry_points.txt").write_text("[x]\na = b:c\n")
    monkeypatch.syspath_prepend(str(site))
    assert not _declared_anywhere("graveler.versioning.hooks.no-such-group")
    (site / "old.egg").mkdir()
    assert _declared_anywhere("graveler.versioning.hooks.no-such-group")
    code = (
        "import sys; from graveler.versioning.hooks.registry import installed_entry_points; "
        "assert installed_entry_points('graveler.hooks') == (); "
        "print('importlib.metadata' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_importlib_metadata_backports_finder_does_not_force_a_scan(monkeypatch):
    """Libraries that import the ``importlib_metadata`` backport put its finder on
    ``sys.meta_path``; it reads the same directories, so the text search still decides."""
    from graveler.versioning.hooks.registry import _declared_anywhere

    class MetadataPathFinder:  # the backport's finder, as it stands on sys.meta_path
        @classmethod
        def find_distributions(cls, context=None):
            return iter(())

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, MetadataPathFinder])
    assert not _declared_anywhere("graveler.hooks.no-such-group")

    class SomeOtherFinder(MetadataPathFinder):
        pass

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, SomeOtherFinder])
    assert _declared_anywhere("graveler.hooks.no-such-group")
