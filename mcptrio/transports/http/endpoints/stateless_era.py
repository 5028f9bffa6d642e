"""Streamable HTTP in the stateless era (2026-07-28): the checks a POST passes first.

A POST whose request ``_meta`` names a stateless-era revision, or with no ``Mcp-Session-Id``
whose ``MCP-Protocol-Version`` header names one, is a stateless-era exchange: no session is
minted or echoed (one sent is ignored), and the headers are checked against the body before
anything runs (CHECKLIST 7.6, in this order):

==============================================================  ========================
a batch, or a JSON-RPC response from the client                 400, -32600
only notifications (``notifications/cancelled``)                202, no body
``MCP-Protocol-Version`` missing, or not the ``_meta`` one       400, -32020
a revision this server does not speak                           400, -32022 with data
a required ``_meta`` member missing or malformed                400, -32602
``Mcp-Method`` missing or not the method                        400, -32020
a method the revision lacks, or one MCP does not define         404, -32601
``Mcp-Name`` missing or not the name / URI / task id            400, -32020
an ``Mcp-Param-*`` header missing or not the argument           400, -32020
a handler needing a client capability the request lacks         400, -32021
==============================================================  ========================

Header values are compared after the base64 sentinel is decoded, integers by value
(:mod:`mcptrio.protocol.http_headers`). GET and DELETE carrying a stateless-era
``MCP-Protocol-Version`` get 405: that era has neither.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from ....protocol import http_headers as hh
from ....protocol.base import RequestId
from ....protocol.codec import Envelope
from ....protocol.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    HeaderMismatch,
    McpError,
    MethodNotFound,
)
from ....protocol.methods import spec_at
from ....protocol.request_meta import (
    CLIENT_CAPABILITIES_KEY,
    PROTOCOL_VERSION_KEY,
    read_request_meta,
)
from ....protocol.revisions import revision_of, stateless_versions
from ....runtime.session import Session
from ..engine.exchange import Headers, header
from .http_session import HttpSession
from .live_stream import StreamWriter

__all__ = [
    "StatelessChecks",
    "StatelessHead",
    "StatelessHeadParams",
    "answer_status",
    "cancel_on_disconnect",
    "cancel_when_gone",
    "no_header_params",
    "read_stateless_head",
    "stateless_era_header",
]

#: The HTTP status of an error answer in this era (others are 200).
_STATUS_OF_CODE = {
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}


# Optional whitespace around a field value is not part of it (RFC 9110 section 5.5).
_OWS = b" \t"


class _HeadMeta(msgspec.Struct):
    """The members of a request's ``_meta`` the checks read (the connection reads it whole)."""

    protocol_version: Any = msgspec.field(default=UNSET, name=PROTOCOL_VERSION_KEY)
    client_capabilities: Any = msgspec.field(default=UNSET, name=CLIENT_CAPABILITIES_KEY)


class StatelessHeadParams(msgspec.Struct):
    """The members of a request's params that its headers repeat or the checks read."""

    name: Any = UNSET
    uri: Any = UNSET
    task_id: Any = msgspec.field(default=UNSET, name="taskId")
    # Left raw: only a tool with annotated arguments (few) has them read here.
    arguments: msgspec.Raw | UnsetType = UNSET
    meta: _HeadMeta | UnsetType = msgspec.field(default=UNSET, name="_meta")


class StatelessHead(msgspec.Struct):
    """What the checks read from a stateless-era POST's lone message."""

    method: str
    params: StatelessHeadParams


_params_decoder = msgspec.json.Decoder(StatelessHeadParams)
_NO_PARAMS = StatelessHeadParams()


def stateless_era_header(headers: Headers, stateless: tuple[str, ...]) -> bool:
    """Whether ``MCP-Protocol-Version`` names one of the ``stateless`` revisions."""
    version = header(headers, hh.PROTOCOL_VERSION_HEADER)
    return version is not None and version.decode("latin-1") in stateless


def read_stateless_head(
    message: Envelope | None, headers: Headers, stateless: tuple[str, ...]
) -> StatelessHead | None:
    """The POST's lone message when the exchange is of the stateless era, else ``None``.

    ``message`` is the POST's one message as the endpoint first decoded it (``None``: a batch,
    never of this era); only its params are decoded again, and only the members read here.
    """
    if message is None or message.method is UNSET:
        return None
    method = message.method
    raw = message.params
    if raw is UNSET:
        params = _NO_PARAMS
    else:
        try:
            params = _params_decoder.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
    meta = params.meta
    in_meta = meta is not UNSET and meta.protocol_version is not UNSET
    if in_meta or stateless_era_header(headers, stateless):
        return StatelessHead(method, params)
    return None


class StatelessChecks:
    """The checks of a stateless-era POST, for a server speaking ``supported``.

    ``tool_header_params`` gives the annotated arguments of a tool (``Mcp-Param-*`` headers).
    """

    __slots__ = ("_agreed", "_name_members", "_stateless", "_supported", "_tool_header_params")

    def __init__(
        self,
        supported: tuple[str, ...],
        tool_header_params: Callable[[str], Mapping[hh.PropertyPath, str] | None],
    ) -> None:
        self._supported = supported
        self._stateless = stateless_versions(supported)
        self._tool_header_params = tool_header_params
        # (method, version) -> the params member Mcp-Name repeats (None: no Mcp-Name).
        self._name_members: dict[tuple[str, str], str | None] = {}
        # Routing headers found to carry what the body says, and what they carried:
        # (MCP-Protocol-Version, Mcp-Method, Mcp-Name) -> (revision, method, name attribute,
        # name).
        self._agreed: dict[_Routing, _Carried] = {}

    def check(self, head: StatelessHead, fields: Mapping[bytes, bytes]) -> None:
        """Check a stateless-era request's headers against its body (the module's table).

        ``fields`` maps each header name to its first value (what :func:`header` finds in the
        list): the endpoint reads a POST's headers into such a dict once, so each check here
        is a lookup, not a scan of the list. A first value is the only one: the endpoint
        refuses a routing header sent twice before these checks (``repeated_routing_header``).

        Raises the error to answer with (:func:`status_of` gives its HTTP status).
        """
        params = head.params
        meta = params.meta
        version = fields.get(hh.PROTOCOL_VERSION_HEADER)
        if version is None:
            raise HeaderMismatch("Missing MCP-Protocol-Version header")
        named_version = None if meta is UNSET else meta.protocol_version
        if named_version is None or named_version is UNSET:
            # The header says stateless era but the body names no revision: the _meta is
            # missing.
            read_request_meta({PROTOCOL_VERSION_KEY: version.decode("latin-1")}, self._supported)
            raise McpError(f"Missing required _meta[{PROTOCOL_VERSION_KEY!r}]", code=INVALID_PARAMS)
        assert not isinstance(meta, UnsetType)
        routing = (version, fields.get(hh.METHOD_HEADER), fields.get(hh.NAME_HEADER))
        carried = self._agreed.get(routing)
        # Invariant: whether a header value carries a body's value depends on the two alone,
        # and whether a method exists at a revision never changes. So headers that carried a
        # body's revision, method and name carry them again in any request with the same header
        # bytes and the same values in its body, and only the checks that read something else
        # (the capabilities, the tool's Mcp-Param-* headers) run again. A value compares equal
        # only to a string equal to it (every carried value is one).
        if (
            carried is None
            or carried[0] != named_version
            or carried[1] != head.method
            or (carried[2] is not None and carried[3] != getattr(params, carried[2]))
        ):
            name = self._check_routing(head, routing)
        elif type(meta.client_capabilities) is not dict:
            raise _missing_capabilities()
        else:
            name = carried[3]
        if name is not None and head.method == "tools/call":
            annotated = self._tool_header_params(name)
            if annotated:
                _check_params(fields, params, annotated)

    def _check_routing(self, head: StatelessHead, routing: _Routing) -> str | None:
        """:meth:`check` of a request whose routing headers were not found to agree with a
        body like its own, up to the ``Mcp-Param-*`` headers; remembers them when they agree.
        Returns the name ``Mcp-Name`` carried (``None``: none was checked)."""
        version, raw_method, raw_name = routing
        method = head.method
        params = head.params
        meta = params.meta
        assert not isinstance(meta, UnsetType)
        named_version = meta.protocol_version
        if not _carries(version, named_version):
            raise HeaderMismatch("MCP-Protocol-Version does not match the request's _meta")
        # The members the spec requires, checked here for their status (400); the connection
        # reads the whole _meta (a malformed member is -32602 from there).
        if named_version not in self._stateless:
            # Not a stateless-era revision this server speaks: only the version decides the
            # error (-32602 for a non-string, else -32022).
            read_request_meta({PROTOCOL_VERSION_KEY: named_version}, self._supported)
        if type(meta.client_capabilities) is not dict:
            raise _missing_capabilities()
        if raw_method is None:
            raise HeaderMismatch("Missing Mcp-Method header")
        if not _carries(raw_method, method):
            raise HeaderMismatch("Mcp-Method header does not match the request body")
        member = self._name_members.get((method, named_version), _UNKNOWN)
        if member is _UNKNOWN:
            member = self._settle(method, named_version)
        if member is None:
            self._agree(routing, (named_version, method, None, None))
            return None
        attribute = _ATTRIBUTES[member]
        name = getattr(params, attribute)
        if type(name) is not str:
            return None
        if raw_name is None:
            raise HeaderMismatch("Missing Mcp-Name header")
        if not _carries(raw_name, name):
            raise HeaderMismatch("Mcp-Name header does not match the request body")
        self._agree(routing, (named_version, method, attribute, name))
        return name

    def _agree(self, routing: _Routing, carried: _Carried) -> None:
        # Bounded: a client sending ever new names only makes the table start over.
        if len(self._agreed) >= _MAX_AGREED:
            self._agreed.clear()
        self._agreed[routing] = carried

    def _settle(self, method: str, version: str) -> str | None:
        """Whether ``method`` exists at ``version`` (:class:`MethodNotFound` if not), and the
        params member its ``Mcp-Name`` repeats; kept per pair (``version`` is one this server
        speaks, and only methods MCP defines are kept, so the table stays small)."""
        spec = spec_at(method, version)
        if spec is None or version not in spec.revisions:
            raise MethodNotFound(f"Method not found: {method}")
        member = self._name_members[method, version] = hh.name_member(method)
        return member


#: A stateless-era POST's routing headers: MCP-Protocol-Version, Mcp-Method, Mcp-Name.
_Routing = tuple[bytes, bytes | None, bytes | None]
#: What they were found to carry: the revision, the method, and the attribute of
#: :class:`StatelessHeadParams` Mcp-Name repeats with its value (``None``, ``None``: the method
#: has no Mcp-Name).
_Carried = tuple[str, str, str | None, str | None]
_MAX_AGREED = 1024
#: The attribute of :class:`StatelessHeadParams` for each params member Mcp-Name repeats.
_ATTRIBUTES = {"name": "name", "uri": "uri", "taskId": "task_id"}


def _missing_capabilities() -> McpError:
    return McpError(f"Missing required _meta[{CLIENT_CAPABILITIES_KEY!r}]", code=INVALID_PARAMS)


def _carries(raw: bytes, value: Any) -> bool:
    """Whether header value ``raw`` carries ``value``; :class:`HeaderMismatch` if malformed."""
    # The common case, a value sent as it is, needs no decoding: bytes equal to its plain form
    # decode to it. (Both front ends' parsers strip the optional whitespace already; the
    # strip below is for the others.)
    if type(value) is str:
        plain = _plain_forms.get(value, _UNKNOWN)
        if plain is _UNKNOWN:
            plain = _plain_form(value)
        if raw == plain:
            return True
    raw = raw.strip(_OWS)
    if type(value) is str and raw == _plain_forms.get(value):
        return True
    return bool(hh.decode_value(raw) == value)


def _plain_form(value: str) -> bytes | None:
    """The bytes of ``value`` sent as it is, if a header can carry it so: ASCII with no control
    character, no whitespace at either end (a field value's is not part of it), not in the
    base64 sentinel's form (``None``: only encoded)."""
    plain = (
        value.encode("ascii")
        if value.isascii()
        and value.isprintable()
        and not value.startswith("=?")
        and value.strip(" \t") == value
        else None
    )
    # The values a server is sent are few (its revisions, methods, tools' names), so their
    # plain forms are kept; a client sending ever new ones only makes the table start over.
    if len(_plain_forms) >= _MAX_PLAIN_FORMS:
        _plain_forms.clear()
    _plain_forms[value] = plain
    return plain


_plain_forms: dict[str, bytes | None] = {}
_MAX_PLAIN_FORMS = 1024
_UNKNOWN: Any = object()


def _check_params(
    fields: Mapping[bytes, bytes],
    params: StatelessHeadParams,
    annotated: Mapping[hh.PropertyPath, str] | None,
) -> None:
    if not annotated:
        return
    raw_arguments = params.arguments
    arguments = None if raw_arguments is UNSET else msgspec.json.decode(raw_arguments)
    if not isinstance(arguments, dict):
        arguments = {}
    for path, header_name in annotated.items():
        label = f"Mcp-Param-{header_name}"
        raw = fields.get(hh.PARAM_HEADER_PREFIX + header_name.lower().encode("ascii"))
        value = hh.value_at(arguments, path)
        if value is None:
            if raw is not None:
                raise HeaderMismatch(f"{label} header given for an absent argument")
            continue
        if raw is None:
            raise HeaderMismatch(f"Missing {label} header")
        if not hh.same_param(hh.decode_value(raw.strip(_OWS)), value):
            raise HeaderMismatch(f"{label} header does not match the argument")


def status_of(code: int) -> int:
    """The HTTP status of an error answer with ``code`` in this era."""
    return _STATUS_OF_CODE.get(code, 200)


class _ErrorCode(msgspec.Struct):
    code: int


class _ErrorAnswer(msgspec.Struct):
    error: _ErrorCode | UnsetType = UNSET


_answer_decoder = msgspec.json.Decoder(_ErrorAnswer)


def answer_status(answer: bytes) -> int:
    """The HTTP status of a JSON answer in this era: 200, or the one its error code calls for."""
    # The result is never searched: for a large answer a search of the whole body would cost
    # more than anything else the server does for it. Inside a JSON string a quote is escaped,
    # so ``"result":`` in the bytes is a key; with no ``"error"`` before it, it is the
    # envelope's, and the rest of the answer is its result.
    result_at = answer.find(b'"result":')
    if result_at >= 0:
        if answer.find(b'"error"', 0, result_at) < 0:
            return 200
    elif b'"error"' not in answer:
        return 200
    try:
        decoded = _answer_decoder.decode(answer)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return 200
    return status_of(decoded.error.code) if isinstance(decoded.error, _ErrorCode) else 200


def is_stateless_revision(version: str) -> bool:
    """Whether ``version`` is a stateless-era revision mcptrio knows."""
    try:
        return revision_of(version).era == "stateless"
    except ValueError:
        return False


async def cancel_when_gone(
    writer: StreamWriter, transport: HttpSession, session: Session, rid: RequestId
) -> None:
    """Closing the response stream is cancellation in this era: once ``writer`` stops (the
    client went away) with request ``rid`` still running, cancel it in ``session``."""
    await writer.done.wait()
    if transport.answer_owed(rid):
        session.cancel_incoming(rid, "The client closed the response stream")


def cancel_on_disconnect(transport: HttpSession, session: Session, rid: RequestId) -> None:
    """The front end saw the client close the response stream: cancel ``rid`` if it still
    runs (a callback, not a task: a request that ends quickly, nearly all of them, costs
    nothing)."""
    if transport.answer_owed(rid):
        session.cancel_incoming(rid, "The client closed the response stream")


def no_header_params(name: str) -> Mapping[hh.PropertyPath, str] | None:
    """The tool lookup of a server that has none: no tool has annotated arguments."""
    return None
