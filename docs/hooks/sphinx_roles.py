"""MkDocs hook: Sphinx roles in docstrings shown as plain code in the API reference.

The docstrings use Sphinx's inline roles (``:class:`~graveler.errors.NotFound```,
``:func:`collect_garbage```), which Markdown renders as the role's name followed by code. In
the rendered page, ``:role:<code>X</code>`` becomes ``<code>X</code>``, and a leading ``~``
keeps only the last dotted part, as Sphinx does.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):<code>(~?)([^<]*)</code>")


def _code(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if tilde else target}</code>"


def strip_roles(html: str) -> str:
    """The page's HTML with every Sphinx role before a code span removed."""
    return _ROLE.sub(_code, html)


def on_page_content(html: str, **_: Any) -> str:
    return strip_roles(html)
