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


def test_the_cli_reference_lists_every_command_and_exit_code() -> None:
    from mcptrio.cli import errors
    from mcptrio.cli.parser import COMMANDS

    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    for command in COMMANDS:
        assert f"\n`{command}`\n: " in page, command
    codes = {int(code) for code in re.findall(r"^\| (\d+) \| ", page, re.M)}
    assert codes == {value for name, value in vars(errors).items() if name.startswith("EXIT_")}
