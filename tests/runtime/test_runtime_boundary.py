"""The runtime's internals stay inside it: no module outside ``mcptrio/runtime/`` imports the
request lifecycle, the outbox or the context snapshot. What the rest of the package (and a user
writing a transport) may use is the session, the handler's context, the transport interface
and the small primitives beside them."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "mcptrio"

#: The runtime's internal modules: parts of the Session, reached only through it.
INTERNAL = frozenset({"lifecycle", "outbox", "contexts"})


def runtime_modules_imported(path: Path) -> set[str]:
    """The ``mcptrio.runtime`` submodules ``path`` imports (relative imports resolved)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = parts[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = list(package[: len(package) - node.level + 1])
            target = [*base, *(node.module.split(".") if node.module else [])]
        else:
            target = (node.module or "").split(".")
        if target[:2] == ["mcptrio", "runtime"]:
            if len(target) > 2:
                found.add(target[2])
            else:
                found.update(alias.name for alias in node.names)
    return found


def test_no_module_outside_the_runtime_imports_its_internals() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)} imports mcptrio.runtime.{name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] != "runtime"
        for name in sorted(runtime_modules_imported(path) & INTERNAL)
    ]
    assert offenders == []


def test_the_check_resolves_relative_imports_at_any_depth() -> None:
    endpoint = PACKAGE / "transports" / "http" / "endpoints" / "http_session.py"
    assert {"session", "transport"} <= runtime_modules_imported(endpoint)
    assert "session" in runtime_modules_imported(PACKAGE / "server" / "server.py")
