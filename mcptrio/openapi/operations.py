"""The operations of a document, each read into what a tool needs: its arguments and their
schema, and where each argument goes in the HTTP request.

Arguments, in the tool's ``inputSchema``:

- every **parameter** (path, query, header, cookie) is an argument of its own name; the
  operation's parameters override the path's of the same name and place. Header parameters
  named ``Accept``, ``Content-Type`` or ``Authorization`` are left out, as OpenAPI says. When
  two parameters share a name (a path ``id`` and a query ``id``), the later is
  ``<place>_<name>`` (``query_id``);
- the **request body** of a JSON, form or multipart media type whose schema is a plain object
  (``properties``, no ``allOf``/``oneOf``/``anyOf`` at its top) gives its properties as
  arguments of their own, unless one of them has a parameter's name; any other body (an array,
  a union, a raw file, a body whose properties clash) is one argument, ``body``
  (``request_body`` if a parameter is called ``body``).

The media type a body is sent as is the first the document lists of: JSON
(``application/json`` or ``+json``), ``multipart/form-data``,
``application/x-www-form-urlencoded``, then whatever comes first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .document import OpenApiDocument, OpenApiError
from .schemas import References, SchemaConversion, is_binary

__all__ = ["METHODS", "Body", "Operation", "Parameter", "read_operations"]

#: The methods an OpenAPI path item may hold, in the order they are read.
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
_PLACES = ("path", "query", "header", "cookie")
Place = Literal["path", "query", "header", "cookie"]


@dataclass(frozen=True, slots=True)
class Parameter:
    """A parameter: its ``name`` in the API, its place, and the tool ``argument`` it comes
    from; ``style``/``explode`` as OpenAPI defines them (defaults filled in); ``json`` when it
    is given by ``content`` with a JSON media type (sent as JSON text)."""

    name: str
    place: Place
    argument: str
    required: bool
    schema: Any
    style: str
    explode: bool
    json: bool = False


@dataclass(frozen=True, slots=True)
class Body:
    """A request body: its media type and, either ``properties`` (argument -> property) when
    its properties are arguments, or ``argument`` holding it whole; the properties that are
    files (binary: sent as multipart file parts) with their media type, and whether the whole
    body is binary."""

    media_type: str
    required: bool
    properties: Mapping[str, str] | None
    argument: str | None
    files: Mapping[str, str] = field(default_factory=dict)
    binary: bool = False


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation of the document, read."""

    method: str
    path: str
    operation_id: str | None
    tags: tuple[str, ...]
    summary: str | None
    description: str | None
    deprecated: bool
    parameters: tuple[Parameter, ...]
    body: Body | None
    input_schema: dict[str, Any] = field(repr=False)

    @property
    def safe(self) -> bool:
        """Whether it is a GET without a body."""
        return self.method == "GET" and self.body is None

    def only_path_required(self) -> bool:
        """Whether every required argument is a path parameter."""
        return all(p.place == "path" for p in self.parameters if p.required) and (
            self.body is None or not self.body.required
        )

    def where(self) -> str:
        """``GET /items/{id}``, for messages."""
        return f"{self.method} {self.path}"


def read_operations(document: OpenApiDocument) -> list[Operation]:
    """Every operation of ``document``, in the order of its paths and methods."""
    references = References(document)
    operations = []
    for path, item in document.paths.items():
        item = references.deref(item)
        if not isinstance(item, Mapping):
            raise OpenApiError(f"{document.source}: paths[{path!r}] is not an object")
        shared = item.get("parameters") or []
        for method in METHODS:
            operation = item.get(method)
            if isinstance(operation, Mapping):
                operations.append(_read(document, references, str(path), method, operation, shared))
    return operations


def _read(
    document: OpenApiDocument,
    references: References,
    path: str,
    method: str,
    operation: Mapping[str, Any],
    shared: list[Any],
) -> Operation:
    where = f"{document.source}: {method.upper()} {path}"
    conversion = SchemaConversion(references, document.version)
    declared: dict[tuple[str, Place], Mapping[str, Any]] = {}
    for raw in [*shared, *(operation.get("parameters") or [])]:
        parameter = references.deref(raw)
        if not isinstance(parameter, Mapping) or parameter.get("in") not in _PLACES:
            raise OpenApiError(f"{where}: a parameter without a valid 'in'")
        if not isinstance(parameter.get("name"), str):
            raise OpenApiError(f"{where}: a parameter without a name")
        declared[(parameter["name"], parameter["in"])] = parameter
    properties: dict[str, Any] = {}
    required: list[str] = []
    parameters: list[Parameter] = []
    for (name, place), parameter in declared.items():
        if place == "header" and name.lower() in _IGNORED_HEADERS:
            continue
        argument = name if name not in properties else f"{place}_{name}"
        read = _parameter(conversion, parameter, name, place, argument, where)
        parameters.append(read)
        properties[argument] = read.schema
        if read.required:
            required.append(argument)
    body = None
    raw_body = operation.get("requestBody")
    if raw_body is not None:
        body = _body(conversion, references.deref(raw_body), properties, required, where)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    defs = conversion.defs()
    if defs:
        schema["$defs"] = defs
    tags = operation.get("tags")
    operation_id = operation.get("operationId")
    return Operation(
        method=method.upper(),
        path=path,
        operation_id=operation_id if isinstance(operation_id, str) else None,
        tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (),
        summary=_text(operation.get("summary")),
        description=_text(operation.get("description")),
        deprecated=operation.get("deprecated") is True,
        parameters=tuple(parameters),
        body=body,
        input_schema=schema,
    )


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _parameter(
    conversion: SchemaConversion,
    parameter: Mapping[str, Any],
    name: str,
    place: Place,
    argument: str,
    where: str,
) -> Parameter:
    json_content = False
    raw = parameter.get("schema")
    content = parameter.get("content")
    if raw is None and isinstance(content, Mapping) and content:
        media, given = next(iter(content.items()))
        raw = given.get("schema") if isinstance(given, Mapping) else None
        json_content = _is_json(str(media))
    schema = conversion.convert(raw if raw is not None else {})
    if not isinstance(schema, dict):
        schema = {}
    description = _text(parameter.get("description"))
    if description and "description" not in schema:
        schema = {**schema, "description": description}
    if parameter.get("deprecated") is True:
        schema = {**schema, "deprecated": True}
    style = parameter.get("style")
    default_style = "form" if place in ("query", "cookie") else "simple"
    style = style if isinstance(style, str) else default_style
    explode = parameter.get("explode")
    return Parameter(
        name=name,
        place=place,
        argument=argument,
        required=place == "path" or parameter.get("required") is True,
        schema=schema,
        style=style,
        explode=explode if isinstance(explode, bool) else style == "form",
        json=json_content,
    )


def _is_json(media_type: str) -> bool:
    media_type = media_type.split(";", 1)[0].strip().lower()
    return media_type == "application/json" or media_type.endswith("+json")


def _media_type(content: Mapping[str, Any]) -> str:
    """The media type a body is sent as (see the module docstring)."""
    kinds = [str(k) for k in content]
    for wanted in (_is_json, lambda m: m.startswith("multipart/form-data")):
        for kind in kinds:
            if wanted(kind):
                return kind
    for kind in kinds:
        if kind.startswith("application/x-www-form-urlencoded"):
            return kind
    return kinds[0]


def _body(
    conversion: SchemaConversion,
    body: Any,
    properties: dict[str, Any],
    required: list[str],
    where: str,
) -> Body | None:
    content = body.get("content") if isinstance(body, Mapping) else None
    if not isinstance(content, Mapping) or not content:
        return None
    media_type = _media_type(content)
    given = content[media_type]
    raw = given.get("schema") if isinstance(given, Mapping) else None
    media = media_type.split(";", 1)[0].strip().lower()
    form = media in ("multipart/form-data", "application/x-www-form-urlencoded")
    if raw is None:
        raw = {} if _is_json(media) or form else {"type": "string", "format": "binary"}
    schema = conversion.convert(raw)
    body_required = body.get("required") is True
    raw_bytes = not (_is_json(media) or form or media.startswith("text/"))
    if raw_bytes and isinstance(schema, dict) and schema.get("type") in (None, "string"):
        # Anything else is sent as bytes, given as base64.
        schema = {**schema, "type": "string", "format": "binary", "contentEncoding": "base64"}
    if _flattens(schema, properties):
        names = {name: name for name in schema["properties"]}
        properties.update(schema["properties"])
        if body_required:
            required.extend(n for n in schema.get("required", ()) if n in names)
        kinds = {n: _file_type(s) for n, s in schema["properties"].items()}
        files = {n: kind for n, kind in kinds.items() if kind is not None}
        return Body(media_type, body_required, names, None, files)
    argument = "body" if "body" not in properties else "request_body"
    description = _text(body.get("description"))
    if description and isinstance(schema, dict) and "description" not in schema:
        schema = {**schema, "description": description}
    properties[argument] = schema
    if body_required:
        required.append(argument)
    return Body(media_type, body_required, None, argument, binary=is_binary(schema))


def _flattens(schema: Any, properties: Mapping[str, Any]) -> bool:
    """Whether a body's properties become arguments (see the module docstring)."""
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties"), Mapping):
        return False
    if schema.get("type", "object") != "object":
        return False
    if any(k in schema for k in ("allOf", "anyOf", "oneOf", "$ref", "not", "if")):
        return False
    return not any(name in properties for name in schema["properties"])


def _file_type(schema: Any) -> str | None:
    """The media type of the file (or files, an array) a property holds; ``None``: no file."""
    if isinstance(schema, Mapping) and schema.get("type") == "array":
        schema = schema.get("items")
    if not is_binary(schema):
        return None
    media = schema.get("contentMediaType")
    return media if isinstance(media, str) else "application/octet-stream"
