"""The ``cli`` fixture: ``graveler`` run in-process with ``--json`` over a fresh home."""

from __future__ import annotations

import json

import pytest

from graveler.cli import main


@pytest.fixture
def cli(tmp_path, capsysbinary):
    home = tmp_path / "home"

    def run(*args: str, code: int = 0) -> object:
        """Runs ``graveler --home HOME --json ARGS``; the JSON document, or the one-line error
        when ``code`` is not 0."""
        rc = main(["--home", str(home), "--json", *args])
        out, err = capsysbinary.readouterr()
        assert rc == code, (args, rc, err.decode())
        if code != 0:
            assert err.decode().count("\n") == 1, "errors are one line on stderr"
            return err.decode()
        return json.loads(out) if out.strip() else None

    run.home = home  # type: ignore[attr-defined]
    return run
