"""The MCP Apps extension (``io.modelcontextprotocol/ui``, SEP-1865): its wire shapes.

A tool names an interactive HTML view in its ``_meta.ui`` (:class:`ToolUi`): ``resourceUri``, a
``ui://`` resource that the host reads and renders in a sandboxed iframe, and ``visibility``
(``["model", "app"]`` by default; ``["app"]`` keeps the tool out of the model's list, for the
view's own calls). The ``ui://`` resource is served as ``text/html;profile=mcp-app``, with its
own ``_meta.ui`` (:class:`ResourceUi`): the origins its Content-Security-Policy lets it reach
(``csp``), the browser permissions it asks for (``permissions``), a dedicated sandbox origin
(``domain``) and whether the host should draw a border (``prefersBorder``).

Negotiation (SEP-2133): a host declares
``capabilities.extensions["io.modelcontextprotocol/ui"] = {"mimeTypes": [APP_MIME_TYPE]}``, a
server ``{}``. The extension adds no method (the view talks to the host over ``postMessage``, and
the host calls the server's ordinary ``tools/call`` and ``resources/read``), so a declaration
only says what each side understands; it crosses handshake-era sessions too, as the SEP's own
example (``initialize`` of 2025-06-18) shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias

import msgspec

from .base import WireStruct

__all__ = [
    "APP_MIME_TYPE",
    "EXTENSION_ID",
    "LEGACY_RESOURCE_URI_KEY",
    "UI_SCHEME",
    "Permission",
    "ResourceCsp",
    "ResourceUi",
    "ToolUi",
    "Visibility",
    "declares_apps",
    "resource_ui",
    "tool_ui",
]

#: The extension's identifier, under ``capabilities.extensions``.
EXTENSION_ID: Final = "io.modelcontextprotocol/ui"
#: The MIME type of an app's HTML (a host renders a ``ui://`` resource only as this).
APP_MIME_TYPE: Final = "text/html;profile=mcp-app"
#: The scheme of every app resource.
UI_SCHEME: Final = "ui://"
#: The flat key early servers used for ``_meta.ui.resourceUri`` (still read, never written).
LEGACY_RESOURCE_URI_KEY: Final = "ui/resourceUri"

#: Who may call a tool bound to a view: the model, the view (``app``), or both.
Visibility: TypeAlias = Literal["model", "app"]
#: A browser permission a view may ask for (``_meta.ui.permissions``).
Permission: TypeAlias = Literal["camera", "microphone", "geolocation", "clipboardWrite"]


class ToolUi(WireStruct, kw_only=True):
    """A tool's ``_meta.ui``: the view it renders in, and who may call it."""

    resource_uri: str
    visibility: list[Visibility] | None = None


class ResourceCsp(WireStruct, kw_only=True):
    """The origins a view may reach (``_meta.ui.csp``); the host denies everything else."""

    connect_domains: list[str] | None = None
    resource_domains: list[str] | None = None
    frame_domains: list[str] | None = None
    base_uri_domains: list[str] | None = None


class ResourceUi(WireStruct, kw_only=True):
    """A ``ui://`` resource's ``_meta.ui``: what the host's sandbox should allow it."""

    csp: ResourceCsp | None = None
    permissions: dict[Permission, dict[str, Any]] | None = None
    domain: str | None = None
    prefers_border: bool | None = None


def declares_apps(extensions: Mapping[str, Any] | None) -> bool:
    """Whether a *client's* ``extensions`` capability says it renders MCP Apps: the extension
    with ``text/html;profile=mcp-app`` among its ``mimeTypes``."""
    settings = None if extensions is None else extensions.get(EXTENSION_ID)
    if not isinstance(settings, Mapping):
        return False
    mime_types = settings.get("mimeTypes")
    return isinstance(mime_types, list | tuple) and APP_MIME_TYPE in mime_types


def tool_ui(meta: Mapping[str, Any] | None) -> ToolUi | None:
    """The view a tool's ``_meta`` names (``ui``, or the legacy flat key), ``None`` if none or
    if what is there is not a ``ui://`` URI."""
    if not meta:
        return None
    ui = meta.get("ui")
    try:
        found = msgspec.convert(ui, ToolUi) if isinstance(ui, Mapping) else None
    except msgspec.ValidationError:
        found = None
    if found is None:
        legacy = meta.get(LEGACY_RESOURCE_URI_KEY)
        found = ToolUi(resource_uri=legacy) if isinstance(legacy, str) else None
    if found is None or not found.resource_uri.startswith(UI_SCHEME):
        return None
    return found


def resource_ui(meta: Mapping[str, Any] | None) -> ResourceUi | None:
    """A resource's ``_meta.ui``, ``None`` when absent or malformed."""
    ui = None if not meta else meta.get("ui")
    if not isinstance(ui, Mapping):
        return None
    try:
        return msgspec.convert(ui, ResourceUi)
    except msgspec.ValidationError:
        return None
