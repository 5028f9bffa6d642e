"""Resources: static contents, functions and RFC 6570 templates, kept in a registry.

::

    @server.resource("config://app", mime_type="application/json")
    def app_config() -> dict[str, object]:
        return {"debug": False}

    @server.resource("users://{user_id}/profile")
    async def profile(user_id: int) -> str:
        return f"user {user_id}"

Three kinds of resource exist:

- **static contents** (:func:`make_resource` with a ``str`` or ``bytes`` source): read back as
  they are. Text defaults to ``text/plain``, bytes to ``application/octet-stream`` and go on the
  wire base64-encoded; ``size`` defaults to the size in bytes.
- **function resources** (:func:`make_resource` with a function): the function is called on each
  ``resources/read``. It takes no parameters (but ones with defaults, and the context).
- **templates** (:func:`make_template`): a function whose parameters are exactly the variables of
  an RFC 6570 URI template (:class:`~mcptrio.server.uri_template.UriTemplate`). Values matched
  from the URI are converted to each parameter's annotation with ``msgspec.convert(...,
  strict=False)`` (``int``, ``float``, ``bool``, enums, ``Literal``, ``list[str]`` for exploded
  variables...); a value that does not convert gets ``InvalidParams`` (-32602). A comma-separated
  value of a non-exploded variable is split for a ``list`` annotation (the same text conversion
  as a prompt's arguments, :meth:`.handler.Parameter.from_text`). A variable absent from the
  URI (an optional query parameter) leaves the parameter at its default, or gets
  ``InvalidParams`` when it has none. Values are percent-decoded (``..%2Fx`` gives ``../x``):
  annotate one that names a file :data:`~mcptrio.RelativePath` or :data:`~mcptrio.PathSegment`
  (:mod:`.path_parameters`).

What a function returns becomes the resource's contents:

- ``str``: text contents; ``bytes``: binary contents (base64);
- ``ResourceContents`` (``TextResourceContents`` / ``BlobResourceContents``) or a non-empty list
  of them: used as they are;
- a ``dict``, ``list``, ``tuple``, msgspec ``Struct`` or dataclass: JSON text, with mime type
  ``application/json`` unless the resource declares another;
- anything else is a programming error (``TypeError``, answered as an internal error).

Text and binary contents get the resource's ``mime_type`` (or the defaults above); their ``uri``
is the URI that was read. Functions are read and called as every handler is (see
:mod:`.handler`): a parameter annotated :class:`~mcptrio.server.context.Context` receives the
request's context; synchronous functions run in a worker thread, async ones in the request's
task; a generator's items are collected into a list, which is then the returned value.

Descriptions and contents are built for the newest revision; the session's connection fits them
to the negotiated one (:mod:`mcptrio.protocol.fitting`: ``title``, ``_meta`` and
``annotations.lastModified`` are left out before 2025-06-18 and ``icons`` before 2025-11-25).

:func:`read_resource` answers ``resources/read`` from a server's resources and templates: a
static URI first, then each template in turn; nothing matching gets ``ResourceNotFound``
(-32002) with ``data={"uri": uri}``.
"""

from __future__ import annotations

import base64
import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, Unpack

import msgspec
import trio

from ..protocol.apps_extension import UI_SCHEME, ResourceUi
from ..protocol.errors import ResourceNotFound
from ..protocol.types import (
    Annotations,
    CacheScope,
    ReadResourceResult,
    Resource,
    ResourceContents,
    ResourceTemplate,
)
from .apps import resource_meta, with_contents_meta
from .completion import ArgumentCompleter, Completer, read_completions
from .forwarding import ForwardedResource, ForwardedTemplate
from .handler import Handler, default_name, read_handler
from .handler_context import HandlerContext
from .read_budget import Reservation
from .registry import DescriptionOptions, Registered
from .uri_template import UriTemplate

__all__ = [
    "RegisteredResource",
    "RegisteredTemplate",
    "ResourceOptions",
    "make_resource",
    "make_template",
    "read_resource",
    "read_static",
    "to_resource_contents",
]

D = TypeVar("D", Resource, ResourceTemplate)
_TEXT_DEFAULT = "text/plain"
_BINARY_DEFAULT = "application/octet-stream"
_JSON = "application/json"
# RFC 3986: a URI starts with a scheme and a colon.
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S*")
#: Binary contents larger than this are base64-encoded in a worker thread: the event loop
#: serves every other client meanwhile, and a thread's round trip costs more than encoding less.
OFF_LOOP_BYTES = 64 * 1024


class ResourceOptions(DescriptionOptions, total=False):
    """The options of a resource or template: the keywords of ``@server.resource``,
    ``Server.add_resource``, :func:`make_resource` and :func:`make_template`, besides those every
    kind has (:class:`DescriptionOptions`; the name defaults to the function's, else the URI)."""

    #: The contents' MIME type; defaults from what is read (see the module docstring).
    mime_type: str | None
    #: The size in bytes (a resource at a fixed URI only); defaults to static contents' size.
    size: int | None
    #: Audience, priority and last-modified hints.
    annotations: Annotations | None
    #: Completers per template variable (a template only; see
    #: :mod:`mcptrio.server.completion`).
    completions: Mapping[str, Completer | Sequence[str]] | None
    #: How long a client may reuse what a read returns, in milliseconds (2026-07-28 cache
    #: hints, SEP-2549); ``None``: the server's ``cache_ttl_ms``.
    cache_ttl_ms: int | None
    #: Who may reuse it: ``"public"`` (anyone) or ``"private"`` (this authorization context
    #: only); ``None``: the server's ``cache_scope``.
    cache_scope: CacheScope | None
    #: MCP Apps (SEP-1865): a ``ui://`` view's ``_meta.ui`` (CSP origins, permissions, domain,
    #: border), on its listing and on what each read returns; see :mod:`mcptrio.server.apps`.
    ui: ResourceUi | None


def _check_uri(uri: str, what: str) -> None:
    if not isinstance(uri, str) or not _URI.fullmatch(uri):
        raise ValueError(f"{what}: {uri!r} is not a URI (RFC 3986 needs 'scheme:...')")


# ------------------------------------------------------------------ contents


def _binary(
    uri: str,
    data: bytes | bytearray | memoryview,
    mime_type: str | None,
    meta: dict[str, Any] | None = None,
) -> Any:
    return ResourceContents(
        uri=uri,
        mime_type=mime_type or _BINARY_DEFAULT,
        blob=base64.b64encode(bytes(data)).decode("ascii"),
        meta=meta,
    )


def _is_json_like(value: Any) -> bool:
    return isinstance(value, dict | list | tuple | msgspec.Struct) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    )


def to_resource_contents(value: Any, uri: str, mime_type: str | None) -> list[ResourceContents]:
    """The contents a resource function's return value stands for (see the module docstring).

    ``uri`` is the URI that was read; ``mime_type`` the resource's declared one, if any.
    """
    if isinstance(value, ResourceContents):
        return [value]
    if isinstance(value, str):
        return [ResourceContents(uri=uri, mime_type=mime_type or _TEXT_DEFAULT, text=value)]
    if isinstance(value, bytes | bytearray | memoryview):
        return [_binary(uri, value, mime_type)]
    if (
        isinstance(value, list | tuple)
        and value
        and all(isinstance(item, ResourceContents) for item in value)
    ):
        return list(value)
    if _is_json_like(value):
        try:
            text = msgspec.json.encode(value).decode()
        except (TypeError, msgspec.EncodeError) as exc:
            raise TypeError(f"Resource {uri!r}: the returned value is not JSON: {exc}") from None
        return [ResourceContents(uri=uri, mime_type=mime_type or _JSON, text=text)]
    raise TypeError(
        f"Resource {uri!r}: a resource function must return str, bytes, ResourceContents, a list"
        " of ResourceContents, or a dict / list / Struct / dataclass (sent as JSON), not"
        f" {type(value).__name__}"
    )


async def prepared_contents(
    value: Any, uri: str, mime_type: str | None, held: Reservation
) -> list[ResourceContents]:
    """:func:`to_resource_contents` of a handler's ``value``, with the bytes it needs on the
    wire ``held`` first, and large binary data encoded in a worker thread, away from the event
    loop that serves every other client."""
    await held.grow_to(_wire_size(value))
    if isinstance(value, bytes | bytearray | memoryview) and len(value) > OFF_LOOP_BYTES:
        contents = await trio.to_thread.run_sync(to_resource_contents, value, uri, mime_type)
    else:
        contents = to_resource_contents(value, uri, mime_type)
    await held.grow_to(sum(map(_wire_size, contents)))
    return contents


def _wire_size(value: Any) -> int:
    """The bytes ``value`` takes in a read's answer, as far as is known before encoding it."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return (len(value) + 2) // 3 * 4
    if isinstance(value, ResourceContents):
        return len(value.text or "") + len(value.blob or "")
    return 0


class _Description(Registered[D]):
    """The descriptive fields resources and templates share."""

    __slots__ = ("annotations", "cache_scope", "cache_ttl_ms", "mime_type")

    def __init__(
        self,
        default_name: str,
        handler: Handler | None,
        mime_type: str | None,
        options: ResourceOptions,
    ) -> None:
        name = options.get("name")
        name = default_name if name is None else name
        if not name:
            raise ValueError("A resource needs a non-empty name")
        super().__init__(name, handler, options)
        self.mime_type = mime_type
        self.annotations = options.get("annotations")
        ttl = options.get("cache_ttl_ms")
        if ttl is not None and ttl < 0:
            raise ValueError(f"cache_ttl_ms must be >= 0, not {ttl}")
        self.cache_ttl_ms = ttl
        self.cache_scope = options.get("cache_scope")

    def _fields(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "mime_type": self.mime_type,
            "annotations": self.annotations,
            "icons": list(self.icons) if self.icons else None,
            "meta": self.meta,
        }


# ------------------------------------------------------------------ static resources


class RegisteredResource(_Description[Resource]):
    """A resource with a fixed URI: static contents or a function called on each read."""

    __slots__ = ("_contents", "contents_meta", "size", "uri")

    def __init__(
        self,
        uri: str,
        source: Handler | tuple[ResourceContents, ...],
        *,
        size: int | None,
        mime_type: str | None,
        options: ResourceOptions,
    ) -> None:
        handler = source if isinstance(source, Handler) else None
        name = default_name(handler.fn) if handler is not None else None
        super().__init__(name or uri, handler, mime_type, options)
        self._contents = source if isinstance(source, tuple) else ()
        self.uri = uri
        self.size = size
        #: The ``_meta`` put on what a read returns (a ``ui://`` view's: :mod:`.apps`).
        self.contents_meta: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"<RegisteredResource {self.uri!r}>"

    def _describe(self) -> Resource:
        return Resource(uri=self.uri, size=self.size, **self._fields())

    @property
    def answers_at_once(self) -> bool:
        """Whether a read is answered where it was decoded (see :mod:`.eager`)."""
        return self.handler is None or self.handler.never_suspends

    async def read(self, ctx: HandlerContext) -> list[ResourceContents]:
        """The contents (calls the function, if there is one, within the server's read
        budget: see :mod:`.read_budget`)."""
        handler = self.handler
        if handler is None:
            return list(self._contents)
        if handler.never_suspends:
            # Answered in one step (see .eager): prepared whole, one at a time, so no two such
            # reads hold their contents at once; nothing on this path may wait.
            contents = to_resource_contents(await handler.call(ctx, {}), self.uri, self.mime_type)
        else:
            async with ctx.server.read_budget.reserve(self.size or 0, self.uri) as held:
                value = await handler.call(ctx, {})
                contents = await prepared_contents(value, self.uri, self.mime_type, held)
        meta = self.contents_meta
        return contents if meta is None else with_contents_meta(contents, meta)


def make_resource(
    source: str | bytes | Callable[..., Any], *, uri: str, **options: Unpack[ResourceOptions]
) -> RegisteredResource:
    """Describe a resource at ``uri`` whose contents come from ``source`` (module docstring).

    See :class:`ResourceOptions` for the options. The name defaults to the function's name, or
    to the URI. For static contents, ``size`` defaults to their size in bytes, and the
    description of a function to its docstring. Raises ``ValueError`` for a ``uri`` that is not
    a URI or is a template, and for a function with parameters that need a value.
    """
    owner = f"Resource {uri!r}"
    _check_uri(uri, owner)
    if "{" in uri or "}" in uri:
        raise ValueError(f"{owner}: a URI with '{{...}}' is a template; use make_template")
    if options.get("completions"):
        raise ValueError(f"{owner}: only resource templates have arguments to complete")
    size = options.get("size")
    if size is not None and size < 0:
        raise ValueError(f"{owner}: size must be >= 0, not {size}")
    mime_type = options.get("mime_type")
    view_meta = None
    if uri.startswith(UI_SCHEME) or options.get("ui") is not None:
        mime_type, view_meta = resource_meta(uri, options.get("ui"), options.get("meta"), mime_type)
        options = {**options, "meta": view_meta}
    if isinstance(source, str):
        mime_type = mime_type or _TEXT_DEFAULT
        contents = (ResourceContents(uri=uri, mime_type=mime_type, text=source, meta=view_meta),)
        size = len(source.encode()) if size is None else size
    elif isinstance(source, bytes | bytearray | memoryview):
        contents = (_binary(uri, source, mime_type, view_meta),)
        mime_type = mime_type or _BINARY_DEFAULT
        size = len(bytes(source)) if size is None else size
    elif callable(source):
        handler = read_handler(source, owner)
        required = [p.name for p in handler.parameters if p.required]
        if required:
            raise ValueError(
                f"{owner}: a resource function takes no parameters but the context (and ones"
                f" with defaults), but {default_name(source) or source!r} needs"
                f" {', '.join(map(repr, required))} (a URI with '{{...}}' variables makes a"
                " template)"
            )
        resource = RegisteredResource(uri, handler, size=size, mime_type=mime_type, options=options)
        resource.contents_meta = view_meta
        return resource
    else:
        raise TypeError(f"{owner}: the source must be str, bytes or a function, not {source!r}")
    return RegisteredResource(uri, contents, size=size, mime_type=mime_type, options=options)


# ------------------------------------------------------------------ templates


class RegisteredTemplate(_Description[ResourceTemplate]):
    """A family of resources: a URI template and the function that reads its members."""

    __slots__ = ("completions", "template")
    handler: Handler

    def __init__(self, template: UriTemplate, handler: Handler, options: ResourceOptions) -> None:
        name = default_name(handler.fn) or template.template
        super().__init__(name, handler, options.get("mime_type"), options)
        self.template = template
        #: Completers per variable name, read at registration.
        self.completions: dict[str, ArgumentCompleter] = read_completions(
            options.get("completions"),
            template.variables,
            f"Resource template {template.template!r}",
        )

    @property
    def fn(self) -> Callable[..., Any]:
        return self.handler.fn

    def __repr__(self) -> str:
        return f"<RegisteredTemplate {self.template.template!r}>"

    @property
    def uri_template(self) -> str:
        return self.template.template

    @property
    def variables(self) -> tuple[str, ...]:
        return self.template.variables

    def _describe(self) -> ResourceTemplate:
        return ResourceTemplate(uri_template=self.template.template, **self._fields())

    def match(self, uri: str) -> dict[str, str | list[str]] | None:
        """The template's variables in ``uri``, or ``None`` if ``uri`` is not one of its members."""
        return self.template.match(uri)

    async def read(
        self, ctx: HandlerContext, uri: str, variables: Mapping[str, Any]
    ) -> list[ResourceContents]:
        """Convert ``variables`` (from :meth:`match`), call the function, return the contents.

        Raises ``InvalidParams`` for a value that does not convert to its parameter's type, or a
        variable missing from the URI whose parameter has no default.
        """
        owner = f"resource template {self.uri_template!r} (reading {uri!r})"
        values = self.handler.values_from_text(variables, owner)
        async with ctx.server.read_budget.reserve(0, uri) as held:
            value = await self.handler.call(ctx, values)
            return await prepared_contents(value, uri, self.mime_type, held)


def make_template(
    fn: Callable[..., Any], *, uri_template: str, **options: Unpack[ResourceOptions]
) -> RegisteredTemplate:
    """Describe ``fn`` as the reader of the resources ``uri_template`` names (module docstring).

    See :class:`ResourceOptions` for the options (``size`` is refused: a template's members
    differ). Raises ``ValueError`` for a malformed template, a function whose parameters (other
    than the context) are not exactly the template's variables, a signature the handler reader
    refuses (see :mod:`.handler`), or completions for a name that is not a variable;
    ``TypeError`` for a completer that is neither callable nor a sequence of strings.
    """
    owner = f"Resource template {uri_template!r}"
    template = UriTemplate(uri_template)
    if not template.variables:
        raise ValueError(f"{owner} has no variables; use make_resource for a fixed URI")
    if options.get("size") is not None:
        raise ValueError(f"{owner}: a template has no size (its resources each have their own)")
    handler = read_handler(fn, owner)
    names = handler.names
    missing = [v for v in template.variables if v not in names]
    extra = [name for name in names if name not in template.variables]
    if missing or extra:
        problems = []
        if missing:
            problems.append(f"no parameter for variable(s) {', '.join(map(repr, missing))}")
        if extra:
            problems.append(f"parameter(s) {', '.join(map(repr, extra))} not in the template")
        raise ValueError(
            f"{owner}: the parameters of {default_name(fn) or fn!r} must be exactly the"
            f" template's variables: {'; '.join(problems)}"
        )
    return RegisteredTemplate(template, handler, options)


# ------------------------------------------------------------------ reading


async def read_resource(
    resources: Mapping[str, RegisteredResource | ForwardedResource],
    templates: Mapping[str, RegisteredTemplate | ForwardedTemplate],
    ctx: HandlerContext,
    uri: str,
) -> ReadResourceResult:
    """Answer ``resources/read`` for ``uri`` from a server's resources and templates.

    A static resource with exactly this URI wins; otherwise the first template (in registration
    order) that matches reads it. Nothing matching gets ``ResourceNotFound`` (-32002) with
    ``data={"uri": uri}``. Errors of the function propagate (an ``McpError`` keeps its code,
    anything else becomes an internal error).
    """
    resource = resources.get(uri)
    if resource is not None:
        return await read_static(resource, ctx)
    # A snapshot: templates added or removed while a read is in flight do not disturb it.
    for template in tuple(templates.values()):
        variables = template.match(uri)
        if variables is not None:
            contents = await template.read(ctx, uri, variables)
            return _cached(template, ctx, ReadResourceResult(contents=contents))
    raise ResourceNotFound("Resource not found", {"uri": uri})


async def read_static(
    resource: RegisteredResource | ForwardedResource, ctx: HandlerContext
) -> ReadResourceResult:
    """Answer ``resources/read`` of ``resource`` (a static one, found by its URI)."""
    return _cached(resource, ctx, ReadResourceResult(contents=await resource.read(ctx)))


def _cached(
    item: _Description[Any] | ForwardedResource | ForwardedTemplate,
    ctx: HandlerContext,
    result: ReadResourceResult,
) -> ReadResourceResult:
    """``result`` with the cache hints of ``item``, else of the server (revisions before
    2026-07-28 leave them out)."""
    ttl = item.cache_ttl_ms if item.cache_ttl_ms is not None else ctx.server.cache_ttl_ms
    scope = item.cache_scope if item.cache_scope is not None else ctx.server.cache_scope
    if ttl is not None:
        result.ttl_ms = ttl
        result.cache_scope = scope
    elif item.cache_scope is not None:
        result.cache_scope = scope
    return result
