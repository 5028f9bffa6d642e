"""mkdocs hooks (``hooks:`` in ``mkdocs.yml``): the docstrings' Sphinx roles, read as code.

The docstrings cross-reference with Sphinx roles (``:class:`~.tools.ToolOptions```), which
mkdocstrings leaves as text before the code span. On the site the role is dropped and the name
shown as Sphinx would: ``~`` keeps the last component, a leading ``.`` (relative) is dropped.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|exc|data|obj):<code>([^<]*)</code>")


def _shown(match: re.Match[str]) -> str:
    target = match.group(1)
    if target.startswith("~"):
        target = target[1:].rsplit(".", 1)[-1]
    return f"<code>{target.lstrip('.')}</code>"


def on_page_content(html: str, **_: Any) -> str:
    return _ROLE.sub(_shown, html)
