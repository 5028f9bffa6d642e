"""OpenAPI schemas as the JSON Schema (2020-12) of a tool's ``inputSchema``.

A :class:`SchemaConversion` converts the schemas of one tool (its parameters' and its body's)
and gathers the ``$defs`` they need, which go at the root of that tool's ``inputSchema``:

- **References** are resolved with ``referencing`` (the library ``jsonschema`` is built on):
  ``#/components/...`` in the document, and relative references to other files beside a
  document read from a file. A referenced schema is copied in place, so that a tool's schema
  stands on its own. A reference met again inside its own expansion (a recursive schema: a
  tree, a linked list) is not expanded again: it becomes ``{"$ref": "#/$defs/<Name>"}``, and
  ``<Name>`` is converted once into ``$defs``. A schema never loops.
- **OpenAPI 3.0** specifics become their JSON Schema form: ``nullable: true`` adds ``"null"`` to
  ``type`` (or wraps the schema in ``anyOf`` with ``{"type": "null"}`` when it has no type);
  boolean ``exclusiveMinimum``/``exclusiveMaximum`` move the bound over; ``example`` becomes
  ``examples``. Keywords only OpenAPI knows (``discriminator``, ``xml``, ``externalDocs``) and
  extensions (``x-...``) are dropped.
- **Binary strings** (``format: binary``, and in 3.1 a string with a ``contentMediaType`` and no
  ``contentEncoding``) are what a model cannot write as JSON: they become base64 strings
  (``contentEncoding: base64``), keeping ``format: binary`` so that the caller knows to decode
  them before sending (a file upload, a raw body).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import referencing
import referencing.exceptions

from .document import OpenApiDocument, OpenApiError, parse_document

__all__ = ["References", "SchemaConversion", "is_binary"]

#: A ``referencing`` resolver (its class is not part of the library's public names).
Resolver = Any

# Keywords holding a map of schemas, a list of them, or one.
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_ONE_SCHEMA = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
# OpenAPI's own keywords, which mean nothing to a JSON Schema validator.
_DROPPED = frozenset({"discriminator", "xml", "externalDocs", "nullable"})
_NAME_CHARACTERS = re.compile(r"[^A-Za-z0-9_.\-]+")
_BINARY_DESCRIPTION = "The file's contents, base64-encoded."


def is_binary(schema: Any) -> bool:
    """Whether a converted schema is a binary string (sent as bytes, given as base64)."""
    return isinstance(schema, Mapping) and schema.get("format") == "binary"


class References:
    """Resolves the ``$ref``s of one document (and of the files beside it it refers to)."""

    def __init__(self, document: OpenApiDocument) -> None:
        source = document.source
        self.base = source if "://" in source else Path(source).resolve().as_uri()
        resource = referencing.Resource.opaque(document.contents)
        # ``retrieve`` is an attrs field the type checker does not see.
        registry: referencing.Registry[Any] = referencing.Registry(
            retrieve=self._retrieve  # type: ignore[call-arg]
        )
        self.registry = registry.with_resource(self.base, resource)
        self.resolver = self.registry.resolver(base_uri=self.base)

    def _retrieve(self, uri: str) -> referencing.Resource[Any]:
        parts = urlsplit(uri)
        if parts.scheme != "file":
            # A document elsewhere would be fetched by a blocking call in the middle of a
            # conversion: only files beside a file are followed.
            raise OpenApiError(
                f"{uri}: only references within the document or to files beside it are followed"
            )
        path = unquote(parts.path)
        try:
            text = Path(path).read_bytes()
        except OSError as exc:
            raise OpenApiError(f"{path}: {exc.strerror or exc}") from None
        contents = parse_document_part(text, path)
        return referencing.Resource.opaque(contents)

    def lookup(self, ref: str, resolver: Resolver, base: str) -> tuple[Any, Resolver, str, str]:
        """What ``ref`` (met in the resource at ``base``) names: its contents, the resolver and
        base for the references inside it, and its absolute URI."""
        uri = urljoin(base, ref)
        try:
            resolved = resolver.lookup(ref)
        except referencing.exceptions.Unresolvable as exc:
            raise OpenApiError(f"{self.base}: cannot resolve $ref {ref!r} ({exc})") from None
        except OpenApiError:
            raise
        return resolved.contents, resolved.resolver, urldefrag(uri).url, uri

    def deref(self, node: Any) -> Any:
        """``node``, or what its ``$ref`` (a chain of them) names: a parameter, a request body,
        a response defined under ``components``."""
        resolver, base = self.resolver, self.base
        seen: set[str] = set()
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            node, resolver, base, uri = self.lookup(node["$ref"], resolver, base)
            if uri in seen:
                raise OpenApiError(f"{self.base}: $ref {uri!r} refers to itself")
            seen.add(uri)
        return node


def parse_document_part(text: bytes, path: str) -> Any:
    """A file a reference points into: any JSON or YAML value (not only a whole document)."""
    try:
        return parse_document(text, path).contents
    except OpenApiError:
        import yaml

        try:
            return yaml.load(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError:
            raise OpenApiError(f"{path}: neither JSON nor YAML") from None


class SchemaConversion:
    """The schemas of one tool, converted, and the ``$defs`` they share (module docstring)."""

    def __init__(self, references: References, version: str) -> None:
        self._references = references
        self._openapi_30 = version == "3.0"
        #: Absolute URI of each schema kept in ``$defs``, and its name there.
        self._names: dict[str, str] = {}
        self._pending: list[tuple[str, Any, Resolver, str]] = []
        self._defs: dict[str, Any] = {}

    def convert(self, schema: Any) -> Any:
        """``schema`` (found in the document) as JSON Schema."""
        return self._schema(schema, (), self._references.resolver, self._references.base)

    def defs(self) -> dict[str, Any]:
        """The ``$defs`` the schemas converted so far refer to (empty: none)."""
        while self._pending:
            uri, contents, resolver, base = self._pending.pop()
            self._defs[self._names[uri]] = self._schema(contents, (uri,), resolver, base)
        return dict(self._defs)

    def _schema(self, node: Any, stack: tuple[str, ...], resolver: Resolver, base: str) -> Any:
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self._reference(node, ref, stack, resolver, base)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if not isinstance(key, str) or key.startswith("x-") or key in _DROPPED:
                continue
            if key in _SCHEMA_MAPS and isinstance(value, Mapping):
                out[key] = {
                    str(k): self._schema(v, stack, resolver, base) for k, v in value.items()
                }
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [self._schema(v, stack, resolver, base) for v in value]
            elif key in _ONE_SCHEMA:
                out[key] = self._schema(value, stack, resolver, base)
            else:
                out[key] = value
        _bounds(out)
        if "example" in out:
            example = out.pop("example")
            out.setdefault("examples", [example])
        _binary(out, self._openapi_30)
        if self._openapi_30 and node.get("nullable") is True:
            return _nullable(out)
        return out

    def _reference(
        self,
        node: Mapping[str, Any],
        ref: str,
        stack: tuple[str, ...],
        resolver: Resolver,
        base: str,
    ) -> Any:
        contents, inner, inner_base, uri = self._references.lookup(ref, resolver, base)
        if uri in stack or uri in self._names:
            name = self._names.get(uri)
            if name is None:
                name = self._names[uri] = self._name_for(uri)
                self._pending.append((uri, contents, inner, inner_base))
            out: Any = {"$ref": f"#/$defs/{name}"}
        else:
            out = self._schema(contents, (*stack, uri), inner, inner_base)
        # 3.0 ignores what sits beside a $ref; 3.1 applies it too (a description, say).
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if siblings and not self._openapi_30:
            extra = self._schema(siblings, stack, resolver, base)
            out = {**out, **extra} if isinstance(out, dict) else {"allOf": [out], **extra}
        return out

    def _name_for(self, uri: str) -> str:
        fragment = urldefrag(uri).fragment
        last = unquote(fragment.rsplit("/", 1)[-1]).replace("~1", "/").replace("~0", "~")
        name = _NAME_CHARACTERS.sub("_", last).strip("_") or "Schema"
        taken = set(self._names.values())
        candidate, count = name, 1
        while candidate in taken:
            count += 1
            candidate = f"{name}{count}"
        return candidate


def _bounds(out: dict[str, Any]) -> None:
    """OpenAPI 3.0's boolean ``exclusiveMinimum``/``exclusiveMaximum``, as numbers."""
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = out.get(exclusive)
        if isinstance(flag, bool):
            del out[exclusive]
            if flag and bound in out:
                out[exclusive] = out.pop(bound)


def _binary(out: dict[str, Any], openapi_30: bool) -> None:
    """A binary string as a base64 one (see the module docstring)."""
    if out.get("type") not in ("string", ["string"]):
        return
    media = out.get("contentMediaType")
    binary = out.get("format") == "binary" or (
        not openapi_30 and isinstance(media, str) and "contentEncoding" not in out
    )
    if binary:
        out["format"] = "binary"
        out["contentEncoding"] = "base64"
        out.setdefault("description", _BINARY_DESCRIPTION)


def _nullable(out: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI 3.0's ``nullable: true``: ``null`` is allowed too."""
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list):
        if "null" not in kind:
            out["type"] = [*kind, "null"]
    else:
        return {"anyOf": [out, {"type": "null"}]}
    enum = out.get("enum")
    if isinstance(enum, list) and None not in enum:
        out["enum"] = [*enum, None]
    return out
