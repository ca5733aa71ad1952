"""Actions: the recorded hook runs of a repository (graveler's hooks and action files, see
:mod:`graveler.hooks`), as lakeFS's action runs.

A run is one event (``pre-commit``, ``post-merge``...) and the hooks it ran; each hook of a
run is named by its position (``0000``, ``0001``...), which is its ``hook_run_id``. A hook's
"output" is its record as text (kind, status, times, error) followed by what the hook
answered: a webhook's response status and body, or the text a Python hook returned.
"""

from __future__ import annotations

from graveler.core.errors import NotFound
from graveler.core.hookevents import HookResult, HookRun
from graveler.server.lakefs import encode
from graveler.server.lakefs.http import Call, Reply, json_reply
from graveler.server.lakefs.routing import Route, route


def list_runs(call: Call) -> Reply:
    amount = call.amount()
    runs = call.repository().hook_runs(
        branch=call.arg("branch") or None,
        commit_id=call.arg("commit") or None,
        after=call.arg("after") or None,
        amount=amount + 1,
    )
    results = [encode.action_run(r) for r in runs[:amount]]
    more = runs[amount - 1].run_id if len(runs) > amount else None
    return json_reply(encode.page(results, more))


def get_run(call: Call) -> Reply:
    return json_reply(encode.action_run(_run(call)))


def list_run_hooks(call: Call) -> Reply:
    hooks = _numbered(_run(call))
    after = call.arg("after") or ""
    amount = call.amount()
    chosen = [(i, h) for i, h in hooks if i > after]
    results = [encode.hook_run(i, h) for i, h in chosen[:amount]]
    more = chosen[amount - 1][0] if len(chosen) > amount else None
    return json_reply(encode.page(results, more))


def get_hook_output(call: Call) -> Reply:
    wanted = call.params["hook_run_id"]
    for hook_run_id, hook in _numbered(_run(call)):
        if hook_run_id == wanted:
            text = _output(hook)
            name = f"{call.params['run_id']}-{hook_run_id}.log"
            disposition = ("Content-Disposition", f'attachment; filename="{name}"')
            return Reply(200, text.encode(), "application/octet-stream", [disposition])
    raise NotFound(f"run {call.params['run_id']!r} has no hook {wanted!r}")


def _run(call: Call) -> HookRun:
    return call.repository().hook_run(call.params["run_id"])


def _numbered(run: HookRun) -> list[tuple[str, HookResult]]:
    return [(f"{i:04d}", h) for i, h in enumerate(run.hooks)]


def _output(hook: HookResult) -> str:
    lines = [
        f"hook {hook.hook_id} ({hook.kind}) of action {hook.action or '(registered in Python)'}",
        f"started {encode.rfc3339(hook.started)}, ended {encode.rfc3339(hook.ended)}",
        f"status: {hook.status.value}",
    ]
    if hook.error:
        lines.append(f"error: {hook.error}")
    text = "\n".join(lines) + "\n"
    if hook.output is not None:
        text += "output:\n" + hook.output + ("" if hook.output.endswith("\n") else "\n")
    return text


_A = "/repositories/{repository}/actions/runs"
ROUTES: list[Route] = [
    route("GET", _A, list_runs),
    route("GET", _A + "/{run_id}", get_run),
    route("GET", _A + "/{run_id}/hooks", list_run_hooks),
    route("GET", _A + "/{run_id}/hooks/{hook_run_id}/output", get_hook_output),
]
