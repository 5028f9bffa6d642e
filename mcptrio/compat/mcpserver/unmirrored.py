"""What of the official SDK's ``mcp.server.mcpserver`` mcptrio's mirror leaves out, and the
one-line error that names it.

Each name here is refused where it is used (imported from the package, passed to a constructor
or to ``run``), never silently ignored: a server that needs it must keep the SDK, or use the
mcptrio API that does the same (``docs/how-to/migrate-from-the-official-sdk.md`` lists both).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "UNMIRRORED_MEMBERS",
    "UNMIRRORED_NAMES",
    "Unmirrored",
    "refuse_arguments",
    "unmirrored_member",
    "unmirrored_name",
]

GUIDE = "docs/how-to/migrate-from-the-official-sdk.md"

#: The names the SDK's package exports that the mirror does not, with what to use instead.
UNMIRRORED_NAMES: dict[str, str] = {
    "Extension": "mcptrio.Server's experimental= capabilities and middleware",
    "ToolBinding": "mcptrio.Server's experimental= capabilities and middleware",
    "ResourceBinding": "mcptrio.Server's experimental= capabilities and middleware",
    "MethodBinding": "mcptrio.Server's experimental= capabilities and middleware",
    "require_client_extension": "ctx.engine.client_capabilities",
    "ResourceSecurity": "mcptrio.RelativePath / mcptrio.PathSegment parameters",
    "DEFAULT_RESOURCE_SECURITY": "mcptrio.RelativePath / mcptrio.PathSegment parameters",
    "RequestStateSecurity": "mcptrio.Server(request_state_key=...)",
    "RequestStateCodec": "mcptrio.Server(request_state_key=...)",
    "RequestStateBoundary": "mcptrio.Server(request_state_key=...)",
    "AESGCMRequestStateCodec": "mcptrio.Server(request_state_key=...)",
    "InvalidRequestState": "mcptrio.Server(request_state_key=...)",
    "authenticated_principal": "ctx.engine.principal",
}


#: The members of the SDK's ``MCPServer`` and ``Context`` the mirror does not have.
UNMIRRORED_MEMBERS: dict[str, dict[str, str]] = {
    "MCPServer": {
        "custom_route": "mcptrio's HTTP server mounts (docs/how-to/serve-over-http.md)",
        "sse_app": "server.engine.run('http'), which serves the legacy SSE endpoints too",
        "streamable_http_app": "server.engine with mcptrio.transports.http (serve-over-http.md)",
        "run_sse_async": "await server.engine.serve_http(...)",
        "run_streamable_http_async": "await server.engine.serve_http(...)",
        "add_resource": "the @resource(uri) decorator",
        "add_prompt": "the @prompt() decorator",
        "remove_resource": "server.engine.remove_resource(uri)",
        "list_tools": "a client: mcptrio.open_client(server.engine)",
        "call_tool": "a client: mcptrio.open_client(server.engine)",
        "list_resources": "a client: mcptrio.open_client(server.engine)",
        "list_resource_templates": "a client: mcptrio.open_client(server.engine)",
        "list_prompts": "a client: mcptrio.open_client(server.engine)",
        "get_prompt": "a client: mcptrio.open_client(server.engine)",
        "settings": "the constructor's arguments",
        "middleware": "server.engine.add_middleware(...)",
    },
    "Context": {
        "session": "ctx.engine (mcptrio's context of the request)",
        "headers": "ctx.engine.request_meta",
        "input_responses": "ctx.engine.input_answers",
        "request_state": "ctx.engine.input_answers",
        "close_sse_stream": "nothing: mcptrio closes streams itself",
        "close_standalone_sse_stream": "nothing: mcptrio closes streams itself",
    },
}


def unmirrored_member(owner: str, name: str) -> Exception:
    """``Unmirrored`` for a member of the SDK's ``owner`` class the mirror leaves out, else a
    plain ``AttributeError``."""
    instead = UNMIRRORED_MEMBERS[owner].get(name)
    if instead is None:
        return AttributeError(f"{owner!r} object has no attribute {name!r}")
    return Unmirrored(
        f"mcptrio.compat.mcpserver does not mirror the official SDK's {owner}.{name}; use"
        f" {instead} (see {GUIDE})"
    )


class Unmirrored(TypeError):
    """A part of the official SDK's API that ``mcptrio.compat.mcpserver`` does not mirror."""


def unmirrored_name(name: str) -> Unmirrored:
    instead = UNMIRRORED_NAMES[name]
    return Unmirrored(
        f"mcptrio.compat.mcpserver does not mirror the official SDK's {name}; use {instead}"
        f" (see {GUIDE})"
    )


def refuse_arguments(call: str, **given: Any) -> None:
    """``Unmirrored`` naming the first of ``given`` that is set: ``call`` takes it in the SDK,
    and the mirror does not."""
    for name, value in given.items():
        if value is not None:
            raise Unmirrored(
                f"{call}: {name}= is an option of the official SDK that mcptrio.compat.mcpserver"
                f" does not mirror (see {GUIDE})"
            )
