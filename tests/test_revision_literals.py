"""No protocol revision is written as a string outside ``mcptrio/protocol/``.

What a revision has is one row of :data:`mcptrio.protocol.revisions.REVISIONS`; code elsewhere
asks the row (``revision_of(version).tasks``) or takes the version strings from there
(``SUPPORTED``, ``LATEST``), so that adding or changing a revision is an edit in one place.
Docstrings may name revisions (they explain); any other string constant that holds a revision
date, f-string parts and error messages included, is a literal this test names by file:line.
Read from the source with ``ast``: nothing is imported.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mcptrio"

#: A revision date as the protocol writes it (``2025-06-18``).
REVISION_DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")


def docstring_nodes(tree: ast.Module) -> set[int]:
    """The ids of the constants that are docstrings (of the module, classes and functions)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def revision_literals(path: Path) -> Iterator[int]:
    """The lines of ``path`` with a string constant, not a docstring, holding a revision date."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docstrings = docstring_nodes(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and REVISION_DATE.search(node.value)
        ):
            yield node.lineno


def modules_outside_protocol() -> Iterator[Path]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] != "protocol":
            yield path


def test_no_revision_literal_outside_protocol() -> None:
    found = [
        f"mcptrio/{path.relative_to(PACKAGE).as_posix()}:{line}"
        for path in modules_outside_protocol()
        for line in revision_literals(path)
    ]
    assert found == [], "take these revisions from mcptrio/protocol/: " + ", ".join(found)


def test_a_revision_in_a_string_is_found_and_one_in_a_docstring_is_not(tmp_path: Path) -> None:
    module = tmp_path / "sample.py"
    module.write_text(
        '"""Module docstring naming 2025-06-18."""\n'
        "def f(v):\n"
        '    """Function docstring naming 2025-11-25."""\n'
        '    return v == "2024-11-05" or f"{v} is not 2026-07-28"\n'
    )
    assert list(revision_literals(module)) == [4, 4]
