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
    "TransportError",
    "Client",
    "ClientError",
    "OutputValidationError",
    "OutcomeUnknown",
    "ConnectionClosed",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LocalError",
    "McpError",
    "MethodNotFound",
    "ParseError",
    "PathSegment",
    "RelativePath",
    "ProtocolError",
    "RequestContext",
    "RequestTimeout",
    "Server",
    "Session",
    "UnsupportedProtocolVersion",
    "open_client",
    "asyncio_handler",
    "ClientGroup",
    "GroupTool",
    "open_client_group",
    "Call",
    "CallNext",
    "Middleware",
    "LifespanError",
    "Skill",
    "SkillFile",
    "SkillVerificationError",
    "Skills",
    "SkillsError",
    "declare_skills",
    "AppView",
    "AppViewError",
    "declare_apps",
    "read_app_view",
    "server_supports_apps",
    "tool_view",
    "ResourceCsp",
    "ResourceUi",
    "ToolUi",
    "client_supports_apps",
    "html_bundle",
    "html_file",
    "MemoryTaskStore",
    "TaskHandle",
    "TaskLimits",
    "TaskStore",
    "TaskSupervisor",
    "open_stores",
    "Stores",
    "StoreUnavailable",
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


def test_every_public_error_is_an_mcp_error() -> None:
    for name in PUBLIC:
        value = getattr(mcptrio, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            assert issubclass(value, mcptrio.McpError), name


def test_importing_the_protocol_core_does_not_import_trio() -> None:
    code = "import mcptrio.protocol, sys; assert 'trio' not in sys.modules, 'trio was imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
