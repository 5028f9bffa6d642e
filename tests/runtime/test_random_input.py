"""Property tests: the codec round-trips, and no input makes the server side raise or stop.

The session tests are synchronous functions that call ``trio.run`` once per example:
pytest-trio's ``trio_mode`` only takes over ``async def`` tests, and hypothesis needs to call
the test body itself, many times. Example counts are kept small enough for this whole file to
run in a few seconds.
"""

from __future__ import annotations

import json
from typing import Any, get_args

import msgspec
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec import UNSET

import mcptrio
from mcptrio.protocol import codec
from mcptrio.protocol.connection import Connection
from mcptrio.protocol.errors import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    URL_ELICITATION_REQUIRED,
    HeaderMismatch,
    InternalError,
    InvalidParams,
    InvalidRequest,
    McpError,
    MethodNotFound,
    MissingRequiredClientCapability,
    ParseError,
    ProtocolError,
    ResourceNotFound,
    UnsupportedProtocolVersion,
    UrlElicitationRequired,
)
from mcptrio.protocol.events import Event, Reply
from mcptrio.runtime.transport import Outgoing
from mcptrio.transports.memory import MemoryTransport, memory_transport_pair

from schema_validation import HANDSHAKE_REVISIONS

EVENT_TYPES = get_args(Event)
STANDARD_ERRORS: dict[int, type[McpError]] = {
    PARSE_ERROR: ParseError,
    INVALID_REQUEST: InvalidRequest,
    METHOD_NOT_FOUND: MethodNotFound,
    INVALID_PARAMS: InvalidParams,
    INTERNAL_ERROR: InternalError,
    RESOURCE_NOT_FOUND: ResourceNotFound,
    URL_ELICITATION_REQUIRED: UrlElicitationRequired,
    HEADER_MISMATCH: HeaderMismatch,
    MISSING_REQUIRED_CLIENT_CAPABILITY: MissingRequiredClientCapability,
    UNSUPPORTED_PROTOCOL_VERSION: UnsupportedProtocolVersion,
}
# What the protocol layer itself answers with (handlers may add others, such as -32002).
PROTOCOL_CODES = {PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS}
# An id the generated input never uses, for the ping that checks a session is still there.
BARRIER_ID = "fuzz-barrier-\x00"
SLOW_ID = "fuzz-slow-\x00"

QUICK = settings(max_examples=200, deadline=None)
SESSIONS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- strategies ----------------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)
request_ids = st.integers() | st.text()
methods = st.text(min_size=1) | st.sampled_from(
    ["tools/call", "tools/list", "ping", "initialize", "notifications/cancelled"]
)
error_codes = st.sampled_from(sorted(STANDARD_ERRORS)) | st.integers(-(2**40), 2**40)


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: ``1`` and ``1.0`` differ, ``True`` and ``1`` differ."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def initialize_message(rid: Any, revision: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {
            "protocolVersion": revision,
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "0"},
        },
    }


# Valid messages of every kind a server may receive, to be mutated.
VALID_MESSAGES: list[Any] = [
    initialize_message(1, "2025-06-18"),
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "c"}},
    {
        "jsonrpc": "2.0",
        "id": "four",
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {"progressToken": 4}},
    },
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "echo"}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "four"}},
    {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 1, "progress": 0.5, "total": 1},
    },
    {"jsonrpc": "2.0", "id": 6, "result": {}},
    {"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "no", "data": [1]}},
    {"jsonrpc": "2.0", "id": 8, "method": "resources/list"},
    {"jsonrpc": "2.0", "id": 9, "method": "tasks/get", "params": {"taskId": "t"}},
    [{"jsonrpc": "2.0", "id": 10, "method": "ping"}, {"jsonrpc": "2.0", "method": "x"}],
]


@st.composite
def mutated_messages(draw: st.DrawFn) -> Any:
    """A valid message with a few members dropped, replaced or added."""
    message = json.loads(json.dumps(draw(st.sampled_from(VALID_MESSAGES))))
    for _ in range(draw(st.integers(1, 3))):
        target = message
        if isinstance(target, list):
            if not target:
                break
            target = target[draw(st.integers(0, len(target) - 1))]
        if (
            isinstance(target, dict)
            and isinstance(target.get("params"), dict)
            and draw(st.booleans())
        ):
            target = target["params"]
        if not isinstance(target, dict):
            break
        keys = sorted(target)
        action = draw(st.sampled_from(["drop", "replace", "add"]))
        if action == "drop" and keys:
            del target[draw(st.sampled_from(keys))]
        elif action == "replace" and keys:
            target[draw(st.sampled_from(keys))] = draw(json_values)
        else:
            key = draw(st.sampled_from(["id", "method", "params", "result", "error", "jsonrpc"]))
            target[draw(st.just(key) | st.text(max_size=6))] = draw(json_values)
    return message


@st.composite
def mutated_bytes(draw: st.DrawFn) -> bytes:
    """The encoding of a valid message with a few bytes flipped, inserted or cut."""
    data = bytearray(json.dumps(draw(st.sampled_from(VALID_MESSAGES))).encode())
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["flip", "insert", "cut"]))
        if action == "insert" or position == len(data):
            data[position:position] = draw(st.binary(min_size=1, max_size=4))
        elif action == "flip":
            data[position] = draw(st.integers(0, 255))
        else:
            del data[position : position + draw(st.integers(1, 8))]
    return bytes(data)


def as_frame(value: Any) -> bytes:
    return value if isinstance(value, bytes) else json.dumps(value).encode()


frames = (
    st.binary(max_size=200)
    | json_values.map(as_frame)
    | mutated_messages().map(as_frame)
    | mutated_bytes()
)

# --- the codec -----------------------------------------------------------------------------------


@QUICK
@given(request_ids, methods, json_objects)
def test_codec_round_trips_requests(rid: int | str, method: str, params: dict[str, Any]) -> None:
    envelope = codec.decode_frame(codec.encode_request(rid, method, params))
    assert isinstance(envelope, codec.Envelope)
    assert envelope.jsonrpc == "2.0"
    assert envelope.id == rid
    assert type(envelope.id) is type(rid)
    assert envelope.method == method
    assert isinstance(envelope.params, msgspec.Raw)
    assert json_equal(json.loads(bytes(envelope.params)), params)
    assert envelope.result is UNSET
    assert envelope.error is UNSET


@QUICK
@given(methods, json_objects)
def test_codec_round_trips_notifications(method: str, params: dict[str, Any]) -> None:
    envelope = codec.decode_frame(codec.encode_notification(method, params))
    assert isinstance(envelope, codec.Envelope)
    assert envelope.id is UNSET
    assert envelope.method == method
    assert isinstance(envelope.params, msgspec.Raw)
    assert json_equal(json.loads(bytes(envelope.params)), params)


@QUICK
@given(request_ids, json_objects)
def test_codec_round_trips_results(rid: int | str, result: dict[str, Any]) -> None:
    envelope = codec.decode_frame(codec.encode_result(rid, result))
    assert isinstance(envelope, codec.Envelope)
    assert envelope.id == rid
    assert type(envelope.id) is type(rid)
    assert envelope.method is UNSET
    assert isinstance(envelope.result, msgspec.Raw)
    assert json_equal(json.loads(bytes(envelope.result)), result)


@QUICK
@given(request_ids | st.none() | st.just(UNSET), error_codes, st.text(), json_values)
def test_codec_round_trips_errors_as_the_subclass_owning_the_code(
    rid: Any, code: int, message: str, data: Any
) -> None:
    sent = McpError.from_wire(code, message, data)
    assert type(sent) is STANDARD_ERRORS.get(code, ProtocolError)
    frame = codec.encode_error(rid, sent)
    if rid is UNSET:
        assert "id" not in json.loads(frame)
    envelope = codec.decode_frame(frame)
    assert isinstance(envelope, codec.Envelope)
    assert envelope.id == rid
    assert isinstance(envelope.error, msgspec.Raw)
    received = codec.decode_error(envelope.error)
    assert type(received) is type(sent)
    assert received.code == code
    assert received.message == message
    assert json_equal(received.data, data)


@QUICK
@given(st.lists(st.tuples(request_ids, json_objects), min_size=1, max_size=5))
def test_codec_round_trips_batches(items: list[tuple[int | str, dict[str, Any]]]) -> None:
    decoded = codec.decode_frame(
        codec.encode_batch([codec.encode_result(rid, result) for rid, result in items])
    )
    assert isinstance(decoded, list)
    assert len(decoded) == len(items)
    for raw, (rid, result) in zip(decoded, items, strict=True):
        envelope = codec.decode_item(raw)
        assert envelope.id == rid
        assert isinstance(envelope.result, msgspec.Raw)
        assert json_equal(json.loads(bytes(envelope.result)), result)


# --- the sans-IO connection ----------------------------------------------------------------------


def make_server(release: trio.Event | None = None) -> mcptrio.Server:
    server = mcptrio.Server("fuzz")

    @server.tool()
    async def slow() -> str:
        if release is not None:
            await release.wait()
        return "slow done"

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def echo(text: str = "") -> str:
        return text

    return server


SERVER = make_server()


def check_events(connection: Connection, events: list[Any]) -> None:
    assert isinstance(events, list)
    for event in events:
        assert isinstance(event, EVENT_TYPES), event
        if isinstance(event, Reply):
            answer = json.loads(event.data)
            for item in answer if isinstance(answer, list) else [answer]:
                assert item["jsonrpc"] == "2.0"
                if "error" in item:
                    assert item["error"]["code"] in PROTOCOL_CODES, item
    # The connection still works: ping is answered, with nothing else.
    [pong] = connection.receive(
        json.dumps({"jsonrpc": "2.0", "id": BARRIER_ID, "method": "ping"}).encode()
    )
    assert isinstance(pong, Reply)
    assert json.loads(pong.data) == {"jsonrpc": "2.0", "id": BARRIER_ID, "result": {}}


@QUICK
@given(st.sampled_from((None, *HANDSHAKE_REVISIONS)), st.lists(frames, min_size=1, max_size=4))
def test_server_connection_turns_any_input_into_events(
    revision: str | None, inputs: list[bytes]
) -> None:
    connection = SERVER.connection()
    if revision is not None:
        connection.receive(json.dumps(initialize_message(0, revision)).encode())
    for frame in inputs:
        check_events(connection, connection.receive(frame))
    if revision is not None:
        # A handshake cannot be repeated or undone by anything received later.
        assert connection.revision == revision


@QUICK
@given(st.integers(1, 10_000_000))
def test_server_connection_answers_any_oversized_frame(limit: int) -> None:
    connection = SERVER.connection()
    [reply] = connection.oversized(limit)
    assert isinstance(reply, Reply)
    assert json.loads(reply.data)["error"]["code"] == INVALID_REQUEST


# --- a live server session -----------------------------------------------------------------------


async def send_json(transport: MemoryTransport, message: Any) -> None:
    await transport.send([Outgoing(json.dumps(message).encode())])


async def receive_until(transport: MemoryTransport, rid: str) -> Any:
    """Read frames until the answer to ``rid``; the frames before it are the fuzz's answers."""
    while True:
        frame = await transport.receive()
        assert isinstance(frame, bytes)
        answer = json.loads(frame)
        if isinstance(answer, dict) and answer.get("id") == rid:
            return answer


async def feed_live_session(revision: str | None, inputs: list[bytes]) -> None:
    release = trio.Event()
    server = make_server(release)
    client_end, server_end = memory_transport_pair()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            session: mcptrio.Session = await nursery.start(server.serve_session, server_end)
            if revision is not None:
                await send_json(client_end, initialize_message(0, revision))
                assert json.loads(await client_end.receive())["id"] == 0  # type: ignore[arg-type]
                # Work in flight before the fuzz input, which must not be lost.
                await send_json(
                    client_end,
                    {
                        "jsonrpc": "2.0",
                        "id": SLOW_ID,
                        "method": "tools/call",
                        "params": {"name": "slow"},
                    },
                )
                await trio.testing.wait_all_tasks_blocked()
            await client_end.send([Outgoing(frame) for frame in inputs])
            await send_json(client_end, {"jsonrpc": "2.0", "id": BARRIER_ID, "method": "ping"})
            pong = await receive_until(client_end, BARRIER_ID)
            assert pong == {"jsonrpc": "2.0", "id": BARRIER_ID, "result": {}}
            if revision is not None:
                release.set()
                slow = await receive_until(client_end, SLOW_ID)
                assert slow["result"] == {"content": [{"type": "text", "text": "slow done"}]}
            assert not session.closed.is_set()
            # Ending the input ends the session cleanly: a crash would surface here instead.
            await client_end.aclose()
            await session.closed.wait()


@SESSIONS
@given(st.sampled_from((None, *HANDSHAKE_REVISIONS)), st.lists(frames, min_size=1, max_size=5))
def test_live_session_survives_any_input_and_still_answers(
    revision: str | None, inputs: list[bytes]
) -> None:
    trio.run(feed_live_session, revision, inputs)
