"""A tool call's arguments as the HTTP request of its operation.

Parameters are serialised as OpenAPI's ``style`` and ``explode`` say, for the styles the
places use most: path ``simple`` (and ``label``, ``matrix``), query ``form`` (exploded or not),
``spaceDelimited``, ``pipeDelimited`` and ``deepObject``, header ``simple``, cookie ``form``.
Booleans are ``true``/``false``; a parameter given by JSON ``content`` is sent as JSON text.
Path values are percent-encoded whole (a ``/`` in one cannot reach another route).

Bodies: JSON as JSON; ``application/x-www-form-urlencoded`` as a form (arrays repeat their
name, objects are sent as JSON text); ``multipart/form-data`` as parts, the binary properties
(base64 in the arguments) decoded into file parts named after their property; a binary body
decoded from base64; a ``text/*`` body as UTF-8.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from ..protocol.errors import LocalError
from .multipart import Part, encode_multipart
from .operations import Body, Operation, Parameter

__all__ = ["ArgumentError", "OutgoingRequest", "build_request"]


class ArgumentError(LocalError, ValueError):
    """An argument that cannot be sent as its operation says (a file that is not base64)."""


@dataclass(frozen=True, slots=True)
class OutgoingRequest:
    method: str
    url: str
    headers: list[tuple[str, str]]
    body: bytes


def _scalar(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _joined(value: Any, separator: str, explode: bool, pair: str = ",") -> str:
    """A simple-style value: arrays joined, objects as ``k,v`` (``k=v`` exploded)."""
    if isinstance(value, list):
        return separator.join(_scalar(v) for v in value)
    if isinstance(value, dict):
        if explode:
            return separator.join(f"{k}={_scalar(v)}" for k, v in value.items())
        return pair.join(f"{k}{pair}{_scalar(v)}" for k, v in value.items())
    return _scalar(value)


def _path_value(parameter: Parameter, value: Any) -> str:
    if parameter.json:
        return quote(json.dumps(value), safe="")
    encoded: Any = value
    if isinstance(value, list):
        encoded = [quote(_scalar(v), safe="") for v in value]
    elif isinstance(value, dict):
        encoded = {quote(str(k), safe=""): quote(_scalar(v), safe="") for k, v in value.items()}
    else:
        encoded = quote(_scalar(value), safe="")
    if parameter.style == "label":
        return "." + _joined(encoded, "." if parameter.explode else ",", parameter.explode)
    if parameter.style == "matrix":
        if isinstance(encoded, list) and parameter.explode:
            return "".join(f";{parameter.name}={v}" for v in encoded)
        return f";{parameter.name}=" + _joined(encoded, ",", False)
    return _joined(encoded, ",", parameter.explode)


def _query_pairs(parameter: Parameter, value: Any) -> list[tuple[str, str]]:
    name = parameter.name
    if parameter.json:
        return [(name, json.dumps(value))]
    if parameter.style == "deepObject" and isinstance(value, dict):
        return [(f"{name}[{k}]", _scalar(v)) for k, v in value.items()]
    if isinstance(value, list):
        if parameter.style == "form" and parameter.explode:
            return [(name, _scalar(v)) for v in value]
        separator = {"spaceDelimited": " ", "pipeDelimited": "|"}.get(parameter.style, ",")
        return [(name, separator.join(_scalar(v) for v in value))]
    if isinstance(value, dict):
        if parameter.explode:
            return [(str(k), _scalar(v)) for k, v in value.items()]
        return [(name, ",".join(f"{k},{_scalar(v)}" for k, v in value.items()))]
    return [(name, _scalar(value))]


def _decoded(value: Any, argument: str) -> bytes:
    if not isinstance(value, str):
        raise ArgumentError(f"{argument}: give the file's contents as a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ArgumentError(f"{argument}: not valid base64") from None


def _body(body: Body, arguments: Mapping[str, Any]) -> tuple[bytes, str] | None:
    """The body's bytes and ``Content-Type``; ``None`` when no argument of it was given."""
    media = body.media_type.split(";", 1)[0].strip().lower()
    if body.properties is not None:
        given = {p: arguments[a] for a, p in body.properties.items() if a in arguments}
        if not given and not body.required:
            return None
    else:
        assert body.argument is not None
        if body.argument not in arguments:
            return None
        value = arguments[body.argument]
        if body.binary:
            return _decoded(value, body.argument), body.media_type
        if media.startswith("text/") and isinstance(value, str):
            return value.encode("utf-8"), body.media_type
        if media in ("multipart/form-data", "application/x-www-form-urlencoded"):
            given = value if isinstance(value, dict) else {body.argument: value}
        else:
            return json.dumps(value).encode("utf-8"), body.media_type
    if media == "multipart/form-data":
        parts: list[Part] = []
        for name, value in given.items():
            if name in body.files:
                files = value if isinstance(value, list) else [value]
                media = body.files[name]
                parts.extend(Part(name, _decoded(f, name), name, media) for f in files)
            elif isinstance(value, list) and not any(isinstance(v, (dict, list)) for v in value):
                parts.extend(Part(name, _scalar(v).encode("utf-8")) for v in value)
            else:
                parts.append(Part(name, _scalar(value).encode("utf-8")))
        return encode_multipart(parts)
    if media == "application/x-www-form-urlencoded":
        pairs = [
            (name, _scalar(v))
            for name, value in given.items()
            for v in (value if isinstance(value, list) else [value])
        ]
        return urlencode(pairs).encode("ascii"), body.media_type
    return json.dumps(given).encode("utf-8"), body.media_type


def build_request(
    operation: Operation, base_url: str, arguments: Mapping[str, Any]
) -> OutgoingRequest:
    """The request a call of ``operation`` with ``arguments`` (already validated against its
    schema) sends to the API at ``base_url``."""
    path = operation.path
    query: list[tuple[str, str]] = []
    headers: list[tuple[str, str]] = []
    cookies: list[str] = []
    for parameter in operation.parameters:
        if parameter.argument not in arguments or arguments[parameter.argument] is None:
            continue
        value = arguments[parameter.argument]
        if parameter.place == "path":
            path = path.replace("{" + parameter.name + "}", _path_value(parameter, value))
        elif parameter.place == "query":
            query.extend(_query_pairs(parameter, value))
        elif parameter.place == "header":
            text = json.dumps(value) if parameter.json else _joined(value, ",", parameter.explode)
            headers.append((parameter.name, text))
        else:
            cookies.append(f"{parameter.name}={quote(_joined(value, ',', False), safe='')}")
    if cookies:
        headers.append(("cookie", "; ".join(cookies)))
    url = base_url.rstrip("/") + path
    if query:
        url += "?" + urlencode(query, quote_via=quote)
    body = b""
    if operation.body is not None:
        encoded = _body(operation.body, arguments)
        if encoded is not None:
            body, content_type = encoded
            headers.append(("content-type", content_type))
    return OutgoingRequest(operation.method, url, headers, body)
