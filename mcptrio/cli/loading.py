"""Finding the :class:`~mcptrio.Server` a command line names: ``path/to/file.py[:name]`` or
``package.module[:name]``.

The file is loaded as a module (its folder first on ``sys.path``, as ``python file.py`` would
have it; ``__name__`` is not ``"__main__"``, so its ``if __name__ == "__main__":`` block does
not run); a module is imported with the current folder first on ``sys.path``, as
``python -m`` would. ``name`` is an attribute of it: a ``Server``, or a function that takes no
arguments and returns one (a factory, called once). Without ``name`` the server is found by
type: the one ``Server`` among the module's globals or, when there is none, the one function of
the module declared ``-> Server``. None, or several, is an error that says what to write.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import sys
import sysconfig
import traceback
import typing
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ..server import Server
from .errors import usage_error

__all__ = [
    "ServerSpec",
    "bare_address_error",
    "load_server",
    "looks_like_server_spec",
    "parse_server_spec",
]

# host:port, then maybe a path: a URL without its scheme.
_BARE_ADDRESS = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[\w.-]+):(?P<port>\d{1,5})(?P<path>/\S*)?")


@dataclass(frozen=True)
class ServerSpec:
    """A parsed ``file.py[:name]`` or ``module[:name]``."""

    source: str
    attribute: str | None
    is_file: bool

    def __str__(self) -> str:
        return self.source if self.attribute is None else f"{self.source}:{self.attribute}"


def parse_server_spec(text: str) -> ServerSpec:
    """``text`` as a spec; a usage error when it is neither a file nor a module name."""
    source, attribute = text, None
    head, colon, tail = text.rpartition(":")
    # A Windows drive ("C:\\x.py") or a URL leaves no identifier after the last colon.
    if colon and head and _is_dotted_name(tail):
        source, attribute = head, tail
    if source.endswith(".py") or os.sep in source or "/" in source or Path(source).is_file():
        return ServerSpec(source, attribute, is_file=True)
    if _is_dotted_name(source):
        return ServerSpec(source, attribute, is_file=False)
    raise usage_error(
        f"{text!r} is not a server: give a .py file or a module name, with :name if needed"
    )


def bare_address_error(text: str) -> Exception | None:
    """The usage error for a URL given without its scheme (``127.0.0.1:8000/mcp``,
    ``localhost:8000``), which reads as a file that does not exist: it says which URL was
    meant. ``None`` for anything else, an existing file included."""
    found = _BARE_ADDRESS.fullmatch(text)
    if found is None or found["host"].endswith(".py") or Path(text).exists():
        return None
    scheme = "https" if found["port"] == "443" else "http"
    return usage_error(f"no such file: {text}; did you mean {scheme}://{text}?")


def looks_like_server_spec(text: str) -> bool:
    """Whether ``text`` reads as a file or module spec (and not as a URL)."""
    return "://" not in text


def load_server(spec: ServerSpec) -> Server:
    """Import what ``spec`` names and find its ``Server`` (see the module docstring)."""
    module = _load_file(spec) if spec.is_file else _import_module(spec)
    if spec.attribute is not None:
        return _as_server(spec, _attribute(module, spec))
    servers = _unique((name, value) for name, value in vars(module).items() if _is_server(value))
    if len(servers) > 1:
        raise _several(spec, servers)
    if servers:
        return servers[0][1]  # type: ignore[no-any-return]
    factories = _unique(
        (name, value)
        for name, value in vars(module).items()
        if inspect.isfunction(value)
        and value.__module__ == module.__name__
        and _returns_server(value)
    )
    if len(factories) > 1:
        raise _several(spec, factories)
    if factories:
        return _as_server(spec, factories[0][1], factories[0][0])
    raise usage_error(
        f"{spec.source} has no mcptrio.Server: create one at module level"
        " (or a function declared -> Server), or name it as SOURCE:name"
    )


def _is_dotted_name(text: str) -> bool:
    return bool(text) and all(part.isidentifier() for part in text.split("."))


def _is_server(value: object) -> bool:
    return isinstance(value, Server)


def _unique(items: typing.Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Each object once (a server bound to two names is one server), in definition order."""
    seen: set[int] = set()
    found = []
    for name, value in items:
        if id(value) not in seen:
            seen.add(id(value))
            found.append((name, value))
    return found


def _several(spec: ServerSpec, found: list[tuple[str, Any]]) -> Exception:
    names = ", ".join(name for name, _ in found)
    return usage_error(
        f"{spec.source} has several servers ({names}): name one, as {spec.source}:{found[0][0]}"
    )


def _returns_server(fn: Any) -> bool:
    try:
        returned = typing.get_type_hints(fn).get("return")
    except Exception:
        # An annotation that does not resolve says nothing we could rely on.
        return False
    return isinstance(returned, type) and issubclass(returned, Server)


def _attribute(module: ModuleType, spec: ServerSpec) -> Any:
    value: Any = module
    for part in spec.attribute.split(".") if spec.attribute else ():
        if not hasattr(value, part):
            raise usage_error(f"{spec.source} has no attribute {spec.attribute!r}")
        value = getattr(value, part)
    return value


def _as_server(spec: ServerSpec, value: Any, name: str | None = None) -> Server:
    label = f"{spec.source}:{name or spec.attribute}"
    if isinstance(value, Server):
        return value
    if not callable(value):
        raise usage_error(f"{label} is a {type(value).__name__}, not an mcptrio.Server")
    if inspect.iscoroutinefunction(value):
        raise usage_error(f"{label} is an async function: a server factory must be a plain one")
    try:
        inspect.signature(value).bind()
    except TypeError:
        raise usage_error(f"{label} needs arguments: a server factory must take none") from None
    except ValueError:
        pass  # no signature to read (a builtin): calling it will tell
    try:
        built = value()
    except Exception as exc:
        raise usage_error(_describe(exc, f"calling {label}()")) from exc
    if not isinstance(built, Server):
        raise usage_error(f"{label}() returned a {type(built).__name__}, not an mcptrio.Server")
    return built


def _load_file(spec: ServerSpec) -> ModuleType:
    path = Path(spec.source)
    if not path.is_file():
        raise usage_error(f"no such file: {spec.source}")
    path = path.resolve()
    name = path.stem if path.stem.isidentifier() else "_mcptrio_target"
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) != str(path):
        name = f"_mcptrio_target_{name}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise usage_error(f"cannot load {spec.source} as Python")
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, str(path.parent))
    # Registered first, as an import would: type hints and pickling look the module up by name.
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        sys.modules.pop(name, None)
        raise usage_error(_describe(exc, f"loading {spec.source}", path)) from exc
    return module


def _import_module(spec: ServerSpec) -> ModuleType:
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(spec.source)
    except ModuleNotFoundError as exc:
        if exc.name is not None and spec.source.startswith(exc.name):
            raise usage_error(f"no module named {spec.source!r}") from exc
        raise usage_error(_describe(exc, f"importing {spec.source}")) from exc
    except (Exception, SystemExit) as exc:
        raise usage_error(_describe(exc, f"importing {spec.source}")) from exc


def _describe(exc: BaseException, doing: str, target: Path | None = None) -> str:
    """``file:line: Type: message``, as a compiler says it, the place being in the user's code
    (see :func:`_user_place`); ``(doing)`` follows unless the place is in ``target`` itself."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, SyntaxError):
        # str() adds "(file, line N)", which the place says already.
        text = f"{type(exc).__name__}: {exc.msg}"
    place = _user_place(exc)
    if place is None:
        return f"{text} ({doing})"
    filename, line = place
    where = f"{_shown(filename)}:{line}" if line else _shown(filename)
    if target is not None and Path(filename).resolve() == target:
        return f"{where}: {text}"
    return f"{where}: {text} ({doing})"


def _user_place(exc: BaseException) -> tuple[str, int | None] | None:
    """Where ``exc`` happened, for the user: a syntax error's own file and line; otherwise the
    deepest frame of the user's code, that is outside the import machinery (``<frozen ...>``),
    the standard library, the installed packages and mcptrio, or else the deepest frame."""
    if isinstance(exc, SyntaxError) and exc.filename and not exc.filename.startswith("<"):
        return exc.filename, exc.lineno
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<")]
    for frame in reversed(frames):
        if not frame.filename.startswith(_NOT_USER_CODE):
            return frame.filename, frame.lineno
    return (frames[-1].filename, frames[-1].lineno) if frames else None


def _shown(filename: str) -> str:
    """``filename`` relative to the current folder when it is below it, as the user typed it."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if relative.startswith("..") else relative


# Code that is not the user's: where an error in it happened says little about their mistake.
_NOT_USER_CODE = tuple(
    {sysconfig.get_paths()[key] + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    | {str(Path(__file__).resolve().parents[1]) + os.sep}
)
