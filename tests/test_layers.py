"""The package's layers: every import points downward, and no module imports one that imports it.

protocol < runtime, stores < transports, tasks < server, client (which never import each other) <
the rest.
For the layers, imports under ``if TYPE_CHECKING:`` and inside functions count too: a type a
module names belongs to a layer it may depend on. For circles at run time, only the imports that
run when a module is imported count (a type named for the checker alone, or an import deferred
into a function, closes no circle at run time). Inside one folder, every import counts, and no
circle joins more than two modules: a reader can follow a folder from the bottom up. Read from
the source with ``ast``: nothing is imported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mcptrio"

#: The layer of each top-level part of the package; a module may import its own layer or lower.
LAYERS = {
    "protocol": 0,
    "stores": 1,
    "runtime": 1,
    "transports": 2,
    "auth": 2,
    # Tasks as actors: the supervisor and the tasks/* answers, shared by server and client.
    "tasks": 2,
    "server": 3,
    "client": 3,
}
#: Parts of one layer that must not import each other.
APART = {frozenset({"server", "client"}), frozenset({"runtime", "stores"})}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def deferred_nodes(tree: ast.Module) -> set[int]:
    """The nodes that do not run when the module is imported: under ``if TYPE_CHECKING:`` and in
    function bodies."""
    deferred: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            deferred.update(id(inner) for inner in ast.walk(node))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            deferred.update(id(inner) for inner in ast.walk(node) if inner is not node)
    return deferred


def imported_modules(path: Path, modules: set[str], *, at_import: bool = False) -> Iterator[str]:
    """The mcptrio modules ``path`` imports, relative imports resolved; with ``at_import``, only
    those imported while the module itself is imported."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    deferred = deferred_nodes(tree) if at_import else set()
    for node in ast.walk(tree):
        if id(node) in deferred:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            submodules = [f"{target}.{alias.name}" for alias in node.names]
            # ``from . import codec`` imports the submodule, not the package's __init__.
            found = [name for name in submodules if name in modules]
            candidates = found if len(found) == len(submodules) else [target, *found]
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        yield from (c for c in candidates if c in modules and c != name)


def import_graph(*, at_import: bool = False) -> dict[str, set[str]]:
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    assert "mcptrio.protocol.connection" in paths, f"no package found at {PACKAGE}"
    modules = set(paths)
    return {
        name: set(imported_modules(path, modules, at_import=at_import))
        for name, path in paths.items()
    }


def part(module: str) -> str:
    return module.split(".")[1] if module.count(".") >= 1 else ""


def test_every_import_points_down_the_layers() -> None:
    wrong = []
    for module, targets in import_graph().items():
        here = part(module)
        for target in targets:
            there = part(target)
            if here not in LAYERS or there not in LAYERS or here == there:
                continue
            if LAYERS[there] > LAYERS[here] or frozenset({here, there}) in APART:
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """The circles of ``graph``: its strongly connected components of more than one module
    (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[set[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                circle = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    circle.add(member)
                    if member == module:
                        break
                if len(circle) > 1:
                    circles.append(circle)
    return circles


def test_no_module_imports_one_that_imports_it_back_at_import_time() -> None:
    circles = strongly_connected(import_graph(at_import=True))
    assert [sorted(circle) for circle in circles] == []


def folder_graph() -> dict[str, set[str]]:
    """Every import (type-only and deferred ones too) from a module to another module of its
    own folder (the package directory it is in; a package's ``__init__`` is in its own)."""
    folders = {module_name(path): path.parent for path in PACKAGE.rglob("*.py")}
    return {
        module: {target for target in targets if folders[target] == folders[module]}
        for module, targets in import_graph().items()
    }


def test_no_circle_inside_a_folder_joins_more_than_two_modules() -> None:
    circles = [sorted(c) for c in strongly_connected(folder_graph()) if len(c) > 2]
    assert sorted(circles) == []


def test_the_circle_finder_finds_circles_and_leaves_chains() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert sorted(sorted(c) for c in strongly_connected(graph)) == [["a", "b", "c"], ["d", "e"]]
