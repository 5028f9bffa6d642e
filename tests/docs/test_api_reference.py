"""The API reference (``docs/reference/api.md``, rendered by mkdocstrings from the docstrings)
names every public name; ``mkdocs build --strict`` (run by ``.ci/run``) renders it."""

from __future__ import annotations

import re
from pathlib import Path

import mcptrio

ROOT = Path(__file__).resolve().parents[2]


def test_the_reference_documents_every_name_in_all() -> None:
    page = (ROOT / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    documented = re.findall(r"^::: mcptrio\.(\w+)$", page, re.M)
    assert sorted(documented) == sorted(mcptrio.__all__)
