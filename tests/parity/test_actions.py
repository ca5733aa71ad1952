"""Action files (``_graveler_actions/*.yaml``, lakeFS's format): parsing, matching, and the
hooks they name: Python callables and webhooks, each only when the operator allows it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import SimpleNamespace

import pytest

from graveler.core.errors import HookAborted, InvalidAction
from graveler.core.hookevents import (
    MAX_HOOK_OUTPUT,
    HookEvent,
    HookResult,
    HookRun,
    HookStatus,
    clip_output,
)
from graveler.storage.refs.rows import hook_run_row, to_hook_run
from graveler.versioning.hooks.actions import Action, load_actions, matched_actions, parse_action
from tests.parity import hookfuncs

URL = "https://api.example.com/webhook1?t=1za2PbkZK1bd4prMuTDr6BeEQwWYcX2R"

# Ported from lakeFS pkg/actions/action_test.go TestAction_ReadAction and its testdata files
# (lua and airflow cases become "unsupported type": this build runs python and webhook hooks).
FULL = f"""
name: Good merge
description: set of checks to verify that branch is good
on:
  pre-merge:
    branches:
      - main
      - stage
  pre-commit:
    branches:
      - feature-*
  post-commit:
hooks:
  - id: no_temp
    type: webhook
    description: checking no temporary files found
    properties:
      url: "{URL}"
      query_params:
        disallow: ["user_", "private_"]
        prefix: public/
  - id: no_freeze
    type: webhook
    description: check production is not in dev freeze
    properties:
      url: "{URL}"
"""
READ_ACTION = [
    ("full", FULL, None),
    (
        "required",
        f"name: action name\non:\n  pre-merge:\n    branches: [main]\nhooks:\n"
        f'  - id: no_temp\n    type: webhook\n    properties:\n      url: "{URL}"\n',
        None,
    ),
    (
        "duplicate id",
        "name: invalid duplicate id\non:\n  pre-merge: {}\nhooks:\n"
        f'  - id: hook1\n    type: webhook\n    properties: {{url: "{URL}"}}\n'
        f'  - id: hook1\n    type: webhook\n    properties: {{url: "{URL}"}}\n',
        "duplicate ID",
    ),
    (
        "invalid id",
        "name: invalid ID\non:\n  pre-merge: {}\nhooks:\n"
        f'  - id: not valid to use space\n    type: webhook\n    properties: {{url: "{URL}"}}\n',
        "missing ID",
    ),
    (
        "invalid hook type",
        "name: invalid hook type\non:\n  pre-merge: {}\nhooks:\n"
        "  - id: no_temp\n    type: command\n",
        "type 'command' unknown",
    ),
    (
        "lua is unsupported",
        "name: lua\non:\n  pre-merge: {}\nhooks:\n"
        "  - id: lua_hook\n    type: lua\n    properties: {script: 'print(1)'}\n",
        "unknown",
    ),
    (
        "invalid event type",
        "name: Some checks\non:\n  not-a-valid-event:\n    branches: [main]\n"
        f'hooks:\n  - id: my-webhook\n    type: webhook\n    properties: {{url: "{URL}"}}\n',
        "event 'not-a-valid-event' is not supported",
    ),
    ("invalid yaml", "not a yaml file", "expected a mapping"),
    ("broken yaml", "name: [unclosed", "not valid YAML"),
    (
        "invalid parameter in tag event",
        "name: invalid parameter for tag event\non:\n"
        "  pre-create-tag:\n    branches: [main]\nhooks:\n  - id: no_temp\n    type: webhook\n",
        "'branches' is not supported in tag event types",
    ),
    (
        "webhook missing url",
        "name: Webhook missing url\non:\n  pre-commit:\nhooks:\n"
        "  - id: my_webhook\n    type: webhook\n    properties:\n      timeout: 30s\n",
        "'url' must be supplied in properties",
    ),
    (
        "python missing callable",
        "name: py\non:\n  pre-commit:\nhooks:\n  - id: check\n    type: python\n",
        "'callable' must be supplied in properties",
    ),
    ("missing name", "on:\n  pre-commit:\nhooks: []\n", "'name' is required"),
    ("missing on", "name: nothing\nhooks: []\n", "'on' is required"),
    ("python object tag", "!!python/object/apply:os.system ['true']\n", "not valid YAML"),
]


@pytest.mark.parametrize(("name", "text", "error"), READ_ACTION, ids=[r[0] for r in READ_ACTION])
def test_read_action(name, text, error):
    if error is None:
        action = parse_action(text)
        if name == "full":
            # lakeFS validateActionFull
            assert set(action.on) == {
                HookEvent.PRE_MERGE,
                HookEvent.PRE_COMMIT,
                HookEvent.POST_COMMIT,
            }
            assert HookEvent.POST_MERGE not in action.on
            assert [h.id for h in action.hooks] == ["no_temp", "no_freeze"]
        return
    with pytest.raises(InvalidAction, match=error):
        parse_action(text)


# Ported from lakeFS pkg/actions/action_test.go TestAction_Match.
MATCH = [
    ({"pre-commit": ["main"]}, "pre-commit", "x", False),
    ({}, "pre-merge", None, False),
    ({"pre-merge": []}, "pre-merge", None, True),
    ({"pre-merge": []}, "pre-commit", None, False),
    ({"pre-commit": []}, "pre-merge", None, False),
    ({"pre-commit": []}, "pre-commit", None, True),
    ({"pre-commit": [], "pre-merge": []}, "pre-commit", None, True),
    ({"pre-commit": [], "pre-merge": []}, "pre-merge", None, True),
    ({"pre-commit": ["main"]}, "pre-commit", "main", True),
    ({"pre-commit": ["main"]}, "pre-commit", "x", False),
    ({"pre-commit": ["*-feature"]}, "pre-commit", "new-feature", True),
    ({"pre-commit": ["a1", "b1"]}, "pre-commit", "b1", True),
    ({"pre-create-tag": []}, "pre-create-tag", None, True),
    ({"pre-create-tag": []}, "pre-create-tag", "main", True),
    ({"post-create-tag": []}, "post-create-tag", "main", True),
    ({"pre-delete-tag": []}, "pre-delete-tag", "main", True),
    ({"post-delete-tag": []}, "post-delete-tag", "main", True),
    ({"pre-create-branch": ["main"]}, "pre-create-branch", "main", True),
    ({"post-create-branch": ["main"]}, "post-create-branch", "main", True),
    ({"pre-delete-branch": ["main"]}, "pre-delete-branch", "main", True),
    ({"post-delete-branch": ["main"]}, "post-delete-branch", "main", True),
]


def _action(on: dict[str, list[str]], name: str = "a") -> Action:
    return Action(name, {HookEvent(k): tuple(v) for k, v in on.items()}, ())


@pytest.mark.parametrize(("on", "event", "branch", "want"), MATCH)
def test_action_match(on, event, branch, want):
    assert _action(on).matches(HookEvent(event), branch) is want


def test_action_match_invalid_pattern():
    # lakeFS TestAction_Match "pre-commit branch invalid - on pre-commit main"
    with pytest.raises(InvalidAction):
        _action({"pre-commit": ["\\"]}).matches(HookEvent.PRE_COMMIT, "main")


def test_load_and_match_actions():
    # Ported from lakeFS pkg/actions/action_test.go TestLoadActions and TestMatchedActions.
    one = (
        "name: some-action\non:\n  pre-commit:\n    branches: [main]\nhooks:\n"
        f'  - id: hook_id_1\n    type: webhook\n    properties: {{url: "{URL}"}}\n'
    )
    two = "name: other\non:\n  pre-commit:\nhooks: []\n"
    actions = load_actions([("a.yaml", one.encode()), ("b.yaml", two.encode())])
    assert [a.name for a in actions] == ["some-action", "other"]
    assert [a.name for a in matched_actions(actions, HookEvent.PRE_COMMIT, "main")] == [
        "some-action",
        "other",
    ]
    assert [a.name for a in matched_actions(actions, HookEvent.PRE_COMMIT, "dev")] == ["other"]
    assert matched_actions(actions, HookEvent.PRE_MERGE, "main") == []
    with pytest.raises(InvalidAction, match="used twice"):
        load_actions([("a.yaml", one.encode()), ("c.yaml", one.encode())])
    with pytest.raises(InvalidAction):
        load_actions([("a.yaml", one.encode()), ("bad.yaml", b"not a yaml file")])


# --- hooks from action files, end to end ------------------------------------------------------

PY_ACTION = """
name: owners
on:
  pre-commit:
    branches: [main]
hooks:
  - id: owner
    type: python
    properties:
      callable: tests.parity.hookfuncs:require_owner
      params: {key: team}
"""


def _add_action(repo, path: str, text: str, branch: str = "main") -> None:
    repo.put(branch, f"_graveler_actions/{path}", text.encode())
    repo.commit(branch, f"action {path}", metadata={"team": "data"})


def test_python_hook_from_an_action_file_needs_the_operator(make_repo):
    repo = make_repo()  # no hook_modules: the file names code nobody allowed
    repo.put("main", "_graveler_actions/owners.yaml", PY_ACTION.encode())
    hookfuncs.CALLS.clear()
    with pytest.raises(HookAborted, match=r"not allowed.*hook_modules"):
        repo.commit("main", "add the action", metadata={"team": "data"})
    assert hookfuncs.CALLS == []  # never imported or called
    allowed = make_repo(hook_modules="tests.parity")
    allowed.commit("main", "add the action", metadata={"team": "data"})
    ctx = hookfuncs.CALLS[-1]
    assert ctx.action == "owners" and ctx.hook_id == "owner" and ctx.params == {"key": "team"}
    allowed.put("main", "x", b"1")
    head = allowed.branch("main").commit_id
    with pytest.raises(HookAborted, match="commit needs metadata 'team'"):
        allowed.commit("main", "no team")
    assert allowed.branch("main").commit_id == head
    allowed.commit("main", "with team", metadata={"team": "data"})
    allowed.create_branch("dev", "main")  # the action covers pre-commit on main only
    allowed.put("dev", "y", b"1")
    allowed.commit("dev", "no team needed here")


def test_action_python_names_are_confined(make_repo):
    repo = make_repo(hook_modules="tests.parity.hookfuncs")
    hookfuncs.CALLS.clear()
    for callable_, error in [
        ("tests.parity.hookfuncs:_private", "not a 'package.module:function' name"),
        ("os:system", "not allowed"),
        ("tests.parity.hookfuncs:missing", "cannot be loaded"),
        ("tests.parityx.mod:f", "not allowed"),  # a sibling package, not a sub-package
    ]:
        text = PY_ACTION.replace("tests.parity.hookfuncs:require_owner", callable_)
        repo.put("main", "_graveler_actions/owners.yaml", text.encode())
        with pytest.raises(HookAborted, match=error):
            repo.commit("main", "try", metadata={"team": "x"})
    assert hookfuncs.CALLS == []


def test_schema_check_reads_the_tree_being_committed(make_repo):
    repo = make_repo(hook_modules="tests.parity")
    _add_action(
        repo,
        "csv.yml",
        "name: csv\non:\n  pre-merge:\n    branches: [main]\n"
        "hooks:\n  - id: csv\n    type: python\n"
        "    properties: {callable: 'tests.parity.hookfuncs:csv_only'}\n",
    )
    repo.create_branch("load", "main")
    repo.put("load", "tables/a.csv", b"x\n")
    repo.put("load", "tables/b.json", b"{}")
    repo.commit("load", "mixed")
    with pytest.raises(HookAborted, match=r"not CSV: tables/b\.json"):
        repo.merge("load", "main")
    assert "tables/a.csv" not in {e.path for e in repo.iter_objects("main")}
    repo.delete("load", "tables/b.json")
    repo.commit("load", "csv only")
    merged = repo.merge("load", "main")
    assert repo.get("main", "tables/a.csv") == b"x\n"
    # The text the hook returned is its output; a failed hook has none, only its error.
    passed, failed = repo.hook_runs(branch="main")[:2]
    assert passed.commit_id == merged.commit.id
    assert passed.hooks[0].output == "1 files under tables/, all CSV [ok]"
    assert failed.hooks[0].output is None and "not CSV" in (failed.hooks[0].error or "")


def test_hook_output_is_cut_at_its_limit():
    text = "x" * (MAX_HOOK_OUTPUT + 10)
    cut = clip_output(text)
    assert cut.startswith("x" * MAX_HOOK_OUTPUT) and not cut.startswith("x" * (MAX_HOOK_OUTPUT + 1))
    assert cut.endswith(f"[cut: the output held {MAX_HOOK_OUTPUT + 10:,} characters]\n")
    assert clip_output("short") == "short"


def test_a_broken_action_file_fails_pre_events(make_repo):
    repo = make_repo()
    repo.put("main", "_graveler_actions/bad.yaml", b"name: [unclosed")
    with pytest.raises(HookAborted, match="not valid YAML"):
        repo.commit("main", "broken")
    repo.put("main", "_graveler_actions/bad.yaml", b"name: ok\non:\n  post-commit:\nhooks: []\n")
    repo.commit("main", "fixed")  # an action without hooks runs nothing
    assert [r.passed for r in repo.hook_runs()] == [False]  # the broken file's run only


# --- webhooks -----------------------------------------------------------------------------------


class _Receiver(BaseHTTPRequestHandler):
    answers: list[int] = []
    bodies: list[bytes] = []
    received: list[tuple[str, dict[str, str], dict[str, object]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        status = self.answers.pop(0) if self.answers else 200
        self.send_response(status)
        if status in (301, 302, 307):
            self.send_header("Location", "http://127.0.0.1:9/elsewhere")
        body = self.bodies.pop(0) if self.bodies else b""
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, type[_Receiver]]]:
    """A local HTTP server on a free port; yields its base URL and the handler class."""
    handler = type("Receiver", (_Receiver,), {"answers": [], "bodies": [], "received": []})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _webhook_action(url: str) -> str:
    # The shape of lakeFS pkg/actions/service_test.go TestServiceRun's webhook.
    return f"""
name: notify
on:
  pre-commit: {{}}
hooks:
  - id: hook
    type: webhook
    properties:
      url: "{url}/webhook"
      timeout: 2m30s
      query_params:
        prefix: public/
        disallow: ["user_", "{{{{ ENV.GRAVELER_ACTIONS_PRIVATE }}}}"]
      headers:
        user: admin
        authorization: "Bearer {{{{ ENV.GRAVELER_ACTIONS_TOKEN }}}}"
"""


def test_webhook(make_repo, receiver, monkeypatch):
    # Ported from lakeFS pkg/actions/service_test.go TestServiceRun (the webhook hook).
    url, handler = receiver
    monkeypatch.setenv("GRAVELER_ACTIONS_PRIVATE", "private_")
    monkeypatch.setenv("GRAVELER_ACTIONS_TOKEN", "s3cr3t-token")
    repo = make_repo(hook_urls=url + "/")
    repo.put("main", "_graveler_actions/notify.yaml", _webhook_action(url).encode())
    handler.bodies.append(b'{"checked": 3}')
    c = repo.commit("main", "with webhook", metadata={"k": "v"})
    path, headers, body = handler.received[-1]
    assert path == "/webhook?prefix=public%2F&disallow=user_&disallow=private_"
    assert headers["user"] == "admin" and headers["authorization"] == "Bearer s3cr3t-token"
    assert body["event_type"] == "pre-commit" and body["action_name"] == "notify"
    assert body["hook_id"] == "hook" and body["repository_id"] == "lake"
    assert body["branch_id"] == "main" and body["commit_id"] == c.id
    assert body["commit_message"] == "with webhook" and body["commit_metadata"] == {"k": "v"}
    run = repo.hook_runs(commit_id=c.id)[0]
    assert run.passed and run.hooks[0].kind == "webhook" and run.hooks[0].action == "notify"
    # Its output is the answer: status and body; the URL without the query (it holds secrets).
    output = run.hooks[0].output
    assert output == (
        f'request: POST {url}/webhook\nresponse status: 200\nresponse body:\n{{"checked": 3}}'
    )


def test_webhook_failures(make_repo, receiver, monkeypatch):
    url, handler = receiver
    monkeypatch.setenv("GRAVELER_ACTIONS_PRIVATE", "private_")
    monkeypatch.setenv("GRAVELER_ACTIONS_TOKEN", "s3cr3t-token")
    denied = make_repo()
    denied.put("main", "_graveler_actions/notify.yaml", _webhook_action(url).encode())
    with pytest.raises(HookAborted, match=r"not allowed.*hook_urls"):
        denied.commit("main", "x")
    assert handler.received == []  # nothing was sent
    repo = make_repo(hook_urls=url + "/")
    for status in (500, 302):
        handler.answers.append(status)
        handler.bodies.append(f"refused with {status}: tables/x lacks an owner".encode())
        with pytest.raises(HookAborted, match=f"answered status {status}") as info:
            repo.commit("main", "x")
        run = repo.hook_run(info.value.run_id)
        assert "s3cr3t" not in str(run) and "s3cr3t" not in str(info.value)
        assert "private_" not in str(run)
        # Why it refused is in the output (what the receiver answered).
        output = run.hooks[0].output or ""
        assert f"response status: {status}" in output
        assert output.endswith(f"refused with {status}: tables/x lacks an owner")
    assert len(handler.received) == 2  # the redirect was not followed
    monkeypatch.delenv("GRAVELER_ACTIONS_TOKEN")  # lakeFS TestMissingEnvVar
    with pytest.raises(HookAborted, match="missing environment variable GRAVELER_ACTIONS_TOKEN"):
        repo.commit("main", "x")
    assert len(handler.received) == 2
    leaky = _webhook_action(url).replace("GRAVELER_ACTIONS_TOKEN", "AWS_SECRET_ACCESS_KEY")
    repo.put("main", "_graveler_actions/notify.yaml", leaky.encode())
    with pytest.raises(HookAborted, match="not available to hooks"):
        repo.commit("main", "x")
    other_host = make_repo(hook_urls="http://hooks.internal/")
    with pytest.raises(HookAborted, match="not allowed"):
        other_host.commit("main", "x")


def test_one_operation_reads_its_action_files_once(make_repo, monkeypatch):
    """The pre- and post- hooks of a commit see the same tree: its action files are read and
    parsed once (kept by metarange ID), not once per event."""
    from graveler.views import reads

    repo = make_repo()
    action = b"name: noop\non:\n  pre-commit:\n  post-commit:\nhooks: []\n"
    repo.put("main", "_graveler_actions/noop.yaml", action)
    read: list[str] = []
    real = reads.read_entry
    monkeypatch.setattr(reads, "read_entry", lambda r, e: read.append(e.path) or real(r, e))
    repo.commit("main", "with an action")
    assert read == ["_graveler_actions/noop.yaml"]


def test_hook_runs_recorded_before_outputs_were_kept_still_read():
    """Rows written before hooks had an output (no "output" member) decode with None."""
    now = datetime.now(UTC)
    hook = HookResult("h", "python", HookStatus.PASSED, now, now, "a", None, "said")
    run = HookRun("r1", "lake", HookEvent.PRE_COMMIT, HookStatus.PASSED, now, now, "c1", "main")
    row = hook_run_row(replace(run, hooks=(hook,)))
    assert to_hook_run(SimpleNamespace(**row)).hooks[0].output == "said"
    old = [{k: v for k, v in d.items() if k != "output"} for d in json.loads(row["hooks"])]
    (decoded,) = to_hook_run(SimpleNamespace(**{**row, "hooks": json.dumps(old)})).hooks
    assert decoded.output is None and decoded == replace(hook, output=None)
