"""MCP Apps on a server (``io.modelcontextprotocol/ui``, SEP-1865): tools that render a view.

::

    server = Server("charts")

    @server.tool(ui="ui://charts/view.html")
    def sales(region: str, ctx: Context) -> str:
        ...

    server.add_resource(html_file("view.html"), "ui://charts/view.html",
                        ui=ResourceUi(prefers_border=True))

What each piece does:

- ``ui=`` on a tool (a ``ui://`` URI, or :class:`~mcptrio.protocol.apps_extension.ToolUi` for a
  ``visibility``) becomes the tool's ``_meta.ui``; the decorator owns that key, so a ``meta=``
  that holds ``"ui"`` too is refused;
- a resource at a ``ui://`` URI is served as ``text/html;profile=mcp-app`` (the only type a host
  renders; another ``mime_type`` is refused), and its ``ui=``
  (:class:`~mcptrio.protocol.apps_extension.ResourceUi`: CSP origins, permissions, domain,
  border) is its ``_meta.ui`` in ``resources/list`` and on the contents every read returns,
  where hosts look for it. The HTML comes from a string, from a file (:func:`html_file`) or from
  a built bundle folder (:func:`html_bundle`), the last two read from disk on every read so a
  rebuilt view is served without a restart;
- the server declares the extension (``{}``) as soon as a tool names a view or a ``ui://``
  resource is registered: registering one is the opt-in SEP-2133 asks for.

Through a mount or a gateway (:mod:`.mount`, :mod:`mcptrio.gateway`), a served server's views
are namespaced as its tools are: ``ui://<rest>`` is served as ``ui://<namespace>/<rest>``
(:func:`view_uri`), and its tools' ``_meta.ui.resourceUri`` say so (:func:`namespaced_tool_meta`),
since two app servers often name their views alike (``ui://basic/mcp-app.html``). The view's
own ``tools/call`` still names the tool as its server does, so a name this server does not serve
goes to the one forwarded tool with that ``app_name`` (:func:`app_call_target`): the tool of
that name of a served server that has views; several are refused, naming them.

Degrading (SEP-2133): tools keep their ``_meta.ui`` for every client (a client that does not
render views ignores ``_meta``, as the official SDKs' servers expect), and a tool's result is
what its function returns, so it must read well as text. :func:`client_supports_apps` tells a
handler whether this request's client declared the extension (the handshake's capabilities, or
the request's own in the stateless era), for a tool that says more in text when no view will
show its data.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec
import trio

from ..protocol.apps_extension import (
    APP_MIME_TYPE,
    EXTENSION_ID,
    LEGACY_RESOURCE_URI_KEY,
    UI_SCHEME,
    ResourceUi,
    ToolUi,
    declares_apps,
    tool_ui,
)
from ..protocol.errors import InvalidParams
from ..protocol.types import ResourceContents
from .handler_context import HandlerContext

#: How a forwarded resource is read (:data:`.forwarding.ReadForwarder`, which imports this).
_Reader = Callable[[HandlerContext, str], Awaitable[list[ResourceContents]]]

__all__ = [
    "APP_MIME_TYPE",
    "EXTENSION_ID",
    "app_call_target",
    "apps_capability",
    "client_supports_apps",
    "html_bundle",
    "html_file",
    "namespaced_tool_meta",
    "namespaced_view_reader",
    "resource_meta",
    "served_view_uri",
    "tool_meta",
    "view_uri",
    "with_contents_meta",
]

# A local script or stylesheet of a built bundle: <script ... src="x"></script> and
# <link ... rel="stylesheet" ... href="x">. A URL with a scheme or '//' is left to the CSP.
_SCRIPT = re.compile(r"<script\b([^>]*?)\ssrc=[\"']([^\"']+)[\"']([^>]*)>\s*</script>", re.I)
_STYLESHEET = re.compile(r"<link\b[^>]*?\brel=[\"']stylesheet[\"'][^>]*>", re.I)
_HREF = re.compile(r"\bhref=[\"']([^\"']+)[\"']", re.I)
_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)


def _check_ui_uri(uri: str, owner: str) -> None:
    if not uri.startswith(UI_SCHEME) or len(uri) == len(UI_SCHEME):
        raise ValueError(f"{owner}: an MCP Apps view must be at a ui:// URI, not {uri!r}")


def tool_meta(ui: str | ToolUi, meta: Mapping[str, Any] | None, owner: str) -> dict[str, Any]:
    """A tool's ``_meta`` with ``ui`` (its ``ui=`` option) in it."""
    if meta and "ui" in meta:
        raise ValueError(f"{owner}: ui= writes _meta['ui']; leave 'ui' out of meta=")
    found = ToolUi(resource_uri=ui) if isinstance(ui, str) else ui
    if not isinstance(found, ToolUi):
        raise TypeError(f"{owner}: ui= takes a ui:// URI or a ToolUi, not {ui!r}")
    _check_ui_uri(found.resource_uri, owner)
    for who in found.visibility or ():
        if who not in ("model", "app"):
            raise ValueError(f"{owner}: visibility holds 'model' and 'app' only, not {who!r}")
    return {**(meta or {}), "ui": msgspec.to_builtins(found)}


def resource_meta(
    uri: str, ui: ResourceUi | None, meta: Mapping[str, Any] | None, mime_type: str | None
) -> tuple[str, dict[str, Any] | None]:
    """The MIME type and ``_meta`` of a resource at a ``ui://`` URI (``ui``: its ``ui=``)."""
    owner = f"Resource {uri!r}"
    _check_ui_uri(uri, owner)
    if mime_type is not None and mime_type != APP_MIME_TYPE:
        raise ValueError(
            f"{owner}: a ui:// view is served as {APP_MIME_TYPE!r} (hosts render nothing else),"
            f" not {mime_type!r}"
        )
    if ui is None:
        return APP_MIME_TYPE, dict(meta) if meta else None
    if meta and "ui" in meta:
        raise ValueError(f"{owner}: ui= writes _meta['ui']; leave 'ui' out of meta=")
    return APP_MIME_TYPE, {**(meta or {}), "ui": msgspec.to_builtins(ui)}


def with_contents_meta(
    contents: list[ResourceContents], meta: dict[str, Any]
) -> list[ResourceContents]:
    """``contents`` with a view's ``_meta`` on each item that has none of its own."""
    return [c if c.meta is not None else msgspec.structs.replace(c, meta=meta) for c in contents]


def apps_capability(
    tool_metas: Iterable[Mapping[str, Any] | None], uris: Iterable[str]
) -> dict[str, dict[str, Any]]:
    """The server's ``extensions`` entry for MCP Apps: declared when a tool names a view or a
    ``ui://`` resource is served, nothing otherwise."""
    if any(tool_ui(meta) is not None for meta in tool_metas) or any(
        uri.startswith(UI_SCHEME) for uri in uris
    ):
        return {EXTENSION_ID: {}}
    return {}


def client_supports_apps(ctx: HandlerContext) -> bool:
    """Whether the client of this request renders MCP Apps views: it declared the extension
    with ``text/html;profile=mcp-app`` among its ``mimeTypes`` (in the handshake, or in this
    request's ``_meta`` in the stateless era)."""
    caps = ctx.client_capabilities
    return caps is not None and declares_apps(caps.extensions)


def html_file(path: str | os.PathLike[str]) -> Callable[[], Awaitable[str]]:
    """A resource source that reads the HTML file at ``path`` on every read (UTF-8).

    A missing file is an error at registration (one line naming it), and at a read if it has
    gone since (the read is answered with an error, the server carries on)."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"html_file({str(path)!r}): no such file")

    async def read_html_file() -> str:
        return await trio.Path(file).read_text(encoding="utf-8")

    return read_html_file


def html_bundle(
    folder: str | os.PathLike[str], entry: str = "index.html"
) -> Callable[[], Awaitable[str]]:
    """A resource source that serves a built bundle (a bundler's output folder) as one
    document, read on every read: ``entry`` with each local ``<script src>`` and stylesheet
    ``<link>`` it names put inline, since a host renders the one document it reads and loads
    nothing relative to it. Remote URLs stay as they are (list their origins in the
    resource's CSP). A file named outside ``folder`` is refused."""
    root = Path(folder).resolve()
    if not (root / entry).is_file():
        raise FileNotFoundError(f"html_bundle({str(folder)!r}): no {entry} in that folder")

    def inlined(html: str) -> str:
        def local(reference: str) -> Path:
            target = (root / reference.split("?", 1)[0].lstrip("/")).resolve()
            if not target.is_relative_to(root):
                raise ValueError(f"html_bundle({str(folder)!r}): {reference!r} is outside it")
            return target

        def script(match: re.Match[str]) -> str:
            before, src, after = match.groups()
            if _REMOTE.match(src):
                return match.group(0)
            code = local(src).read_text(encoding="utf-8").replace("</script", "<\\/script")
            return f"<script{before}{after}>{code}</script>"

        def stylesheet(match: re.Match[str]) -> str:
            href = _HREF.search(match.group(0))
            if href is None or _REMOTE.match(href.group(1)):
                return match.group(0)
            return f"<style>{local(href.group(1)).read_text(encoding='utf-8')}</style>"

        return _STYLESHEET.sub(stylesheet, _SCRIPT.sub(script, html))

    def read_bundle() -> str:
        return inlined((root / entry).read_text(encoding="utf-8"))

    async def read_html_bundle() -> str:
        return await trio.to_thread.run_sync(read_bundle)

    return read_html_bundle


# ---------------------------------------------------------------- through a mount or a gateway


def view_uri(namespace: str, uri: str) -> str:
    """The URI a served server's view ``uri`` has under ``namespace`` (other URIs unchanged)."""
    if not uri.startswith(UI_SCHEME):
        return uri
    return f"{UI_SCHEME}{namespace}/{uri[len(UI_SCHEME) :]}"


def served_view_uri(namespace: str, uri: str) -> str:
    """The served server's own URI of the view at ``uri`` here (:func:`view_uri` undone)."""
    prefix = f"{UI_SCHEME}{namespace}/"
    return UI_SCHEME + uri[len(prefix) :] if uri.startswith(prefix) else uri


def namespaced_tool_meta(namespace: str, meta: dict[str, Any] | None) -> dict[str, Any] | None:
    """A served tool's ``_meta`` with the view it names under ``namespace`` (``_meta.ui`` and
    the legacy flat key); every other key as it is."""
    found = tool_ui(meta)
    if meta is None or found is None:
        return meta
    out = dict(meta)
    ui = meta.get("ui")
    if isinstance(ui, Mapping):
        out["ui"] = {**ui, "resourceUri": view_uri(namespace, found.resource_uri)}
    legacy = meta.get(LEGACY_RESOURCE_URI_KEY)
    if isinstance(legacy, str):
        out[LEGACY_RESOURCE_URI_KEY] = view_uri(namespace, legacy)
    return out


def namespaced_view_reader(namespace: str, read: _Reader) -> _Reader:
    """``read`` for views served under ``namespace``: asks the served server for its own URI,
    and answers with the contents' URIs as served here."""

    async def read_view(ctx: HandlerContext, uri: str) -> list[ResourceContents]:
        contents = await read(ctx, served_view_uri(namespace, uri))
        return [
            msgspec.structs.replace(c, uri=view_uri(namespace, c.uri))
            if c.uri.startswith(UI_SCHEME)
            else c
            for c in contents
        ]

    return read_view


def app_call_target(tools: Mapping[str, Any], name: str) -> Any:
    """The forwarded tool a view's ``tools/call`` of ``name`` (a name not served here) is for:
    the one whose ``app_name`` is ``name``; ``None`` when there is none, and ``InvalidParams``
    naming them when there are several (it cannot be told whose view is calling)."""
    found = [tool for tool in tools.values() if getattr(tool, "app_name", None) == name]
    if len(found) > 1:
        names = ", ".join(sorted(repr(tool.name) for tool in found))
        raise InvalidParams(
            f"Unknown tool {name!r}; a view calling it could mean any of {names}"
            " (call one by the name listed)"
        )
    return found[0] if found else None
