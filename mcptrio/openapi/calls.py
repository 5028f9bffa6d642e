"""Calling an operation: one tool call (or resource read) is one HTTP request to the API, sent
with mcptrio's own HTTP client on Trio, and its response as the MCP answer.

A call, in order:

1. the arguments are validated against the tool's ``inputSchema`` (``jsonschema``, the 2020-12
   dialect): arguments that do not fit are a tool error naming the first problem, so the model
   can correct itself, and nothing is sent;
2. the request is built (:mod:`.outgoing`), with the configured headers (``headers``: a static
   API key, say) and the headers passed through from the MCP client's own HTTP request
   (``forward_headers``: see :mod:`.pass_through`) added;
3. it is sent through the server's :class:`~mcptrio.transports.http.engine.client_pool.
   HttpClientPool` (keep-alive connections, ``timeout`` seconds to connect and per read);
   cancelling the MCP request (``notifications/cancelled``) cancels it and closes its
   connection;
4. the response becomes the result: a 4xx or 5xx status is a tool error ``HTTP <status>
   <reason>: <body>`` (the body cut at ``max_error_body`` characters); a JSON object is the
   result's ``structuredContent`` and its text; other JSON, and text, is text; an image or audio
   is image or audio content; other bytes are an embedded resource (base64). A response past
   ``max_response`` bytes is an error, unread. An API that cannot be reached is a tool error
   that names the request.

A resource read goes the same way, its contents the response's text (or blob), and a failure an
error answer (``-32603``) with the same message.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import jsonschema.exceptions  # type: ignore[import-untyped]
import trio

from ..protocol.errors import InternalError, LocalError
from ..protocol.types import (
    AudioContent,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceContents,
    TextContent,
)
from ..server.handler_context import HandlerContext
from ..server.tool_results import error_result
from ..transports.http.engine.client_pool import HttpClientPool, HttpError
from .operations import Operation
from .outgoing import ArgumentError, OutgoingRequest, build_request
from .pass_through import forwarded_headers

__all__ = ["ApiAnswer", "ApiFailure", "CallSettings", "OperationCall", "PoolHolder"]

log = logging.getLogger("mcptrio.openapi")


@dataclass(frozen=True, slots=True, kw_only=True)
class CallSettings:
    """How every call of one server is made (see the module docstring)."""

    base_url: str
    headers: Mapping[str, str]
    forward_headers: Sequence[str]
    timeout: float
    max_response: int
    max_error_body: int


class PoolHolder:
    """The server's HTTP client pool: the one given, or one made while the server serves (its
    lifespan) and closed after; a call made outside it (the server mounted in another) makes
    one, closed with the next lifespan's end."""

    def __init__(self, given: HttpClientPool | None, timeout: float) -> None:
        self._given = given
        self._timeout = timeout
        self._own: HttpClientPool | None = None

    def get(self) -> HttpClientPool:
        if self._given is not None:
            return self._given
        if self._own is None:
            self._own = HttpClientPool(connect_timeout=self._timeout, read_timeout=self._timeout)
        return self._own

    async def aclose(self) -> None:
        own, self._own = self._own, None
        if own is not None:
            with trio.CancelScope(shield=True):
                await own.aclose()


class ApiFailure(LocalError, default_message="The API call failed"):
    """The API could not be asked, or answered with an error status: the message says which
    (a tool answers it as its error result, a resource read as -32603)."""


@dataclass(frozen=True, slots=True)
class ApiAnswer:
    """A successful response, read whole."""

    url: str
    status: int
    reason: str
    content_type: str
    charset: str
    body: bytes

    def text(self) -> str:
        return self.body.decode(self.charset, errors="replace")

    def is_json(self) -> bool:
        return self.content_type == "application/json" or self.content_type.endswith("+json")

    def is_text(self) -> bool:
        kind = self.content_type
        return kind.startswith("text/") or kind.endswith(("+xml", "/xml")) or not kind


def _charset(content_type: bytes | None) -> str:
    for parameter in (content_type or b"").decode("latin-1").split(";")[1:]:
        key, _, value = parameter.strip().partition("=")
        if key.lower() == "charset" and value:
            return value.strip('"')
    return "utf-8"


class OperationCall:
    """Calls one operation (the module docstring says how)."""

    def __init__(
        self, operation: Operation, name: str, settings: CallSettings, pools: PoolHolder
    ) -> None:
        self.operation = operation
        self.name = name
        self._settings = settings
        self._pools = pools
        self._validator = jsonschema.Draft202012Validator(operation.input_schema)

    async def call_tool(
        self, ctx: HandlerContext, arguments: dict[str, Any] | None
    ) -> CallToolResult:
        """Answer one ``tools/call``."""
        given = arguments or {}
        problem = jsonschema.exceptions.best_match(self._validator.iter_errors(given))
        if problem is not None:
            where = "/".join(str(p) for p in problem.absolute_path)
            at = f" at {where}" if where else ""
            return error_result(f"Invalid arguments for tool {self.name!r}{at}: {problem.message}")
        try:
            answer = await self.send(ctx, given)
        except ApiFailure as exc:
            return error_result(str(exc))
        return _tool_result(answer)

    async def read(
        self, ctx: HandlerContext, uri: str, arguments: Mapping[str, Any]
    ) -> list[ResourceContents]:
        """Answer one ``resources/read`` of ``uri``."""
        try:
            answer = await self.send(ctx, arguments)
        except ApiFailure as exc:
            raise InternalError(str(exc)) from None
        mime = answer.content_type or None
        if answer.is_json() or answer.is_text():
            return [ResourceContents(uri=uri, mime_type=mime, text=answer.text())]
        blob = base64.b64encode(answer.body).decode("ascii")
        return [ResourceContents(uri=uri, mime_type=mime, blob=blob)]

    async def send(self, ctx: HandlerContext, arguments: Mapping[str, Any]) -> ApiAnswer:
        """Send the request for ``arguments`` and read the answer; :class:`ApiFailure` for an
        error status or an API that cannot be asked."""
        settings = self._settings
        try:
            request = build_request(self.operation, settings.base_url, arguments)
        except ArgumentError as exc:
            raise ApiFailure(f"Invalid arguments for tool {self.name!r}: {exc}") from None
        headers = [*request.headers, *settings.headers.items()]
        headers.extend(forwarded_headers(ctx.principal, settings.forward_headers))
        headers.append(("accept", "application/json, */*;q=0.8"))
        try:
            return await self._exchange(request, headers)
        except HttpError as exc:
            raise ApiFailure(f"{request.method} {request.url} failed: {exc}") from None
        except ValueError as exc:
            raise ApiFailure(f"{request.method} {request.url}: {exc}") from None

    async def _exchange(
        self, request: OutgoingRequest, headers: list[tuple[str, str]]
    ) -> ApiAnswer:
        settings = self._settings
        http = self._pools.get()
        async with http.request(
            request.method, request.url, headers=headers, body=request.body
        ) as response:
            body = await response.read(settings.max_response)
            if body is None:
                raise ApiFailure(
                    f"{request.method} {request.url}: the response is larger than"
                    f" {settings.max_response} bytes"
                )
            answer = ApiAnswer(
                request.url,
                response.status,
                response.reason,
                response.content_type,
                _charset(response.header(b"content-type")),
                body,
            )
        if answer.status >= 400:
            text = answer.text()
            limit = settings.max_error_body
            if len(text) > limit:
                text = text[:limit] + f"... ({len(text) - limit} more characters)"
            raise ApiFailure(f"HTTP {answer.status} {answer.reason}: {text}".rstrip(": "))
        return answer


def _tool_result(answer: ApiAnswer) -> CallToolResult:
    if not answer.body:
        return CallToolResult(content=[TextContent(text=f"HTTP {answer.status} {answer.reason}")])
    if answer.is_json():
        text = answer.text()
        try:
            value = json.loads(text)
        except ValueError:
            return CallToolResult(content=[TextContent(text=text)])
        structured = value if isinstance(value, dict) else None
        return CallToolResult(content=[TextContent(text=text)], structured_content=structured)
    if answer.is_text():
        return CallToolResult(content=[TextContent(text=answer.text())])
    data = base64.b64encode(answer.body).decode("ascii")
    kind = answer.content_type
    block: ContentBlock
    if kind.startswith("image/"):
        block = ImageContent(data=data, mime_type=kind)
    elif kind.startswith("audio/"):
        block = AudioContent(data=data, mime_type=kind)
    else:
        contents = ResourceContents(uri=answer.url, mime_type=kind, blob=data)
        block = EmbeddedResource(resource=contents)
    return CallToolResult(content=[block])
