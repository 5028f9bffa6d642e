"""The stateless era inside a :class:`~mcptrio.protocol.connection.Connection`: per request.

A request whose ``_meta`` names a stateless-era revision (2026-07-28) stands alone: no
``initialize`` came before it, and whatever the connection negotiated (or not) does not apply to
it. It is read, checked, answered and fitted at the revision it names, with the client's
capabilities from its own ``_meta`` (:mod:`~mcptrio.protocol.request_meta`). This module holds
those per-request rules, so that the connection only routes to them:

- reading: the method must exist in the request's revision (-32601 otherwise: ``ping``,
  ``initialize``, ``logging/setLevel``, ``resources/subscribe`` ... are gone) and be gated open
  by the server's capabilities (-32601); an extension's method (``tasks/get`` ... of
  :mod:`~mcptrio.protocol.tasks_extension`) needs the server to declare the extension (-32601)
  and the request's ``_meta`` to declare it too (-32021, naming it);
- ``server/discover`` is answered here, from the server's own description;
- answering: the result is fitted to the request's revision and gets ``resultType`` and the
  server's identity in ``_meta`` (``resultType`` is ``"task"`` for a task created in its stead);
  an error keeps its code, except that a missing resource is
  -32602 in this era (it was -32002).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from . import codec
from . import tasks_extension as ext
from .base import Request, Result
from .declared import extension_declared
from .errors import (
    InvalidParams,
    McpError,
    MethodNotFound,
    MissingRequiredClientCapability,
    ResourceNotFound,
)
from .extensions import declared_per_request
from .fitting import Step, incoming_step, outgoing_step
from .gating import check_offered
from .methods import EXTENSION_METHODS, METHODS, MethodSpec
from .request_meta import (
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    RequestMeta,
    read_request_meta,
    request_meta_at,
    request_meta_of,
)
from .revisions import Revision, stateless_versions
from .skills_extension import GetSkillResult
from .types import (
    INPUT_REQUIRED,
    RESULT_COMPLETE,
    CacheablePaginatedResult,
    CacheScope,
    CallToolResult,
    DiscoverRequest,
    DiscoverResult,
    GetPromptResult,
    InputRequiredResult,
    ReadResourceResult,
    ServerCapabilities,
)

__all__ = [
    "StatelessReader",
    "StatelessRequest",
    "answer_error",
    "answer_result",
    "decode_stateless_result",
    "discover_result",
    "is_discover",
]


class StatelessRequest(msgspec.Struct, frozen=True):
    """A stateless-era request, read and checked: its params and its ``_meta``."""

    spec: MethodSpec
    request: Request[Any]
    meta: RequestMeta


#: What :class:`StatelessReader` settled for a method at a revision: the server capabilities it
#: was settled for, the revision, and the step that reads the request there.
_Ready = tuple[ServerCapabilities, Revision, Step | None]
_NONE_READY: dict[str, _Ready] = {}


class StatelessReader:
    """Reads the requests that stand alone on one server connection (:meth:`read`).

    Whether a method may be handled at a revision (it exists there, and the server's
    capabilities open its gate) is settled once per (method, revision) and kept, with the step
    that reads the request at that revision: most requests of a server are a few methods at one
    revision.
    """

    __slots__ = ("_ready", "_supported")

    def __init__(self, supported: tuple[str, ...]) -> None:
        self._supported = supported
        # version -> method -> (the capabilities it was settled for, the revision, its step).
        # Bounded: only versions this side speaks and methods MCP defines get in.
        self._ready: dict[str, dict[str, _Ready]] = {}

    def read(
        self, method: str, raw: msgspec.Raw | Any, capabilities: ServerCapabilities
    ) -> StatelessRequest | None:
        """Read a request as a stateless-era one; ``None`` if its ``_meta`` names no revision.

        ``capabilities`` are the server's. Raises the error its answer should carry.
        """
        # Every stateless-era revision has extensions: there an extension's method replaces a
        # core one of the same name (tasks/get), and _settle checks the revision has it.
        spec = EXTENSION_METHODS.get(method) or METHODS.get(method)
        if spec is None or spec.kind != "request" or spec.sender == "server" or raw is UNSET:
            return None
        try:
            request: Request[Any] = codec.decode_body(raw, spec.params)  # type: ignore[arg-type]
        except InvalidParams:
            # Params of another revision's method (``initialize`` ...) say nothing: what
            # matters first is whether the method exists in the revision the _meta names.
            meta = read_request_meta(
                codec.decode_body(raw, _MetaOnly).meta or None, self._supported
            )
            if meta is not None and meta.revision.version not in spec.revisions:
                raise _not_found(method, meta) from None
            raise
        members = request.meta
        ready = None
        if type(members) is dict:
            version = members.get(PROTOCOL_VERSION_KEY)
            if type(version) is str:
                ready = self._ready.get(version, _NONE_READY).get(method)
        if ready is not None and ready[0] is capabilities:
            assert isinstance(members, dict)
            meta = request_meta_at(ready[1], members)
        else:
            found = read_request_meta(request_meta_of(request), self._supported)
            if found is None:
                return None
            meta = found
            ready = self._settle(spec, meta, capabilities)
        if (
            spec.extension is not None
            and declared_per_request(spec.extension)
            and not extension_declared(meta.client_capabilities, spec.extension)
        ):
            raise MissingRequiredClientCapability(
                f"{method} needs the {spec.extension} extension, which the request's"
                " clientCapabilities do not declare",
                {"requiredCapabilities": {"extensions": {spec.extension: {}}}},
            )
        step = ready[2]
        # A step leaves a message of a type in ``unchanged`` as it is (that set only grows).
        if step is not None and type(request) not in step.unchanged:
            request = step(request)
        return StatelessRequest(spec, request, meta)

    def _settle(
        self, spec: MethodSpec, meta: RequestMeta, capabilities: ServerCapabilities
    ) -> _Ready:
        """Check that ``spec``'s method may be handled at ``meta``'s revision; keep the answer."""
        revision = meta.revision
        method = spec.method
        if revision.version not in spec.revisions:
            raise _not_found(method, meta)
        check_offered(spec, "server", revision.version, capabilities)
        ready = (capabilities, revision, incoming_step(revision))
        self._ready.setdefault(revision.version, {})[method] = ready
        return ready


class _MetaOnly(msgspec.Struct):
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


def _not_found(method: str, meta: RequestMeta) -> MethodNotFound:
    return MethodNotFound(
        f"Method not found in protocol revision {meta.revision.version}: {method}"
    )


def discover_result(
    supported: tuple[str, ...],
    capabilities: ServerCapabilities,
    instructions: str | None,
    cache_hints: tuple[int, CacheScope] | None = None,
) -> DiscoverResult:
    """The answer to ``server/discover`` (before :func:`answer_result` finishes it)."""
    return DiscoverResult(
        supported_versions=list(stateless_versions(supported)),
        capabilities=capabilities,
        instructions=instructions,
        ttl_ms=None if cache_hints is None else cache_hints[0],
        cache_scope=None if cache_hints is None else cache_hints[1],
    )


def is_discover(request: Request[Any]) -> bool:
    """Whether ``request`` is ``server/discover``."""
    return isinstance(request, DiscoverRequest)


def answer_result(result: Result, meta: RequestMeta, server_info: dict[str, Any]) -> Result:
    """``result`` as the request's revision defines it, with ``resultType`` and ``serverInfo``
    (``server_info``: the server's :class:`Implementation` in wire form, built once).

    Raises :class:`~mcptrio.protocol.errors.CapabilityNotNegotiated` for what the revision
    cannot carry.
    """
    step = outgoing_step(meta.revision)
    # A step leaves a message of a type in ``unchanged`` as it is (that set only grows).
    if step is not None and type(result) not in step.unchanged:
        result = step(result)
    given = result.meta
    wire_meta = (
        {**given, SERVER_INFO_KEY: server_info}
        if isinstance(given, dict)
        else {SERVER_INFO_KEY: server_info}
    )
    cls = type(result)
    shape = _answer_shapes.get(cls)
    if shape is None:
        shape = _answer_shapes[cls] = _answer_shape(cls)
    result_type, cacheable = shape
    if not cacheable:
        return msgspec.structs.replace(result, meta=wire_meta, result_type=result_type)
    assert isinstance(result, _CACHEABLE)
    # The hints are required on these results; unless the server said otherwise, nothing may be
    # reused (ttlMs 0) and nothing shared across authorization contexts.
    return msgspec.structs.replace(
        result,
        meta=wire_meta,
        result_type=result_type,
        ttl_ms=0 if result.ttl_ms is None else result.ttl_ms,
        cache_scope="private" if result.cache_scope is None else result.cache_scope,
    )


_CACHEABLE = (CacheablePaginatedResult, ReadResourceResult, DiscoverResult, GetSkillResult)


def _answer_shape(cls: type[Result]) -> tuple[str, bool]:
    """What :func:`answer_result` adds to a result of class ``cls``: its ``resultType``, and
    whether it carries the cache hints."""
    if issubclass(cls, InputRequiredResult):
        result_type: str = INPUT_REQUIRED
    elif issubclass(cls, ext.CreateTaskResult):
        result_type = ext.RESULT_TASK
    else:
        result_type = RESULT_COMPLETE
    return result_type, issubclass(cls, _CACHEABLE)


# Result class -> its _answer_shape. Invariant: a class's bases never change, so what
# issubclass says of it, and so its shape, is settled the first time it is answered. Bounded by
# the result classes a server answers with.
_answer_shapes: dict[type[Result], tuple[str, bool]] = {}


def answer_error(error: McpError) -> McpError:
    """``error`` as the stateless era numbers it."""
    if isinstance(error, ResourceNotFound):
        return InvalidParams(error.message, error.data)
    return error


#: The results a stateless-era request may get an input-required result instead of.
_MAY_NEED_INPUT = frozenset({CallToolResult, GetPromptResult, ReadResourceResult})


#: The results a task may be created instead of (tasks extension: ``tools/call`` only).
_MAY_BE_TASK = frozenset({CallToolResult})


def decode_stateless_result(raw: msgspec.Raw, result_type: type[Result]) -> Result:
    """The result of a stateless-era request: ``result_type``, or an input-required result, or
    (for ``tools/call``) a :class:`~mcptrio.protocol.tasks_extension.CreateTaskResult`."""
    if result_type in _MAY_NEED_INPUT:
        data = bytes(raw)
        # The bytes mention it: only resultType says whether it is one.
        if b'"input_required"' in data:
            needs_input = codec.decode_body(raw, InputRequiredResult)
            if needs_input.result_type == INPUT_REQUIRED:
                return needs_input
        if result_type in _MAY_BE_TASK and b'"task"' in data:
            created = codec.decode_body(raw, _ResultTypeOnly)
            if created.result_type == ext.RESULT_TASK:
                return codec.decode_body(raw, ext.CreateTaskResult)
    return codec.decode_body(raw, result_type)


def convert_stateless_result(value: Any, result_type: type[Result]) -> Result:
    """:func:`decode_stateless_result` for a result handed over unencoded (its built-in values,
    :class:`~mcptrio.protocol.codec.CarriedResult`): ``resultType`` says which it is."""
    if result_type in _MAY_NEED_INPUT and isinstance(value, dict):
        kind = value.get("resultType")
        if kind == INPUT_REQUIRED:
            return codec.convert_result(value, InputRequiredResult)
        if kind == ext.RESULT_TASK and result_type in _MAY_BE_TASK:
            return codec.convert_result(value, ext.CreateTaskResult)
    return codec.convert_result(value, result_type)


class _ResultTypeOnly(Result):
    pass
