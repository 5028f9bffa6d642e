"""An mcptrio :class:`~mcptrio.Server` made from an OpenAPI document.

::

    server = mcptrio.openapi.server_from_openapi("petstore.yaml", "https://api.example.com/v1")
    server.run("http", port=8000)

Each operation the filter keeps becomes a tool named after its ``operationId``
(:mod:`.names`), described by its summary and description, with its parameters and body as
arguments (:mod:`.operations`) and every call one HTTP request (:mod:`.calls`). With
``gets_as="resources"``, a GET whose required arguments are all path parameters becomes a
resource instead (none: the resource at ``<base_url><path>``) or a resource template (some:
``<base_url>/items/{item_id}``), its optional query parameters left out; any other operation
stays a tool.

Tool annotations follow the method: GET, HEAD and OPTIONS are read-only, DELETE, PUT and PATCH
destructive, PUT and DELETE idempotent, and every tool is open-world (it reaches an API).

The server's HTTP client pool is opened with its lifespan (or is ``http``, the caller's own).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal

from ..protocol.types import Resource, ResourceContents, ResourceTemplate, Tool, ToolAnnotations
from ..server import Server
from ..server.forwarding import ForwardedResource, ForwardedTemplate, ForwardedTool
from ..server.handler_context import HandlerContext
from ..server.uri_template import UriTemplate
from ..transports.http.engine.client_pool import HttpClientPool
from .calls import CallSettings, OperationCall, PoolHolder
from .document import OpenApiDocument, OpenApiError, parse_document, read_document
from .names import ToolNames
from .operations import Operation, read_operations
from .selection import OperationFilter

__all__ = ["GetsAs", "server_from_openapi"]

#: What a safe GET becomes: always a tool, or a resource (template) when it can be one.
GetsAs = Literal["tools", "resources"]

#: The largest response body read (10 MiB).
DEFAULT_MAX_RESPONSE = 10 * 1024 * 1024
#: How much of an error response's body a tool error quotes.
DEFAULT_MAX_ERROR_BODY = 2000


def server_from_openapi(
    document: OpenApiDocument | Mapping[str, Any] | str | os.PathLike[str],
    base_url: str | None = None,
    *,
    name: str | None = None,
    version: str | None = None,
    select: OperationFilter | None = None,
    gets_as: GetsAs = "tools",
    headers: Mapping[str, str] | None = None,
    forward_headers: Sequence[str] = (),
    http: HttpClientPool | None = None,
    timeout: float = 30.0,
    max_response: int = DEFAULT_MAX_RESPONSE,
    max_error_body: int = DEFAULT_MAX_ERROR_BODY,
    **options: Any,
) -> Server:
    """A server whose tools (and resources) are the operations of ``document``.

    ``document`` is an :class:`~.document.OpenApiDocument` (from
    :func:`~.document.read_document`, or :func:`~.document.fetch_document` for a URL), the
    path of a JSON or YAML file, or the document's contents as a mapping. ``base_url`` is where
    the API is (default: the document's first ``servers`` URL). ``name`` and ``version``
    default to the document's ``info``. ``select`` keeps some operations only; ``gets_as``
    makes safe GETs resources (module docstring). ``headers`` are sent with every call (a
    static credential); ``forward_headers`` names headers of the MCP client's HTTP request to
    pass on (see :mod:`.pass_through`: the endpoint needs a
    :class:`~.pass_through.PassThroughHeaders` authenticator). ``http`` is the pool to call
    through (default: one opened while the server serves), ``timeout`` its connect and read
    deadline in seconds; a response past ``max_response`` bytes is refused, and an error
    response quotes at most ``max_error_body`` characters of its body. Other keywords go to
    :class:`~mcptrio.Server`.

    :class:`~.document.OpenApiError` (a ``ValueError``, one line naming the document and the
    part) for a document that cannot be served.
    """
    if isinstance(document, OpenApiDocument):
        read = document
    elif isinstance(document, Mapping):
        read = parse_document(_json_text(document), "<document>")
    elif "://" in os.fspath(document):
        raise OpenApiError(
            f"{os.fspath(document)}: fetch a document from a URL first, with"
            " `await mcptrio.openapi.fetch_document(url)`"
        )
    else:
        read = read_document(document)
    url = base_url or read.server_url()
    if url is None:
        raise OpenApiError(f"{read.source}: names no absolute server URL: give the base URL")
    if gets_as not in ("tools", "resources"):
        raise ValueError(f"gets_as must be 'tools' or 'resources', not {gets_as!r}")
    pools = PoolHolder(http, timeout)

    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await pools.aclose()

    info = read.contents.get("info")
    given_version = info.get("version") if isinstance(info, Mapping) else None
    options.setdefault("declare", ("tools",))
    server = Server(
        name or read.title,
        version or (str(given_version) if given_version is not None else "0.1.0"),
        lifespan=lifespan,
        **options,
    )
    settings = CallSettings(
        base_url=url,
        headers=dict(headers or {}),
        forward_headers=tuple(forward_headers),
        timeout=timeout,
        max_response=max_response,
        max_error_body=max_error_body,
    )
    names = ToolNames()
    select = select or OperationFilter()
    for operation in read_operations(read):
        tool_name = names.name(operation)
        if not select.keeps(operation, tool_name):
            continue
        call = OperationCall(operation, tool_name, settings, pools)
        if gets_as == "resources" and operation.safe and operation.only_path_required():
            item = _as_resource(call, url)
            if item is not None:
                server.add_forwarded(item)
                continue
        server.add_forwarded(ForwardedTool(_tool(operation, tool_name), call.call_tool))
    return server


def _json_text(document: Mapping[str, Any]) -> str:
    import json

    return json.dumps(document)


def _description(operation: Operation) -> str:
    parts = [p for p in (operation.summary, operation.description) if p]
    if len(parts) == 2 and parts[1].startswith(parts[0]):
        parts = parts[1:]
    text = "\n\n".join(parts) or operation.where()
    return f"Deprecated. {text}" if operation.deprecated else text


def _tool(operation: Operation, name: str) -> Tool:
    method = operation.method
    safe = method in ("GET", "HEAD", "OPTIONS")
    annotations = ToolAnnotations(
        title=operation.summary,
        read_only_hint=safe or None,
        # A POST may create or do anything: the default (destructive) is left to stand.
        destructive_hint=method in ("DELETE", "PUT", "PATCH") or None,
        idempotent_hint=safe or method in ("PUT", "DELETE") or None,
        open_world_hint=True,
    )
    return Tool(
        name=name,
        title=operation.summary,
        description=_description(operation),
        input_schema=operation.input_schema,
        annotations=annotations,
    )


def _as_resource(
    call: OperationCall, base_url: str
) -> ForwardedResource | ForwardedTemplate | None:
    """The GET ``call`` makes as a resource, or a template; ``None`` when its path cannot be
    an RFC 6570 template (a parameter name the RFC does not allow)."""
    operation = call.operation
    uri = base_url.rstrip("/") + operation.path
    path_parameters = [p for p in operation.parameters if p.place == "path"]
    description = _description(operation)
    if not path_parameters:

        async def read(ctx: HandlerContext, uri: str) -> list[ResourceContents]:
            return await call.read(ctx, uri, {})

        definition = Resource(
            name=call.name, uri=uri, title=operation.summary, description=description
        )
        return ForwardedResource(definition, read)
    try:
        template = UriTemplate(uri)
    except ValueError:
        return None
    if set(template.variables) != {p.name for p in path_parameters}:
        return None
    arguments = {p.name: p.argument for p in path_parameters}

    async def read_member(ctx: HandlerContext, uri: str) -> list[ResourceContents]:
        variables = template.match(uri) or {}
        given = {arguments[k]: v for k, v in variables.items() if k in arguments}
        return await call.read(ctx, uri, given)

    described = ResourceTemplate(
        name=call.name, uri_template=uri, title=operation.summary, description=description
    )
    return ForwardedTemplate(described, read_member)
