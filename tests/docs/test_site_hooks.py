"""The MkDocs hooks under docs/hooks: the generated CLI reference and the Sphinx-role cleanup."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from graveler.cli.app import build_parser
from tests.docs.blocks import ROOT


def _hook(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_has_every_command_at_a_fixed_width(monkeypatch) -> None:
    hook = _hook("cli_reference")
    monkeypatch.setenv("COLUMNS", "200")
    page = hook.on_page_markdown(f"# CLI\n\n{hook.MARKER}\n")
    assert hook.MARKER not in page
    top = next(a for a in build_parser()._actions if a.dest == "command")
    for name in top.choices:  # type: ignore[union-attr]
        assert f"`graveler {name}`" in page and f"usage: graveler {name}" in page
    assert "#### `graveler repo create`" in page and "NAMESPACE_URI" in page
    assert max(len(line) for line in page.splitlines()) <= 88
    assert hook.on_page_markdown("no marker here") == "no marker here"


def test_sphinx_roles_become_plain_code() -> None:
    hook = _hook("sphinx_roles")
    html = (
        "see :class:<code>~graveler.core.errors.NotFound</code> and "
        ":func:<code>graveler.maintenance.gc.collect_garbage</code>, not :note:<code>x</code>"
    )
    assert hook.on_page_content(html) == (
        "see <code>NotFound</code> and <code>graveler.maintenance.gc.collect_garbage</code>, "
        "not :note:<code>x</code>"
    )
