"""The API reference (``docs/reference/api.md``, rendered by mkdocstrings from the docstrings)
names every public name; ``mkdocs build --strict`` (run by ``.ci/run``) renders it."""

from __future__ import annotations

import importlib
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


#: Names in the docs that are loggers (or OpenTelemetry metrics and attributes), not Python
#: objects.
LOGGERS = {
    "mcptrio.session",
    "mcptrio.stdio.server_stderr",
    "mcptrio.server.operation.active",
    "mcptrio.client.operation.active",
    "mcptrio.input_request.key",
}


def test_the_readme_and_the_docs_name_only_what_exists() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    named = {
        (name, page.relative_to(ROOT).as_posix())
        for page in pages
        for name in re.findall(
            r"`[^`]*?\b(mcptrio(?:\.[A-Za-z_]\w*)+)", page.read_text(encoding="utf-8")
        )
    }
    assert len(named) > 100
    missing = [(name, page) for name, page in sorted(named) if not _resolves(name)]
    assert [entry for entry in missing if entry[0] not in LOGGERS] == []


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            if not hasattr(found, part):
                return False
            found = getattr(found, part)
        return True
    return False
