"""The curated public API: every name resolves, and nothing else leaks in."""

from __future__ import annotations

import subprocess
import sys

import mcptrio

PUBLIC = {
    "Audio",
    "CapabilityNotNegotiated",
    "Context",
    "Elicited",
    "File",
    "Image",
    "ResourceNotFound",
    "ToolError",
    "Client",
    "ClientError",
    "OutputValidationError",
    "ConnectionClosed",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "McpError",
    "MethodNotFound",
    "ParseError",
    "RequestContext",
    "RequestTimeout",
    "Server",
    "Session",
    "UnsupportedProtocolVersion",
    "open_client",
    "ClientGroup",
    "GroupTool",
    "open_client_group",
}


def test_public_names_are_exactly_the_curated_list() -> None:
    assert set(mcptrio.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(mcptrio, name) is not None


def test_unknown_attribute_raises_attribute_error() -> None:
    try:
        mcptrio.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_errors_are_one_hierarchy() -> None:
    # ToolError is not a protocol error: it becomes a tool result with isError, for the model.
    # ClientError (and OutputValidationError) is the client's own check of a successful answer.
    for name in PUBLIC - {"ToolError", "ClientError", "OutputValidationError"}:
        value = getattr(mcptrio, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, mcptrio.McpError)


def test_importing_the_protocol_core_does_not_import_trio() -> None:
    code = "import mcptrio.protocol, sys; assert 'trio' not in sys.modules, 'trio was imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
