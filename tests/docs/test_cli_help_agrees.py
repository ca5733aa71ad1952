"""What ``graveler serve --help`` says an option costs is what the docs say.

Reproduced before the fix: the help said ``--verify-reads`` costs "about a third of GET
throughput", docs/s3-gateway.md (and the measurement in docs/performance.md) about 40%.
"""

from __future__ import annotations

import re
import subprocess
import sys

from tests.docs.blocks import ROOT


def test_verify_reads_costs_the_same_in_help_and_docs():
    shown = subprocess.run(
        [sys.executable, "-m", "graveler.cli", "serve", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={"COLUMNS": "1000", "PATH": ""},
    ).stdout
    help_text = " ".join(shown.split())
    option = help_text[help_text.index("--verify-reads") :]
    cost = re.search(r"about (\d+)% of GET throughput", option)
    assert cost is not None, option[:300]
    docs = " ".join((ROOT / "docs" / "s3-gateway.md").read_text().split())
    paragraph = docs[docs.index("with `--verify-reads`") :][:600]
    assert f"about {cost.group(1)}% of GET throughput" in paragraph
