"""transports/http is in three parts whose dependencies point one way (see
docs/explanation/http-transport.md): the engine knows no MCP, the endpoints and the client
transports use the engine and never each other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mcptrio.transports.http as http_package

HTTP = Path(http_package.__file__).parent
PACKAGE = "mcptrio.transports.http"


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, as an absolute dotted name."""
    module = ".".join(path.relative_to(HTTP.parents[2]).with_suffix("").parts)
    package = module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                found.add(f"{base}.{node.module}" if node.module else base)
            elif node.module:
                found.add(node.module)
    return found


def modules_of(part: str) -> list[Path]:
    return sorted((HTTP / part).glob("*.py"))


@pytest.mark.parametrize("path", modules_of("engine"), ids=lambda p: p.name)
def test_the_engine_imports_no_mcp(path: Path) -> None:
    allowed = (f"{PACKAGE}.engine", "mcptrio.protocol.errors")
    mcp = {name for name in imported_modules(path) if name.startswith("mcptrio")}
    assert {name for name in mcp if not name.startswith(allowed)} == set()


@pytest.mark.parametrize(
    ("part", "other"), [("endpoints", "client"), ("client", "endpoints")], ids=str
)
def test_endpoints_and_client_transports_do_not_import_each_other(part: str, other: str) -> None:
    for path in modules_of(part):
        crossing = {n for n in imported_modules(path) if n.startswith(f"{PACKAGE}.{other}")}
        assert crossing == set(), path.name
