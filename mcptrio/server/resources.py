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
  ``resources/read``. It takes no parameters, except one annotated
  :class:`~mcptrio.server.context.Context` if it wants the request's context.
- **templates** (:func:`make_template`): a function whose parameters are exactly the variables of
  an RFC 6570 URI template (:class:`~mcptrio.server.uri_template.UriTemplate`). Values matched
  from the URI are converted to each parameter's annotation with ``msgspec.convert(...,
  strict=False)`` (``int``, ``float``, ``bool``, enums, ``Literal``, ``list[str]`` for exploded
  variables...); a value that does not convert gets ``InvalidParams`` (-32602). A comma-separated
  value of a non-exploded variable is split for a ``list`` annotation. A variable absent from the
  URI (an optional query parameter) leaves the parameter at its default, or gets
  ``InvalidParams`` when it has none.

What a function returns becomes the resource's contents:

- ``str``: text contents; ``bytes``: binary contents (base64);
- ``ResourceContents`` (``TextResourceContents`` / ``BlobResourceContents``) or a non-empty list
  of them: used as they are;
- a ``dict``, ``list``, ``tuple``, msgspec ``Struct`` or dataclass: JSON text, with mime type
  ``application/json`` unless the resource declares another;
- anything else is a programming error (``TypeError``, answered as an internal error).

Text and binary contents get the resource's ``mime_type`` (or the defaults above); their ``uri``
is the URI that was read. Synchronous functions run in a worker thread so they never block the
event loop; async ones run in the request's task and are cancelled with it.

Descriptions and contents are built for the newest revision; the session's connection fits them
to the negotiated one (:mod:`mcptrio.protocol.fitting`: ``title``, ``_meta`` and
``annotations.lastModified`` are left out before 2025-06-18 and ``icons`` before 2025-11-25).

:class:`ResourceRegistry` keeps a server's resources and templates, in registration order, and
answers ``resources/read``: a static URI first, then each template in turn; nothing matching
gets ``ResourceNotFound`` (-32002) with ``data={"uri": uri}``.
"""

from __future__ import annotations

import base64
import dataclasses
import inspect
import re
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

import msgspec
from msgspec import UNSET

from ..protocol.errors import InvalidParams, ResourceNotFound
from ..protocol.types import (
    Annotations,
    Icon,
    ReadResourceResult,
    Resource,
    ResourceContents,
    ResourceTemplate,
)
from .completion import Completer, call_user_function, check_completions, is_context_annotation
from .context import Context
from .uri_template import UriTemplate

__all__ = [
    "RegisteredResource",
    "RegisteredTemplate",
    "ResourceRegistry",
    "make_resource",
    "make_template",
    "to_resource_contents",
]

_TEXT_DEFAULT = "text/plain"
_BINARY_DEFAULT = "application/octet-stream"
_JSON = "application/json"
# RFC 3986: a URI starts with a scheme and a colon.
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S*")


def _check_uri(uri: str, what: str) -> None:
    if not isinstance(uri, str) or not _URI.fullmatch(uri):
        raise ValueError(f"{what}: {uri!r} is not a URI (RFC 3986 needs 'scheme:...')")


# ------------------------------------------------------------------ contents


def _binary(uri: str, data: bytes | bytearray | memoryview, mime_type: str | None) -> Any:
    return ResourceContents(
        uri=uri,
        mime_type=mime_type or _BINARY_DEFAULT,
        blob=base64.b64encode(bytes(data)).decode("ascii"),
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


class _Description:
    """The descriptive fields resources and templates share."""

    def __init__(
        self,
        *,
        name: str,
        title: str | None,
        description: str | None,
        mime_type: str | None,
        annotations: Annotations | None,
        icons: Sequence[Icon] | None,
        meta: Mapping[str, Any] | None,
    ) -> None:
        if not name:
            raise ValueError("A resource needs a non-empty name")
        self.name = name
        self.title = title
        self.description = description
        self.mime_type = mime_type
        self.annotations = annotations
        self.icons: tuple[Icon, ...] | None = None if icons is None else tuple(icons)
        self.meta: dict[str, Any] | None = None if meta is None else dict(meta)

    def _fields(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": UNSET if self.title is None else self.title,
            "description": UNSET if self.description is None else self.description,
            "mime_type": UNSET if self.mime_type is None else self.mime_type,
            "annotations": UNSET if self.annotations is None else self.annotations,
            "icons": list(self.icons) if self.icons else UNSET,
            "meta": UNSET if self.meta is None else self.meta,
        }


# ------------------------------------------------------------------ static resources


class RegisteredResource(_Description):
    """A resource with a fixed URI: static contents or a function called on each read."""

    def __init__(
        self,
        *,
        uri: str,
        source: Callable[..., Any] | None,
        contents: tuple[ResourceContents, ...],
        context_parameter: str | None,
        size: int | None,
        **description: Any,
    ) -> None:
        super().__init__(**description)
        self.uri = uri
        self.size = size
        self.fn = source
        self._contents = contents
        self._context_parameter = context_parameter
        self._definition: Resource | None = None

    def __repr__(self) -> str:
        return f"<RegisteredResource {self.uri!r}>"

    @property
    def definition(self) -> Resource:
        """The ``Resource`` for ``resources/list``, in the newest shape."""
        if self._definition is None:
            self._definition = Resource(
                uri=self.uri, size=UNSET if self.size is None else self.size, **self._fields()
            )
        return self._definition

    async def read(self, ctx: Context) -> list[ResourceContents]:
        """The contents (calls the function, if there is one)."""
        if self.fn is None:
            contents = list(self._contents)
        else:
            kwargs = {} if self._context_parameter is None else {self._context_parameter: ctx}
            value = await call_user_function(self.fn, **kwargs)
            contents = to_resource_contents(value, self.uri, self.mime_type)
        return contents


def _context_parameter(fn: Callable[..., Any], owner: str) -> tuple[str | None, dict[str, Any]]:
    """The name of ``fn``'s Context parameter, and the annotations of all its parameters."""
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise ValueError(f"{owner}: cannot resolve the annotations of {fn!r}: {exc}") from None
    context_parameter: str | None = None
    for parameter in inspect.signature(fn).parameters.values():
        if is_context_annotation(hints.get(parameter.name, Any)):
            context_parameter = parameter.name
    return context_parameter, hints


def make_resource(
    source: str | bytes | Callable[..., Any],
    *,
    uri: str,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
    annotations: Annotations | None = None,
    icons: Sequence[Icon] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> RegisteredResource:
    """Describe a resource at ``uri`` whose contents come from ``source`` (module docstring).

    The name defaults to the function's name, or to the URI. For static contents, ``size``
    defaults to their size in bytes, and the description of a function to its docstring.
    Raises ``ValueError`` for a ``uri`` that is not a URI or is a template, and for a function
    with parameters other than a ``Context`` one (or ones with defaults).
    """
    owner = f"Resource {uri!r}"
    _check_uri(uri, owner)
    if "{" in uri or "}" in uri:
        raise ValueError(f"{owner}: a URI with '{{...}}' is a template; use make_template")
    if size is not None and size < 0:
        raise ValueError(f"{owner}: size must be >= 0, not {size}")
    fn: Callable[..., Any] | None = None
    contents: tuple[ResourceContents, ...] = ()
    context_parameter: str | None = None
    default_name = uri
    if isinstance(source, str):
        contents = (ResourceContents(uri=uri, mime_type=mime_type or _TEXT_DEFAULT, text=source),)
        mime_type = mime_type or _TEXT_DEFAULT
        size = len(source.encode()) if size is None else size
    elif isinstance(source, bytes | bytearray | memoryview):
        contents = (_binary(uri, source, mime_type),)
        mime_type = mime_type or _BINARY_DEFAULT
        size = len(bytes(source)) if size is None else size
    elif callable(source):
        fn = source
        context_parameter, _ = _context_parameter(fn, owner)
        for parameter in inspect.signature(fn).parameters.values():
            if parameter.name != context_parameter and parameter.default is parameter.empty:
                raise ValueError(
                    f"{owner}: a resource function takes no parameters except one annotated"
                    f" Context, but {getattr(fn, '__name__', fn)!r} has {parameter.name!r}"
                    " (a URI with '{...}' variables makes a template)"
                )
        fn_name = getattr(fn, "__name__", "")
        if fn_name and fn_name != "<lambda>":
            default_name = fn_name
        if description is None:
            description = inspect.getdoc(fn) or None
    else:
        raise TypeError(f"{owner}: the source must be str, bytes or a function, not {source!r}")
    return RegisteredResource(
        uri=uri,
        source=fn,
        contents=contents,
        context_parameter=context_parameter,
        size=size,
        name=default_name if name is None else name,
        title=title,
        description=description,
        mime_type=mime_type,
        annotations=annotations,
        icons=icons,
        meta=meta,
    )


# ------------------------------------------------------------------ templates


_SEQUENCES = (list, tuple, set, frozenset)


def _is_list_annotation(annotation: Any) -> bool:
    """Whether a comma-separated value should be split for this annotation (``list[int]``...)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_list_annotation(get_args(annotation)[0])
    if origin is Union or isinstance(annotation, types.UnionType):
        return any(_is_list_annotation(member) for member in get_args(annotation))
    return annotation in _SEQUENCES or origin in _SEQUENCES


class _Parameter:
    __slots__ = ("annotation", "convert", "default", "name", "split")

    def __init__(self, name: str, annotation: Any, default: Any) -> None:
        self.name = name
        self.annotation = annotation
        self.default = default
        self.convert = annotation is not str and annotation is not Any
        self.split = _is_list_annotation(annotation)


class RegisteredTemplate(_Description):
    """A family of resources: a URI template and the function that reads its members."""

    def __init__(
        self,
        *,
        template: UriTemplate,
        fn: Callable[..., Any],
        parameters: tuple[_Parameter, ...],
        context_parameter: str | None,
        completions: dict[str, Completer | Sequence[str]],
        **description: Any,
    ) -> None:
        super().__init__(**description)
        self.template = template
        self.fn = fn
        #: Completers per variable name (a callable or the candidate values), as given.
        self.completions = completions
        self._parameters = parameters
        self._context_parameter = context_parameter
        self._definition: ResourceTemplate | None = None

    def __repr__(self) -> str:
        return f"<RegisteredTemplate {self.template.template!r}>"

    @property
    def uri_template(self) -> str:
        return self.template.template

    @property
    def variables(self) -> tuple[str, ...]:
        return self.template.variables

    @property
    def definition(self) -> ResourceTemplate:
        """The ``ResourceTemplate`` for ``resources/templates/list``, in the newest shape."""
        if self._definition is None:
            self._definition = ResourceTemplate(
                uri_template=self.template.template, **self._fields()
            )
        return self._definition

    def match(self, uri: str) -> dict[str, str | list[str]] | None:
        """The template's variables in ``uri``, or ``None`` if ``uri`` is not one of its members."""
        return self.template.match(uri)

    async def read(
        self, ctx: Context, uri: str, variables: Mapping[str, Any]
    ) -> list[ResourceContents]:
        """Convert ``variables`` (from :meth:`match`), call the function, return the contents.

        Raises ``InvalidParams`` for a value that does not convert to its parameter's type, or a
        variable missing from the URI whose parameter has no default.
        """
        kwargs = self._arguments(uri, variables)
        if self._context_parameter is not None:
            kwargs[self._context_parameter] = ctx
        value = await call_user_function(self.fn, **kwargs)
        return to_resource_contents(value, uri, self.mime_type)

    def _arguments(self, uri: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        for parameter in self._parameters:
            if parameter.name not in variables:
                if parameter.default is inspect.Parameter.empty:
                    raise InvalidParams(
                        f"Resource {uri!r}: no value for {parameter.name!r}"
                        f" (template {self.uri_template!r})"
                    )
                continue
            value = variables[parameter.name]
            if not parameter.convert:
                if not isinstance(value, str):
                    value = ",".join(value)
                kwargs[parameter.name] = value
                continue
            if parameter.split and isinstance(value, str):
                value = value.split(",") if value else []
            try:
                kwargs[parameter.name] = msgspec.convert(value, parameter.annotation, strict=False)
            except msgspec.ValidationError as exc:
                raise InvalidParams(
                    f"Resource {uri!r}: invalid value {value!r} for {parameter.name!r}: {exc}"
                ) from None
        return kwargs


def make_template(
    fn: Callable[..., Any],
    *,
    uri_template: str,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    annotations: Annotations | None = None,
    icons: Sequence[Icon] | None = None,
    meta: Mapping[str, Any] | None = None,
    completions: Mapping[str, Completer | Sequence[str]] | None = None,
) -> RegisteredTemplate:
    """Describe ``fn`` as the reader of the resources ``uri_template`` names (module docstring).

    Raises ``ValueError`` for a malformed template, a function whose parameters (other than a
    ``Context`` one) are not exactly the template's variables, ``*args`` / ``**kwargs`` /
    positional-only parameters, or completions for a name that is not a variable; ``TypeError``
    for a completer that is neither callable nor a sequence of strings.
    """
    owner = f"Resource template {uri_template!r}"
    template = UriTemplate(uri_template)
    if not template.variables:
        raise ValueError(f"{owner} has no variables; use make_resource for a fixed URI")
    context_parameter, hints = _context_parameter(fn, owner)
    parameters: list[_Parameter] = []
    for parameter in inspect.signature(fn).parameters.values():
        if parameter.name == context_parameter:
            continue
        if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            raise ValueError(
                f"{owner}: parameter {parameter.name!r} must be passable by keyword"
                " (no *args, **kwargs or positional-only parameters)"
            )
        parameters.append(
            _Parameter(parameter.name, hints.get(parameter.name, Any), parameter.default)
        )
    names = {parameter.name for parameter in parameters}
    missing = [v for v in template.variables if v not in names]
    extra = [p.name for p in parameters if p.name not in template.variables]
    if missing or extra:
        problems = []
        if missing:
            problems.append(f"no parameter for variable(s) {', '.join(map(repr, missing))}")
        if extra:
            problems.append(f"parameter(s) {', '.join(map(repr, extra))} not in the template")
        raise ValueError(
            f"{owner}: the parameters of {getattr(fn, '__name__', fn)!r} must be exactly the"
            f" template's variables: {'; '.join(problems)}"
        )
    fn_name = getattr(fn, "__name__", "")
    default_name = fn_name if fn_name and fn_name != "<lambda>" else uri_template
    return RegisteredTemplate(
        template=template,
        fn=fn,
        parameters=tuple(parameters),
        context_parameter=context_parameter,
        completions=check_completions(completions, template.variables, owner),
        name=default_name if name is None else name,
        title=title,
        description=(inspect.getdoc(fn) or None) if description is None else description,
        mime_type=mime_type,
        annotations=annotations,
        icons=icons,
        meta=meta,
    )


# ------------------------------------------------------------------ registry


class ResourceRegistry:
    """A server's resources and templates, in registration order.

    ``on_change`` is called (synchronously) after every addition and every removal that removed
    something, so the server can send ``notifications/resources/list_changed``.
    """

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        self.on_change = on_change
        self._resources: dict[str, RegisteredResource] = {}
        self._templates: dict[str, RegisteredTemplate] = {}

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def add_resource(self, resource: RegisteredResource) -> None:
        """Add ``resource``; ``ValueError`` if one with the same URI is registered."""
        if resource.uri in self._resources:
            raise ValueError(f"A resource with URI {resource.uri!r} is already registered")
        self._resources[resource.uri] = resource
        self._changed()

    def add_template(self, template: RegisteredTemplate) -> None:
        """Add ``template``; ``ValueError`` if the same URI template is registered."""
        key = template.uri_template
        if key in self._templates:
            raise ValueError(f"A resource template {key!r} is already registered")
        self._templates[key] = template
        self._changed()

    def remove_resource(self, uri: str) -> bool:
        """Remove the resource at ``uri``; whether there was one."""
        if self._resources.pop(uri, None) is None:
            return False
        self._changed()
        return True

    def remove_template(self, uri_template: str) -> bool:
        """Remove the template ``uri_template``; whether there was one."""
        if self._templates.pop(uri_template, None) is None:
            return False
        self._changed()
        return True

    def resources(self) -> list[RegisteredResource]:
        return list(self._resources.values())

    def templates(self) -> list[RegisteredTemplate]:
        return list(self._templates.values())

    def get_resource(self, uri: str) -> RegisteredResource | None:
        return self._resources.get(uri)

    def get_template(self, uri_template: str) -> RegisteredTemplate | None:
        """The template registered as ``uri_template`` (as completion's ``ref/resource`` names)."""
        return self._templates.get(uri_template)

    async def read(self, ctx: Context, uri: str) -> ReadResourceResult:
        """Answer ``resources/read`` for ``uri``.

        A static resource with exactly this URI wins; otherwise the first template (in
        registration order) that matches reads it. Nothing matching gets ``ResourceNotFound``
        (-32002) with ``data={"uri": uri}``. Errors of the function propagate (an ``McpError``
        keeps its code, anything else becomes an internal error).
        """
        resource = self._resources.get(uri)
        if resource is not None:
            return ReadResourceResult(contents=await resource.read(ctx))
        # A snapshot: templates added or removed while a read is in flight do not disturb it.
        for template in tuple(self._templates.values()):
            variables = template.match(uri)
            if variables is not None:
                return ReadResourceResult(contents=await template.read(ctx, uri, variables))
        raise ResourceNotFound("Resource not found", {"uri": uri})
