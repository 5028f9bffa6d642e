"""The error tree drawn in ``mcptrio.protocol.errors`` is the tree the classes form.

Every exception class defined anywhere in mcptrio must be drawn, under its own base class, with
its code and module when the drawing gives them; and no two classes of mcptrio share a name
with an exception class, so an error's name means one thing.

``mcptrio.compat`` is left out: it mirrors another library's API, names included (its
``ToolError`` is the official SDK's), and its errors are that library's tree, drawn in
``mcptrio/compat/mcpserver/exceptions.py``.
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import pkgutil
import re
from dataclasses import dataclass

import pytest

import mcptrio
from mcptrio.client.group import UnknownServer
from mcptrio.protocol import errors
from mcptrio.protocol.errors import (
    INTERNAL_ERROR,
    HeaderMismatch,
    InternalError,
    InvalidParams,
    LocalError,
    McpError,
    MethodNotFound,
    MissingRequiredClientCapability,
    ProtocolError,
    ResourceNotFound,
    UnsupportedProtocolVersion,
)
from mcptrio.server.tools import ToolError
from mcptrio.transports.websocket import WebSocketHandshakeError, WebSocketRejected

#: Packages that mirror another library's API, whose names are that library's.
MIRRORS = "mcptrio.compat"
_GLYPHS = "│├└─ "
_LINE = re.compile(r"(?P<name>[A-Za-z_]\w*)(?P<rest>.*)")
_CODE = re.compile(r"^\s+(-\d+)\s")
_MODULE = re.compile(r"\[([\w.]+)\]")


@dataclass
class Drawn:
    name: str
    parent: str | None
    line: str
    code: int | None
    module: str


def _drawn_classes() -> dict[str, Drawn]:
    """Every name in the docstring's literal blocks, with its parent by indentation."""
    doc = errors.__doc__
    assert doc is not None
    drawn: dict[str, Drawn] = {}
    blocks = [block.split("\n\n")[1] for block in doc.split("::")[1:]]
    for block in blocks:
        path: list[Drawn] = []
        for line in block.splitlines():
            stripped = line.lstrip(_GLYPHS)
            depth = (len(line) - len(stripped) - 4) // 4
            match = _LINE.match(stripped)
            assert match is not None, line
            rest = match["rest"]
            code = _CODE.match(rest)
            module = _MODULE.search(rest)
            parent = path[depth - 1] if depth else None
            del path[depth:]
            entry = Drawn(
                name=match["name"],
                parent=parent.name if parent else None,
                line=line,
                code=int(code[1]) if code else None,
                module=module[1] if module else (parent.module if parent else "protocol.errors"),
            )
            assert entry.name not in drawn or entry.parent is None, f"{entry.name} drawn twice"
            drawn[entry.name] = entry
            path.append(entry)
    return drawn


def _mcptrio_classes() -> list[type]:
    found: dict[int, type] = {}
    modules = pkgutil.walk_packages(mcptrio.__path__, "mcptrio.")
    for info in modules:
        if info.name.startswith(MIRRORS):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if inspect.isclass(value) and value.__module__ == module.__name__:
                found[id(value)] = value
    return list(found.values())


def _exception_classes() -> list[type[BaseException]]:
    return [cls for cls in _mcptrio_classes() if issubclass(cls, BaseException)]


def test_every_exception_class_of_mcptrio_is_drawn_under_its_base() -> None:
    drawn = _drawn_classes()
    classes = {cls.__name__: cls for cls in _exception_classes()}
    for name, cls in classes.items():
        assert name in drawn, f"{cls.__module__}.{name} is missing from the drawing"
        entry = drawn[name]
        first, *others = cls.__bases__
        # A drawing's root (McpError) derives from Exception, as the other roots say.
        parent = entry.parent or "Exception"
        assert parent == first.__name__, f"{name} is drawn under {parent}"
        for other in others:
            assert other.__name__ in entry.line, f"{name}'s base {other.__name__} is not named"
        assert cls.__module__.startswith(f"mcptrio.{entry.module}"), (name, cls.__module__)
        if entry.code is not None:
            assert issubclass(cls, McpError) and entry.code == cls.CODE, name


def test_the_drawing_names_no_class_that_does_not_exist() -> None:
    classes = {cls.__name__ for cls in _exception_classes()}
    for name, entry in _drawn_classes().items():
        if entry.parent is None and name != "McpError":
            assert isinstance(getattr(builtins, name, None), type), name
        else:
            assert name in classes, f"{name} is drawn but not defined"


def test_no_two_classes_share_an_exception_name() -> None:
    names = [cls.__name__ for cls in _exception_classes()]
    assert len(names) == len(set(names))
    exception_names = set(names)
    for cls in _mcptrio_classes():
        if not issubclass(cls, BaseException):
            assert cls.__name__ not in exception_names, f"{cls.__module__}.{cls.__name__}"


def test_what_a_caller_can_catch_is_one_tree() -> None:
    # The sub-roots are public; every public exception is an McpError.
    for root in (mcptrio.ProtocolError, mcptrio.LocalError, mcptrio.TransportError):
        assert issubclass(root, mcptrio.McpError)
    assert issubclass(mcptrio.TransportError, mcptrio.LocalError)
    assert issubclass(mcptrio.ClientError, mcptrio.LocalError)
    assert issubclass(mcptrio.OutputValidationError, mcptrio.ClientError)
    assert not issubclass(mcptrio.ToolError, (ProtocolError, LocalError))


def test_a_received_error_is_rebuilt_as_the_class_that_owns_its_code() -> None:
    assert type(McpError.from_wire(-32601, "no")) is MethodNotFound
    assert type(McpError.from_wire(-32602, "bad")) is InvalidParams
    assert type(McpError.from_wire(-32002, "gone")) is ResourceNotFound
    # Local errors and tool errors carry -32603 but never own it.
    received = McpError.from_wire(INTERNAL_ERROR, "boom", {"x": 1})
    assert type(received) is InternalError
    assert (received.code, received.message, received.data) == (INTERNAL_ERROR, "boom", {"x": 1})


def test_a_code_no_class_owns_comes_back_as_a_protocol_error_with_that_code() -> None:
    received = McpError.from_wire(-31000, "Out of tea")
    assert type(received) is ProtocolError
    assert received.code == -31000


def test_the_stateless_era_codes_have_their_own_classes() -> None:
    assert UnsupportedProtocolVersion.CODE == -32022
    assert UnsupportedProtocolVersion().message == "Unsupported protocol version"
    assert type(McpError.from_wire(-32022, "x")) is UnsupportedProtocolVersion
    assert type(McpError.from_wire(-32021, "x")) is MissingRequiredClientCapability
    assert type(McpError.from_wire(-32020, "x")) is HeaderMismatch
    assert type(McpError.from_wire(InvalidParams.CODE, "x")) is InvalidParams


def test_a_subclass_declares_its_code_and_default_message_as_class_arguments() -> None:
    class Teapot(ProtocolError, code=-31999, default_message="I'm a teapot"):
        pass

    try:
        assert (Teapot().code, Teapot().message) == (-31999, "I'm a teapot")
        assert type(McpError.from_wire(-31999, "short and stout")) is Teapot
    finally:
        errors._BY_CODE.pop(-31999)  # other tests must not meet the teapot


def test_errors_that_keep_a_stdlib_base_are_caught_by_it_too() -> None:
    with pytest.raises(KeyError):
        raise UnknownServer("weather")
    assert str(UnknownServer("weather")) == "No MCP server named 'weather' is connected"
    with pytest.raises(ConnectionError):
        raise WebSocketRejected(403, b"bad origin")
    handshake = WebSocketHandshakeError("no mcp subprotocol")
    assert str(handshake) == "no mcp subprotocol"
    assert isinstance(handshake, McpError) and handshake.message == "no mcp subprotocol"


def test_a_tool_error_is_an_mcp_error_with_its_message() -> None:
    error = ToolError("42 is too big")
    assert isinstance(error, McpError)
    assert (str(error), error.code) == ("42 is too big", INTERNAL_ERROR)
