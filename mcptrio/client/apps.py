"""MCP Apps on a client (``io.modelcontextprotocol/ui``, SEP-1865): declaring it, and fetching
the view a tool names, for a Python host (or a gateway) to hand on.

::

    async with mcptrio.open_client(url, identity=ClientIdentity(capabilities=declare_apps()))
        as client:
        for tool in (await client.list_tools()).tools:
            if tool_view(tool) is not None:
                view = await read_app_view(client, tool)   # the HTML, its CSP and permissions
                ...                                        # render it in a sandboxed iframe

A client declares the extension with ``text/html;profile=mcp-app`` among its ``mimeTypes``
(:func:`declare_apps`): that is what tells a server it renders views, so the server's tools
may answer for a view rather than in words. :func:`read_app_view` checks what it reads is a
view (the ``ui://`` URI asked for, served as ``text/html;profile=mcp-app``) and raises
:class:`AppViewError` otherwise, so a host never renders an ordinary resource as an app.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Unpack

import msgspec

from ..protocol.apps_extension import (
    APP_MIME_TYPE,
    EXTENSION_ID,
    UI_SCHEME,
    ResourceUi,
    ToolUi,
    resource_ui,
    tool_ui,
)
from ..protocol.types import ClientCapabilities, Tool
from .errors import ClientError
from .options import CallOptions

if TYPE_CHECKING:
    from .client import Client

__all__ = [
    "AppView",
    "AppViewError",
    "declare_apps",
    "read_app_view",
    "server_supports_apps",
    "tool_view",
]


class AppViewError(ClientError):
    """What was read for a view is not one: no ``ui://`` URI, another MIME type, no HTML."""


@dataclass(frozen=True, slots=True)
class AppView:
    """A view as read: its ``ui://`` URI, its HTML, and what its ``_meta.ui`` asks of the
    host's sandbox (``None`` when it asks nothing); ``meta`` is the contents' whole ``_meta``,
    for a host (or a gateway) that hands it on unchanged."""

    uri: str
    html: str
    ui: ResourceUi | None
    meta: dict[str, Any] | None


def declare_apps(capabilities: ClientCapabilities | None = None) -> ClientCapabilities:
    """``capabilities`` (or none) with MCP Apps declared (``mimeTypes``:
    ``text/html;profile=mcp-app``), for ``ClientIdentity(capabilities=...)``."""
    base = capabilities or ClientCapabilities()
    extensions = dict(base.extensions or {})
    settings = dict(extensions.get(EXTENSION_ID) or {})
    mime_types = list(settings.get("mimeTypes") or ())
    if APP_MIME_TYPE not in mime_types:
        mime_types.append(APP_MIME_TYPE)
    extensions[EXTENSION_ID] = {**settings, "mimeTypes": mime_types}
    return msgspec.structs.replace(base, extensions=extensions)


def server_supports_apps(client: Client) -> bool:
    """Whether the server declared the extension (in the handshake or ``server/discover``)."""
    return EXTENSION_ID in (client.server_capabilities.extensions or {})


def tool_view(tool: Tool) -> ToolUi | None:
    """The view ``tool`` renders in (its ``_meta.ui``), or ``None`` for a tool without one."""
    return tool_ui(tool.meta)


async def read_app_view(
    client: Client, view: Tool | str, **options: Unpack[CallOptions]
) -> AppView:
    """Read the view of ``view`` (a tool, or a ``ui://`` URI) with ``resources/read``.

    Raises :class:`AppViewError` for a tool without a view, a URI that is not ``ui://``, or an
    answer that holds no ``text/html;profile=mcp-app`` contents at that URI; a server's error
    answer (``ResourceNotFound``...) propagates as it is.
    """
    if isinstance(view, Tool):
        found = tool_view(view)
        if found is None:
            raise AppViewError(f"Tool {view.name!r} names no MCP Apps view (_meta.ui.resourceUri)")
        uri = found.resource_uri
    else:
        uri = view
    if not uri.startswith(UI_SCHEME):
        raise AppViewError(f"An MCP Apps view is at a ui:// URI, not {uri!r}")
    result = await client.read_resource(uri, **options)
    for contents in result.contents:
        if contents.uri != uri or contents.mime_type != APP_MIME_TYPE:
            continue
        if contents.text is not None:
            html = contents.text
        else:
            try:
                html = base64.b64decode(contents.blob or "", validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                raise AppViewError(f"The view at {uri!r} is not UTF-8 HTML") from None
        return AppView(uri=uri, html=html, ui=resource_ui(contents.meta), meta=contents.meta)
    raise AppViewError(
        f"The server's answer for {uri!r} holds no {APP_MIME_TYPE!r} contents at that URI"
    )
