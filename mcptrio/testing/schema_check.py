"""Validate JSON-RPC messages against the official MCP JSON schemas, shipped with mcptrio.

The schemas of every revision mcptrio speaks are package data (``schemas/<rev>/schema.json``
next to this module), copied unchanged from the specification. Usage::

    from mcptrio.testing import validate_message

    validate_message({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "2025-06-18")
    validate_message({"jsonrpc": "2.0", "id": 1, "result": {...}}, rev, "CallToolResult")

What gets checked, by message shape:

- **request / notification** (has ``method``): the JSON-RPC envelope (``JSONRPCRequest`` /
  ``JSONRPCNotification``) and the method's own type, found by its ``method`` constant (e.g.
  ``CallToolRequest``). Before 2025-11-25 the method types leave out ``jsonrpc`` / ``id``, so only
  ``{"method", "params"}`` is checked against them; from 2025-11-25 the whole message is. A
  method the revision does not define fails validation.
- **result response** (has ``result``): the envelope (``JSONRPCResponse`` before 2025-11-25,
  ``JSONRPCResultResponse`` from it) and, when ``direction_hint`` names a result type such as
  ``"CallToolResult"``, the ``result`` member against it.
- **error response** (has ``error``): the envelope (``JSONRPCError`` / ``JSONRPCErrorResponse``)
  and, when ``direction_hint`` names an error type (``"URLElicitationRequiredError"``), the
  whole message against it.
- a **list** (a 2025-03-26 batch): the batch envelope, then each element as above (the hint
  applies to every element). Other revisions reject lists.

``direction_hint`` may also be ``"client"`` or ``"server"`` (who sent the message): requests,
notifications and results are then also checked against the schema's ``ClientRequest`` /
``ServerNotification`` / ``ClientResult`` / ... union, which catches a method sent in the wrong
direction. Any other hint must be a type defined in the revision's schema.

**Extensions** the official schemas do not define (the tasks extension of 2026-07-28, SEP-2663)
are checked against mcptrio's transcription of their SEP (``schemas/extensions/*.json``, whose
``$ref`` s resolve against the revision's own types): their requests and notifications by
method, their results by the hint (``"GetTaskResult"``...), and a result with ``resultType:
"task"`` as the extension's ``CreateTaskResult`` whatever the hint.

Failures raise :class:`jsonschema.ValidationError`. Compiled validators are cached per
(revision, type), so calling this in a loop is cheap. Formats (``uri``, ``byte``...) are not
checked, as jsonschema does not check them by default.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jsonschema import (  # type: ignore[import-untyped]
    Draft7Validator,
    Draft202012Validator,
    ValidationError,
)
from jsonschema.protocols import Validator  # type: ignore[import-untyped]

from ..protocol.revisions import HANDSHAKE_SUPPORTED, SUPPORTED

__all__ = [
    "EXTENSION_PARTS",
    "HANDSHAKE_REVISIONS",
    "RESULT_TYPES",
    "REVISIONS",
    "SCHEMA_DIR",
    "ValidationError",
    "defined_methods",
    "definition_names",
    "extension_definition_names",
    "method_type_name",
    "result_key",
    "union_members",
    "validate_definition",
    "validate_exchange",
    "validate_extension_result",
    "validate_message",
]

#: Where the official schemas are: ``SCHEMA_DIR / "<rev>" / "schema.json"``.
SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
#: The revisions this helper knows (every revision mcptrio speaks has its schema here), oldest
#: first.
REVISIONS: tuple[str, ...] = tuple(reversed(SUPPORTED))
#: The revisions a session opens with ``initialize`` (the tests of handshake-era sessions),
#: oldest first.
HANDSHAKE_REVISIONS: tuple[str, ...] = tuple(reversed(HANDSHAKE_SUPPORTED))


@functools.cache
def _root(revision: str) -> dict[str, Any]:
    path = SCHEMA_DIR / revision / "schema.json"
    if not path.is_file():
        raise ValueError(f"no schema for MCP revision {revision!r} (looked in {path})")
    root: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return root


def _defs_key(revision: str) -> str:
    return "$defs" if "$defs" in _root(revision) else "definitions"


def definition_names(revision: str) -> frozenset[str]:
    """The type names the revision's schema defines."""
    return frozenset(_root(revision)[_defs_key(revision)])


@functools.cache
def _validator(revision: str, name: str) -> Validator:
    root = _root(revision)
    key = _defs_key(revision)
    if name not in root[key]:
        raise ValueError(f"MCP {revision} defines no type {name!r}")
    cls = Draft202012Validator if key == "$defs" else Draft7Validator
    schema = {"$schema": root["$schema"], key: root[key], "$ref": f"#/{key}/{name}"}
    validator: Validator = cls(schema)
    return validator


_UNIONS = frozenset(
    side + kind for side in ("Client", "Server") for kind in ("Request", "Notification", "Result")
)


@functools.cache
def _methods(revision: str) -> dict[str, str]:
    """method name -> type name (requests and notifications with a ``method`` constant)."""
    out: dict[str, str] = {}
    for name, definition in _root(revision)[_defs_key(revision)].items():
        if name in _UNIONS:
            continue  # 2026-07-28's ClientNotification is one type, not a union of several
        method = definition.get("properties", {}).get("method", {})
        if isinstance(method, dict) and "const" in method:
            out[method["const"]] = name
    return out


def method_type_name(method: str, revision: str) -> str | None:
    """The schema type of ``method`` in ``revision`` (e.g. ``"CallToolRequest"``), or ``None``."""
    return _methods(revision).get(method)


def defined_methods(revision: str) -> frozenset[str]:
    """Every request and notification method ``revision`` defines."""
    return frozenset(_methods(revision))


def union_members(revision: str, union: str) -> frozenset[str]:
    """The type names of a schema union such as ``"ClientRequest"``."""
    definition = _root(revision)[_defs_key(revision)][union]
    return frozenset(ref["$ref"].rsplit("/", 1)[1] for ref in definition["anyOf"])


def validate_definition(instance: Any, revision: str, name: str) -> None:
    """Validate ``instance`` against the type ``name`` of ``revision``'s schema."""
    _validator(revision, name).validate(instance)


@functools.cache
def _extensions(revision: str) -> tuple[dict[str, Any], ...]:
    """The extension schemas (transcriptions of their SEPs) for ``revision``."""
    folder = SCHEMA_DIR / "extensions"
    docs = (json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json")))
    return tuple(doc for doc in docs if doc.get("revision") == revision)


def extension_definition_names(revision: str) -> frozenset[str]:
    """The type names the extension schemas of ``revision`` define."""
    return frozenset(name for doc in _extensions(revision) for name in doc["$defs"])


@functools.cache
def _extension_validator(revision: str, name: str) -> Validator:
    root = _root(revision)
    defs = dict(root["$defs"])
    for doc in _extensions(revision):
        defs.update(doc["$defs"])
    if name not in defs:
        raise ValueError(f"no extension of MCP {revision} defines type {name!r}")
    validator: Validator = Draft202012Validator(
        {"$schema": root["$schema"], "$defs": defs, "$ref": f"#/$defs/{name}"}
    )
    return validator


def _extension_method(method: str, revision: str) -> str | None:
    for doc in _extensions(revision):
        found = doc["methods"].get(method)
        if found is not None:
            return str(found)
    return None


@functools.cache
def _full_types(revision: str) -> bool:
    """Whether the method types of ``revision``'s schema include the JSON-RPC envelope (they do
    from 2025-11-25 on): a fact of the schema document, so read from it, not from the date."""
    call_tool = _root(revision)[_defs_key(revision)]["CallToolRequest"]
    return "jsonrpc" in call_tool.get("properties", {})


def _side_union(hint: str | None, kind: str) -> str | None:
    if hint == "client":
        return "Client" + kind
    if hint == "server":
        return "Server" + kind
    return None


def _validate_one(message: Mapping[str, Any], revision: str, hint: str | None) -> None:
    if not isinstance(message, Mapping):
        raise ValidationError(f"a JSON-RPC message must be an object, not {type(message).__name__}")
    message = dict(message)
    full = _full_types(revision)
    if "method" in message:
        is_request = "id" in message
        validate_definition(
            message, revision, "JSONRPCRequest" if is_request else "JSONRPCNotification"
        )
        method = message["method"]
        type_name = method_type_name(method, revision)
        if type_name is None and method in EXTENSION_PARTS and is_request:
            # An extension's request: the schema defines its envelope and its params' base.
            params_type = EXTENSION_PARTS[method][0]
            validate_definition(message.get("params", {}), revision, params_type)
            return
        extension_type = None if type_name is not None else _extension_method(method, revision)
        if extension_type is not None:
            _extension_validator(revision, extension_type).validate(message)
            return
        if type_name is None:
            raise ValidationError(f"method {method!r} is not defined in MCP {revision}")
        if type_name.endswith("Request") != is_request:
            kind = "request" if type_name.endswith("Request") else "notification"
            raise ValidationError(f"{method!r} is a {kind} in MCP {revision}")
        if full:
            part: dict[str, Any] = message
        else:
            part = {"method": method}
            if "params" in message:
                part["params"] = message["params"]
        validate_definition(part, revision, type_name)
        union = _side_union(hint, "Request" if is_request else "Notification")
        if union is not None:
            validate_definition(part, revision, union)
        elif hint is not None:
            validate_definition(part, revision, hint)
    elif "result" in message:
        envelope = "JSONRPCResultResponse" if full else "JSONRPCResponse"
        validate_definition(message, revision, envelope)
        result = message["result"]
        extension_type = None
        if isinstance(result, Mapping) and result.get("resultType") == "task":
            extension_type = "CreateTaskResult"
        elif hint not in (None, "client", "server") and hint not in definition_names(revision):
            extension_type = hint
        if extension_type is not None and extension_type in extension_definition_names(revision):
            _extension_validator(revision, extension_type).validate(result)
            return
        union = _side_union(hint, "Result")
        if union is not None:
            validate_definition(message["result"], revision, union)
        elif hint is not None:
            validate_definition(message["result"], revision, hint)
    elif "error" in message:
        envelope = "JSONRPCErrorResponse" if full else "JSONRPCError"
        validate_definition(message, revision, envelope)
        if hint is not None and hint not in ("client", "server"):
            validate_definition(message, revision, hint)
    else:
        validate_definition(message, revision, "JSONRPCMessage")
        raise ValidationError("not a JSON-RPC request, notification or response")


def validate_message(
    message: Any,
    revision: str,
    direction_hint: str | None = None,
) -> None:
    """Validate one full JSON-RPC message (or a 2025-03-26 batch) against ``revision``.

    ``direction_hint``: the result / error type name to check a response's payload against
    (e.g. ``"CallToolResult"``), or ``"client"`` / ``"server"`` for the sender. See the module
    docstring. Raises :class:`jsonschema.ValidationError` when the message does not conform.
    """
    if revision not in REVISIONS:
        raise ValueError(f"unknown MCP revision {revision!r}; known: {', '.join(REVISIONS)}")
    if isinstance(message, list):
        if "JSONRPCBatchRequest" not in definition_names(revision):
            raise ValidationError(f"MCP {revision} has no JSON-RPC batches")
        if not message:
            raise ValidationError("an empty batch is not allowed")
        validate_definition(message, revision, "JSONRPCMessage")
        for element in message:
            _validate_one(element, revision, direction_hint)
        return
    _validate_one(message, revision, direction_hint)


#: The result type of every request method, for validating responses.
RESULT_TYPES = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "logging/setLevel": "EmptyResult",
    "sampling/createMessage": "CreateMessageResult",
    "elicitation/create": "ElicitResult",
    "roots/list": "ListRootsResult",
    "server/discover": "DiscoverResult",
    "subscriptions/listen": "SubscriptionsListenResult",
    "tasks/get": "GetTaskResult",
    "tasks/list": "ListTasksResult",
    "tasks/cancel": "CancelTaskResult",
    # The 2026-07-28 tasks extension (its tasks/get and tasks/cancel answers have the same
    # names, defined by the extension's schema there).
    "tasks/update": "UpdateTaskResult",
    # A task-augmented request (2025-11-25) is answered with the task, not its result.
    "tools/call+task": "CreateTaskResult",
    "sampling/createMessage+task": "CreateTaskResult",
    "elicitation/create+task": "CreateTaskResult",
}


#: The extension requests mcptrio speaks that no revision's schema defines (the skills
#: extension, SEP-2640), with what the schema does define of them: the type their params
#: extend, the types their result extends, and the definition of each item of a result member.
EXTENSION_PARTS: dict[str, tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]] = {
    "skills/list": ("PaginatedRequestParams", ("PaginatedResult", "CacheableResult"), ()),
    "skills/get": ("RequestParams", ("Result", "CacheableResult"), ()),
    "resources/directory/read": (
        "PaginatedRequestParams",
        ("PaginatedResult",),
        (("resources", "Resource"),),
    ),
}


def validate_extension_result(message: Mapping[str, Any], revision: str, method: str) -> None:
    """Validate the answer to an extension request of :data:`EXTENSION_PARTS` against what the
    schema of ``revision`` defines of it (a type it lacks, ``CacheableResult`` before
    2026-07-28, is skipped)."""
    validate_message(message, revision)
    result = message.get("result")
    if not isinstance(result, Mapping):
        return
    _, bases, items = EXTENSION_PARTS[method]
    names = definition_names(revision)
    for base in bases:
        if base in names:
            validate_definition(result, revision, base)
    for member, definition in items:
        for item in result.get(member) or []:
            validate_definition(item, revision, definition)


def result_key(request: Mapping[str, Any]) -> str:
    """The :data:`RESULT_TYPES` key of a request message: its method, with ``+task`` when it is
    task-augmented (its ``params.task`` is an object)."""
    method = str(request.get("method", ""))
    params = request.get("params")
    if isinstance(params, Mapping) and isinstance(params.get("task"), Mapping):
        return method + "+task"
    return method


def validate_exchange(
    client_to_server: list[Any], server_to_client: list[Any], revision: str
) -> int:
    """Validate every message of a recorded session both ways; returns how many were checked.

    Requests and notifications are checked with their sender's side; responses against the
    result type of the request they answer.
    """
    checked = 0
    for sent, peer_sent, sender in (
        (client_to_server, server_to_client, "client"),
        (server_to_client, client_to_server, "server"),
    ):
        asked = {m["id"]: result_key(m) for m in peer_sent if "method" in m and "id" in m}
        for message in sent:
            if "method" in message:
                validate_message(message, revision, sender)
            elif "result" in message and asked[message["id"]] in EXTENSION_PARTS:
                validate_extension_result(message, revision, asked[message["id"]])
            elif "result" in message:
                validate_message(message, revision, RESULT_TYPES.get(asked[message["id"]]))
            else:
                validate_message(message, revision)
            checked += 1
    return checked
