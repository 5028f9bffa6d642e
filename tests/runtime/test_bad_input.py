"""Bad input never ends a session or loses other work.

Each test runs a real server :class:`~mcptrio.Session` (an ``mcptrio.Server`` with a few tools)
over an in-memory transport and plays the client by hand, frame by frame, so that it can send
what no well-behaved client would. Every case checks the exact error code and id of the answer,
then proves nothing else was disturbed: a new ``tools/call`` still succeeds, and a slow call
started *before* the bad input still completes with its own result.

Every error frame is checked against the official schema of the negotiated revision, except the
``"id": null`` error of revisions before 2025-11-25, which no schema of those revisions can
express (their ``JSONRPCError`` requires a string or integer id); its JSON-RPC 2.0 shape is
checked instead. From 2025-11-25 an unreadable id is left out, which that schema allows.

Ordering is what makes "nothing was sent back" checkable: the session answers protocol errors
and pings from its reader, in the order the frames arrived, so when the answer to a ping sent
after some input is the next frame, that input got no answer.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing

import mcptrio
from mcptrio.protocol.connection import Connection
from mcptrio.protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
)
from mcptrio.protocol.events import Reply, RequestReceived
from mcptrio.runtime.transport import (
    DEFAULT_MAX_FRAME_SIZE,
    Outgoing,
    Transport,
    TransportAbilities,
)
from mcptrio.server.tools import to_call_tool_result
from mcptrio.transports.memory import memory_transport_pair
from mcptrio.transports.stdio import StdioTransport

from schema_validation import HANDSHAKE_REVISIONS, validate_message

SESSION_LOGGER = "mcptrio.session"
# Revisions before 2025-11-25 answer an unreadable id with "id": null; 2025-11-25 leaves it out.
ID_NULL_REVISION = "2025-06-18"
ID_OMITTED_REVISION = "2025-11-25"
BATCH_REVISION = "2025-03-26"
NON_BATCH_REVISIONS = ("2024-11-05", "2025-06-18", "2025-11-25")


# --- the raw client ------------------------------------------------------------------------------


class RawClient:
    """The client end of a transport, spoken to in raw JSON frames."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.revision: str | None = None
        self._barriers = itertools.count()

    async def send_bytes(self, data: bytes) -> None:
        await self.transport.send([Outgoing(data)])

    async def send(self, message: Any) -> None:
        await self.send_bytes(json.dumps(message).encode())

    def abilities(self) -> TransportAbilities:
        return TransportAbilities()

    async def receive(self) -> Any:
        frame = await self.transport.receive()
        assert isinstance(frame, bytes), f"the server sent an oversized frame: {frame!r}"
        return json.loads(frame)

    async def initialize(self, revision: str) -> None:
        await self.send(initialize_request(0, revision))
        answer = await self.receive()
        assert answer["id"] == 0
        assert answer["result"]["protocolVersion"] == revision
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.revision = revision

    async def call_tool(self, rid: int | str, name: str, arguments: dict[str, Any]) -> Any:
        """Call a tool that answers at once; return the result after checking the frame."""
        await self.send(tools_call(rid, name, arguments))
        answer = await self.receive()
        assert answer["id"] == rid, answer
        assert "result" in answer, answer
        assert self.revision is not None
        validate_message(answer, self.revision, "CallToolResult")
        return answer["result"]

    async def assert_nothing_was_sent(self) -> None:
        """Check that the input sent so far got no answer (see the module docstring)."""
        rid = f"barrier-{next(self._barriers)}"
        await self.send({"jsonrpc": "2.0", "id": rid, "method": "ping"})
        assert await self.receive() == {"jsonrpc": "2.0", "id": rid, "result": {}}


def initialize_request(rid: int | str, revision: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {
            "protocolVersion": revision,
            "capabilities": {},
            "clientInfo": {"name": "raw-test-client", "version": "0"},
        },
    }


def tools_call(rid: int | str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def assert_error(frame: Any, code: int, rid: int | str | None, revision: str | None) -> None:
    """``frame`` is an error response with ``code`` for ``rid`` (``None``: unreadable id).

    ``revision`` is the negotiated one, or ``None`` before the handshake (then the frame must
    be valid under every revision that can express it).
    """
    assert isinstance(frame, dict), frame
    assert frame["jsonrpc"] == "2.0"
    assert frame["error"]["code"] == code, frame
    assert isinstance(frame["error"]["message"], str)
    assert set(frame["error"]) <= {"code", "message", "data"}
    if rid is None:
        if revision is not None and revision >= ID_OMITTED_REVISION:
            assert "id" not in frame, frame
            assert set(frame) == {"jsonrpc", "error"}
        else:
            # No schema of these revisions has a valid form; JSON-RPC 2.0's is required.
            assert "id" in frame, frame
            assert frame["id"] is None
            assert set(frame) == {"jsonrpc", "id", "error"}
            return
    else:
        assert frame["id"] == rid, frame
        assert type(frame["id"]) is type(rid)
        assert set(frame) == {"jsonrpc", "id", "error"}
    for schema_revision in HANDSHAKE_REVISIONS if revision is None else (revision,):
        validate_message(frame, schema_revision)


# --- the server under test -----------------------------------------------------------------------


class Harness:
    """A running server session, the raw client talking to it, and the slow tool's gate."""

    session: mcptrio.Session

    def __init__(self, client: RawClient) -> None:
        self.client = client
        self.slow_entered = trio.Event()
        self.release_slow = trio.Event()
        self.slow_calls = 0

    def make_server(self) -> mcptrio.Server:
        server = mcptrio.Server("bad-input-test")

        @server.tool()
        async def add(a: int, b: int) -> str:
            return str(a + b)

        @server.tool()
        async def echo(text: str) -> str:
            return text

        @server.tool()
        async def slow(tag: str) -> str:
            self.slow_calls += 1
            self.slow_entered.set()
            await self.release_slow.wait()
            return f"slow {tag} done"

        return server

    async def start_slow(self, rid: int | str = "slow") -> None:
        """Start a slow call and wait until its handler is running."""
        self.slow_entered = trio.Event()
        await self.client.send(tools_call(rid, "slow", {"tag": str(rid)}))
        await self.slow_entered.wait()

    async def prove_alive(self, slow_id: int | str | None = "slow") -> None:
        """A new call succeeds, then the slow call (if one was started) gets its own result."""
        assert await self.client.call_tool("alive", "add", {"a": 2, "b": 3}) == text_result("5")
        if slow_id is not None:
            self.release_slow.set()
            answer = await self.client.receive()
            assert answer == {
                "jsonrpc": "2.0",
                "id": slow_id,
                "result": text_result(f"slow {slow_id} done"),
            }
            assert self.client.revision is not None
            validate_message(answer, self.client.revision, "CallToolResult")
        await self.client.assert_nothing_was_sent()
        assert not self.session.closed.is_set()


@asynccontextmanager
async def serve_harness(server_end: Transport, client_end: Transport) -> AsyncIterator[Harness]:
    """Serve one session of the test server; the block's exit ends it."""
    harness = Harness(RawClient(client_end))
    async with trio.open_nursery() as nursery:
        harness.session = await nursery.start(harness.make_server().serve_session, server_end)
        yield harness
        # A session that crashed would have ended the nursery with its error before this.
        assert not harness.session.closed.is_set()
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def open_harness(
    revision: str | None = ID_NULL_REVISION, *, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE
) -> AsyncIterator[Harness]:
    """A server session over memory; initialized in ``revision`` unless it is ``None``."""
    client_end, server_end = memory_transport_pair(max_frame_size=max_frame_size)
    # Only the server's limit is under test; what it sends back is never cut.
    client_end.max_frame_size = DEFAULT_MAX_FRAME_SIZE
    async with serve_harness(server_end, client_end) as harness:
        if revision is not None:
            await harness.client.initialize(revision)
        yield harness


# --- invalid JSON --------------------------------------------------------------------------------

NOT_JSON = [
    pytest.param(b"{not json", id="garbage"),
    pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', id="truncated"),
    pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": "ping",}', id="trailing-comma"),
    pytest.param(b"\xff\xfe\x00", id="not-utf8"),
    pytest.param(b"", id="empty"),
    pytest.param(b'{"jsonrpc": "2.0"} {"id": 1}', id="two-values"),
]


@pytest.mark.parametrize("frame", NOT_JSON)
@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
async def test_invalid_json_gets_parse_error_and_session_continues(
    revision: str, frame: bytes
) -> None:
    with trio.fail_after(5):
        async with open_harness(revision) as h:
            await h.start_slow()
            await h.client.send_bytes(frame)
            assert_error(await h.client.receive(), PARSE_ERROR, None, revision)
            await h.prove_alive()


async def test_invalid_json_before_initialize_gets_parse_error_with_null_id() -> None:
    with trio.fail_after(5):
        async with open_harness(None) as h:
            await h.client.send_bytes(b"{not json")
            assert_error(await h.client.receive(), PARSE_ERROR, None, None)
            await h.client.initialize(ID_OMITTED_REVISION)
            await h.prove_alive(slow_id=None)


# --- JSON that is not a JSON-RPC message ---------------------------------------------------------

NOT_A_MESSAGE: list[Any] = [
    pytest.param(b"42", None, id="number"),
    pytest.param(b'"tools/list"', None, id="string"),
    pytest.param(b"null", None, id="null"),
    pytest.param(b"true", None, id="boolean"),
    pytest.param({"jsonrpc": "2.0", "id": 7}, 7, id="no-method-result-or-error"),
    pytest.param({"jsonrpc": "2.0", "id": "seven", "params": {}}, "seven", id="params-only"),
    pytest.param({"jsonrpc": "2.0"}, None, id="bare-envelope"),
    pytest.param({"jsonrpc": "1.0", "id": 8, "method": "tools/list"}, 8, id="jsonrpc-1.0"),
    pytest.param({"id": 9, "method": "tools/list"}, 9, id="jsonrpc-missing"),
    pytest.param({"jsonrpc": 2.0, "id": 10, "method": "tools/list"}, 10, id="jsonrpc-a-number"),
    pytest.param({"jsonrpc": "2.0", "id": None, "method": "tools/list"}, None, id="id-null"),
    pytest.param({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}, None, id="id-float"),
    pytest.param({"jsonrpc": "2.0", "id": 2.0, "method": "tools/list"}, None, id="id-whole-float"),
    pytest.param({"jsonrpc": "2.0", "id": True, "method": "tools/list"}, None, id="id-true"),
    pytest.param({"jsonrpc": "2.0", "id": False, "method": "tools/list"}, None, id="id-false"),
    pytest.param({"jsonrpc": "2.0", "id": [1], "method": "tools/list"}, None, id="id-array"),
    pytest.param({"jsonrpc": "2.0", "id": {"n": 1}, "method": "ping"}, None, id="id-object"),
    pytest.param({"jsonrpc": "2.0", "id": 11, "method": 42}, 11, id="method-a-number"),
    pytest.param({"jsonrpc": "2.0", "id": 12, "method": None}, 12, id="method-null"),
]


@pytest.mark.parametrize(("message", "echoed_id"), NOT_A_MESSAGE)
@pytest.mark.parametrize("revision", [ID_NULL_REVISION, ID_OMITTED_REVISION])
async def test_json_that_is_not_a_message_gets_invalid_request_and_session_continues(
    revision: str, message: Any, echoed_id: int | str | None
) -> None:
    with trio.fail_after(5):
        async with open_harness(revision) as h:
            await h.start_slow()
            if isinstance(message, bytes):
                await h.client.send_bytes(message)
            else:
                await h.client.send(message)
            assert_error(await h.client.receive(), INVALID_REQUEST, echoed_id, revision)
            await h.prove_alive()


# --- methods that do not exist (here) ------------------------------------------------------------

UNKNOWN_METHODS: list[Any] = [
    pytest.param(ID_NULL_REVISION, "no/such/method", None, id="unknown"),
    pytest.param(ID_NULL_REVISION, "Tools/List", None, id="wrong-case"),
    pytest.param(ID_NULL_REVISION, "tasks/list", None, id="later-revision-tasks"),
    pytest.param("2024-11-05", "elicitation/create", None, id="later-revision-elicitation"),
    pytest.param(ID_NULL_REVISION, "resources/list", None, id="resources-not-declared"),
    pytest.param(ID_NULL_REVISION, "prompts/list", None, id="prompts-not-declared"),
    pytest.param(
        ID_NULL_REVISION, "resources/read", {"uri": "file:///x"}, id="resources-read-not-declared"
    ),
    pytest.param(ID_NULL_REVISION, "prompts/get", {"name": "p"}, id="prompts-get-not-declared"),
    pytest.param(
        ID_NULL_REVISION,
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}},
        id="completions-not-declared",
    ),
    pytest.param(ID_OMITTED_REVISION, "tasks/list", None, id="tasks-not-declared"),
    pytest.param(ID_NULL_REVISION, "sampling/createMessage", None, id="server-to-client-sampling"),
    pytest.param(ID_NULL_REVISION, "roots/list", None, id="server-to-client-roots"),
    pytest.param(ID_NULL_REVISION, "elicitation/create", None, id="server-to-client-elicit"),
    pytest.param(ID_NULL_REVISION, "notifications/initialized", None, id="notification-as-request"),
]


@pytest.mark.parametrize(("revision", "method", "params"), UNKNOWN_METHODS)
async def test_unknown_or_unnegotiated_method_gets_method_not_found_and_session_continues(
    revision: str, method: str, params: dict[str, Any] | None
) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 30, "method": method}
    if params is not None:
        message["params"] = params
    with trio.fail_after(5):
        async with open_harness(revision) as h:
            await h.start_slow()
            await h.client.send(message)
            assert_error(await h.client.receive(), METHOD_NOT_FOUND, 30, revision)
            await h.prove_alive()


def test_undeclared_tasks_request_is_refused_by_the_protocol_layer_not_a_handler() -> None:
    server = mcptrio.Server("no-tasks").connection()
    server.receive(json.dumps(initialize_request(0, "2025-11-25")).encode())
    events = server.receive(b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/list"}')
    [reply] = events
    frame = json.loads(reply.data)  # type: ignore[union-attr]
    assert_error(frame, METHOD_NOT_FOUND, 1, "2025-11-25")
    assert server.in_flight() == 0


# --- params that do not fit ----------------------------------------------------------------------

BAD_PARAMS: list[Any] = [
    pytest.param("tools/call", {}, id="call-without-name"),
    pytest.param("tools/call", {"arguments": {"a": 1}}, id="call-arguments-without-name"),
    pytest.param("tools/call", ["add", {"a": 1, "b": 2}], id="call-params-an-array"),
    pytest.param("tools/call", "add", id="call-params-a-string"),
    pytest.param("tools/call", None, id="call-params-null"),
    pytest.param("tools/call", {"name": 42}, id="call-name-a-number"),
    pytest.param("tools/call", {"name": "add", "arguments": [1, 2]}, id="call-arguments-array"),
    pytest.param("tools/call", {"name": "no_such_tool"}, id="unknown-tool"),
    pytest.param("tools/list", [], id="list-params-an-array"),
    pytest.param("tools/list", {"cursor": 5}, id="list-cursor-a-number"),
    pytest.param("ping", [], id="ping-params-an-array"),
]


@pytest.mark.parametrize(("method", "params"), BAD_PARAMS)
@pytest.mark.parametrize("revision", [ID_NULL_REVISION, ID_OMITTED_REVISION])
async def test_bad_params_get_invalid_params_and_session_continues(
    revision: str, method: str, params: Any
) -> None:
    with trio.fail_after(5):
        async with open_harness(revision) as h:
            await h.start_slow()
            await h.client.send({"jsonrpc": "2.0", "id": "bad", "method": method, "params": params})
            assert_error(await h.client.receive(), INVALID_PARAMS, "bad", revision)
            await h.prove_alive()


async def test_tools_call_without_params_gets_invalid_params() -> None:
    with trio.fail_after(5):
        async with open_harness() as h:
            await h.client.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call"})
            assert_error(await h.client.receive(), INVALID_PARAMS, 3, ID_NULL_REVISION)
            await h.prove_alive(slow_id=None)


async def test_arguments_that_do_not_fit_the_tool_get_a_tool_error_result() -> None:
    # Not a protocol error: the 2025-11-25 revision wants the model to see the reason.
    with trio.fail_after(5):
        async with open_harness() as h:
            await h.start_slow()
            result = await h.client.call_tool(4, "add", {"a": "one", "b": 2})
            assert result["isError"] is True
            assert "add" in result["content"][0]["text"]
            await h.prove_alive()


# --- lifecycle -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        pytest.param({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, id="tools-list"),
        pytest.param(tools_call(1, "add", {"a": 1, "b": 2}), id="tools-call"),
    ],
)
async def test_request_before_initialize_gets_invalid_request_and_session_continues(
    message: dict[str, Any],
) -> None:
    with trio.fail_after(5):
        async with open_harness(None) as h:
            await h.client.send(message)
            assert_error(await h.client.receive(), INVALID_REQUEST, 1, None)
            # ping is allowed before initialize.
            await h.client.assert_nothing_was_sent()
            await h.client.initialize(ID_NULL_REVISION)
            await h.start_slow()
            await h.prove_alive()


async def test_initialize_with_bad_params_gets_invalid_params_and_can_be_retried() -> None:
    with trio.fail_after(5):
        async with open_harness(None) as h:
            bad = initialize_request(1, ID_NULL_REVISION)
            del bad["params"]["clientInfo"]
            await h.client.send(bad)
            assert_error(await h.client.receive(), INVALID_PARAMS, 1, None)
            assert h.session.connection.revision is None
            await h.client.initialize(ID_NULL_REVISION)
            await h.start_slow()
            await h.prove_alive()


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
async def test_second_initialize_gets_invalid_request_and_changes_nothing(revision: str) -> None:
    with trio.fail_after(5):
        async with open_harness(revision) as h:
            await h.start_slow()
            other = "2024-11-05" if revision != "2024-11-05" else "2025-11-25"
            await h.client.send(initialize_request("again", other))
            assert_error(await h.client.receive(), INVALID_REQUEST, "again", revision)
            assert h.session.connection.revision == revision
            await h.prove_alive()


# --- responses nobody asked for ------------------------------------------------------------------

UNMATCHED_RESPONSES: list[Any] = [
    pytest.param({"jsonrpc": "2.0", "id": 99, "result": {}}, id="result"),
    pytest.param({"jsonrpc": "2.0", "id": "nope", "result": {"x": 1}}, id="result-string-id"),
    pytest.param(
        {"jsonrpc": "2.0", "id": 98, "error": {"code": -32603, "message": "boom"}}, id="error"
    ),
    pytest.param(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "?"}}, id="null-id"
    ),
    pytest.param({"jsonrpc": "2.0", "id": "slow", "result": {}}, id="id-of-incoming-request"),
]


@pytest.mark.parametrize("message", UNMATCHED_RESPONSES)
async def test_response_to_unknown_id_is_logged_and_dropped(
    message: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=SESSION_LOGGER)
    with trio.fail_after(5):
        async with open_harness() as h:
            await h.start_slow()
            await h.client.send(message)
            await h.client.assert_nothing_was_sent()
            dropped = [
                r
                for r in caplog.records
                if r.name == SESSION_LOGGER and "unknown request id" in r.getMessage()
            ]
            assert len(dropped) == 1
            assert dropped[0].levelno == logging.WARNING
            assert repr(message["id"]) in dropped[0].getMessage()
            await h.prove_alive()


# --- ids already in use --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "duplicate",
    [
        pytest.param(tools_call("slow", "add", {"a": 1, "b": 1}), id="tools-call"),
        pytest.param(tools_call("slow", "slow", {"tag": "second"}), id="same-tool"),
        pytest.param({"jsonrpc": "2.0", "id": "slow", "method": "ping"}, id="ping"),
        pytest.param({"jsonrpc": "2.0", "id": "slow", "method": "no/such"}, id="unknown-method"),
    ],
)
async def test_request_reusing_an_in_flight_id_is_refused_and_the_original_still_answers(
    duplicate: dict[str, Any],
) -> None:
    with trio.fail_after(5):
        async with open_harness() as h:
            await h.start_slow("slow")
            await h.client.send(duplicate)
            assert_error(await h.client.receive(), INVALID_REQUEST, "slow", ID_NULL_REVISION)
            assert h.slow_calls == 1
            # prove_alive checks that "slow" gets exactly one answer, its own.
            await h.prove_alive("slow")


async def test_ids_are_compared_with_their_type_and_free_again_once_answered() -> None:
    with trio.fail_after(5):
        async with open_harness() as h:
            await h.start_slow(1)
            # "1" is not 1: a distinct request, not a duplicate.
            assert await h.client.call_tool("1", "add", {"a": 1, "b": 1}) == text_result("2")
            await h.prove_alive(1)
            # Once answered, the id may be used again.
            assert await h.client.call_tool(1, "add", {"a": 2, "b": 2}) == text_result("4")


# --- frames over the size limit ------------------------------------------------------------------

LIMIT = 1024


def oversized_call(rid: int | str) -> bytes:
    frame = json.dumps(tools_call(rid, "echo", {"text": "x" * (2 * LIMIT)})).encode()
    assert len(frame) > LIMIT
    return frame


@pytest.mark.parametrize("revision", [ID_NULL_REVISION, ID_OMITTED_REVISION])
async def test_oversized_frame_gets_invalid_request_and_session_continues(revision: str) -> None:
    with trio.fail_after(5):
        async with open_harness(revision, max_frame_size=LIMIT) as h:
            await h.start_slow()
            await h.client.send_bytes(oversized_call("big"))
            # The frame is dropped unread, but its id is where it began: the caller learns.
            assert_error(await h.client.receive(), INVALID_REQUEST, "big", revision)
            # One that does not begin with its id cannot be answered with it.
            notice = b'{"method": "x", "params": {"text": "' + b"x" * LIMIT + b'"}, "id": 9}'
            await h.client.send_bytes(notice.replace(b'"method": "x", ', b""))
            assert_error(await h.client.receive(), INVALID_REQUEST, None, revision)
            # One whose id comes last (as the TypeScript SDK writes it) is answered with it.
            await h.client.send_bytes(notice.replace(b'"x"', b'"tools/call"'))
            assert_error(await h.client.receive(), INVALID_REQUEST, 9, revision)
            # A frame of exactly the limit is still accepted.
            text = "y" * (LIMIT - len(json.dumps(tools_call(5, "echo", {"text": ""}))))
            exact = json.dumps(tools_call(5, "echo", {"text": text})).encode()
            assert len(exact) == LIMIT
            await h.client.send_bytes(exact)
            assert (await h.client.receive())["result"] == text_result(text)
            await h.prove_alive()


@asynccontextmanager
async def open_stdio_harness(revision: str) -> AsyncIterator[tuple[Harness, trio.abc.Stream]]:
    """A server session over the stdio framing, with a small frame limit on the server side.

    Also yields the client's raw byte stream, to write lines the client transport would not.
    """
    client_stream, server_stream = trio.testing.memory_stream_pair()
    server_end = StdioTransport(server_stream, server_stream, max_frame_size=LIMIT)
    client_end = StdioTransport(client_stream, client_stream)
    async with serve_harness(server_end, client_end) as harness:
        await harness.client.initialize(revision)
        yield harness, client_stream


@pytest.mark.parametrize("revision", [ID_NULL_REVISION, ID_OMITTED_REVISION])
async def test_oversized_line_over_stdio_gets_invalid_request_and_session_continues(
    revision: str,
) -> None:
    ping = b'{"jsonrpc": "2.0", "id": "after", "method": "ping"}\n'
    with trio.fail_after(5):
        async with open_stdio_harness(revision) as (h, raw):
            await h.start_slow()
            # The oversized line and the next one arrive in one chunk: only the first is lost.
            await raw.send_all(oversized_call("big") + b"\n" + ping)
            assert_error(await h.client.receive(), INVALID_REQUEST, "big", revision)
            assert await h.client.receive() == {"jsonrpc": "2.0", "id": "after", "result": {}}
            # An oversized line dribbled in small pieces is reported once, when it ends.
            big = oversized_call("dribbled")
            for start in range(0, len(big), 100):
                await raw.send_all(big[start : start + 100])
                await trio.testing.wait_all_tasks_blocked()
            await raw.send_all(b"\r\n" + ping)
            assert_error(await h.client.receive(), INVALID_REQUEST, "dribbled", revision)
            assert await h.client.receive() == {"jsonrpc": "2.0", "id": "after", "result": {}}
            # One that writes its id last (as the TypeScript SDK does) is answered with it too.
            last = b'{"method": "tools/call", "params": {"name": "echo", "arguments": {"text": "'
            last += b"x" * (2 * LIMIT) + b'"}}, "jsonrpc": "2.0", "id": "last"}\n'
            await raw.send_all(last)
            assert_error(await h.client.receive(), INVALID_REQUEST, "last", revision)
            await h.prove_alive()


# --- JSON-RPC batches ----------------------------------------------------------------------------


def by_id(frame: Any) -> dict[Any, Any]:
    assert isinstance(frame, list), frame
    answers = {item["id"]: item for item in frame}
    assert len(answers) == len(frame), "two answers with the same id"
    return answers


async def test_batch_under_2025_03_26_is_answered_by_one_array() -> None:
    batch = [
        tools_call(1, "add", {"a": 1, "b": 2}),
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        tools_call("two", "echo", {"text": "hi"}),
    ]
    with trio.fail_after(5):
        async with open_harness(BATCH_REVISION) as h:
            await h.start_slow()
            await h.client.send(batch)
            answer = await h.client.receive()
            validate_message(answer, BATCH_REVISION)
            assert by_id(answer) == {
                1: {"jsonrpc": "2.0", "id": 1, "result": text_result("3")},
                "two": {"jsonrpc": "2.0", "id": "two", "result": text_result("hi")},
            }
            await h.prove_alive()


async def test_batch_answer_waits_for_its_slowest_request_without_blocking_others() -> None:
    with trio.fail_after(5):
        async with open_harness(BATCH_REVISION) as h:
            await h.client.send(
                [
                    tools_call("slow", "slow", {"tag": "slow"}),
                    tools_call(2, "add", {"a": 1, "b": 1}),
                ]
            )
            await h.slow_entered.wait()
            # The batch is held for its slow member; everything else goes on meanwhile.
            assert await h.client.call_tool(3, "add", {"a": 3, "b": 3}) == text_result("6")
            await h.client.assert_nothing_was_sent()
            h.release_slow.set()
            answer = await h.client.receive()
            validate_message(answer, BATCH_REVISION, "CallToolResult")
            assert by_id(answer) == {
                "slow": {"jsonrpc": "2.0", "id": "slow", "result": text_result("slow slow done")},
                2: {"jsonrpc": "2.0", "id": 2, "result": text_result("2")},
            }
            await h.prove_alive(slow_id=None)


async def test_batch_items_that_are_bad_get_their_own_error_items() -> None:
    batch = [
        initialize_request("init", BATCH_REVISION),
        {"jsonrpc": "2.0", "id": "unknown", "method": "no/such"},
        {"jsonrpc": "2.0", "id": "params", "method": "tools/call", "params": []},
        {"jsonrpc": "2.0", "id": "ping", "method": "ping"},
        tools_call("ok", "add", {"a": 20, "b": 22}),
    ]
    with trio.fail_after(5):
        async with open_harness(BATCH_REVISION) as h:
            await h.start_slow()
            await h.client.send(batch)
            answer = await h.client.receive()
            validate_message(answer, BATCH_REVISION)
            answers = by_id(answer)
            assert set(answers) == {"init", "unknown", "params", "ping", "ok"}
            assert_error(answers["init"], INVALID_REQUEST, "init", BATCH_REVISION)
            assert_error(answers["unknown"], METHOD_NOT_FOUND, "unknown", BATCH_REVISION)
            assert_error(answers["params"], INVALID_PARAMS, "params", BATCH_REVISION)
            assert answers["ping"]["result"] == {}
            assert answers["ok"]["result"] == text_result("42")
            assert h.session.connection.revision == BATCH_REVISION
            await h.prove_alive()


async def test_batch_item_that_is_not_a_message_gets_an_error_item_with_null_id() -> None:
    with trio.fail_after(5):
        async with open_harness(BATCH_REVISION) as h:
            await h.start_slow()
            await h.client.send(
                [42, {"jsonrpc": "2.0", "id": 8}, tools_call(1, "echo", {"text": "a"})]
            )
            answer = await h.client.receive()
            assert isinstance(answer, list)
            assert len(answer) == 3
            [unreadable] = [item for item in answer if item.get("id", 0) is None]
            # Like a top-level parse error: no 2025-03-26 schema form for a null id.
            assert_error(unreadable, INVALID_REQUEST, None, BATCH_REVISION)
            [no_kind] = [item for item in answer if item.get("id") == 8]
            assert_error(no_kind, INVALID_REQUEST, 8, BATCH_REVISION)
            [ok] = [item for item in answer if item.get("id") == 1]
            assert ok["result"] == text_result("a")
            await h.prove_alive()


async def test_empty_batch_gets_a_single_invalid_request() -> None:
    with trio.fail_after(5):
        async with open_harness(BATCH_REVISION) as h:
            await h.start_slow()
            await h.client.send_bytes(b"[]")
            assert_error(await h.client.receive(), INVALID_REQUEST, None, BATCH_REVISION)
            await h.prove_alive()


async def test_batch_of_notifications_only_gets_no_answer() -> None:
    batch = [
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "method": "notifications/no/such"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "ghost"}},
    ]
    with trio.fail_after(5):
        async with open_harness(BATCH_REVISION) as h:
            await h.start_slow()
            await h.client.send(batch)
            await h.client.assert_nothing_was_sent()
            await h.prove_alive()


async def test_batch_reusing_an_in_flight_id_gets_an_error_item_and_the_original_answers() -> None:
    with trio.fail_after(5):
        async with open_harness(BATCH_REVISION) as h:
            await h.start_slow("slow")
            await h.client.send(
                [
                    tools_call("slow", "add", {"a": 1, "b": 1}),
                    {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                ]
            )
            answer = await h.client.receive()
            validate_message(answer, BATCH_REVISION)
            answers = by_id(answer)
            assert_error(answers["slow"], INVALID_REQUEST, "slow", BATCH_REVISION)
            assert answers[2] == {"jsonrpc": "2.0", "id": 2, "result": {}}
            await h.prove_alive("slow")


async def test_id_used_twice_in_one_batch_is_refused_the_second_time() -> None:
    with trio.fail_after(5):
        async with open_harness(BATCH_REVISION) as h:
            await h.client.send(
                [tools_call(1, "slow", {"tag": "1"}), tools_call(1, "add", {"a": 1, "b": 1})]
            )
            await h.slow_entered.wait()
            await h.client.assert_nothing_was_sent()
            h.release_slow.set()
            answer = await h.client.receive()
            validate_message(answer, BATCH_REVISION)
            [error] = [item for item in answer if "error" in item]
            assert_error(error, INVALID_REQUEST, 1, BATCH_REVISION)
            [result] = [item for item in answer if "result" in item]
            assert result == {"jsonrpc": "2.0", "id": 1, "result": text_result("slow 1 done")}
            assert len(answer) == 2
            assert h.slow_calls == 1
            await h.prove_alive(slow_id=None)


async def test_cancelled_batch_member_leaves_the_rest_of_its_batch_answered() -> None:
    with trio.fail_after(5):
        async with open_harness(BATCH_REVISION) as h:
            await h.client.send(
                [tools_call("s", "slow", {"tag": "s"}), tools_call(2, "add", {"a": 1, "b": 1})]
            )
            await h.slow_entered.wait()
            await h.client.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": "s"},
                }
            )
            answer = await h.client.receive()
            validate_message(answer, BATCH_REVISION, "CallToolResult")
            assert answer == [{"jsonrpc": "2.0", "id": 2, "result": text_result("2")}]
            await h.prove_alive(slow_id=None)


async def test_batch_of_unmatched_responses_is_logged_and_gets_no_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=SESSION_LOGGER)
    with trio.fail_after(5):
        async with open_harness(BATCH_REVISION) as h:
            await h.start_slow()
            await h.client.send(
                [
                    {"jsonrpc": "2.0", "id": 5, "result": {}},
                    {"jsonrpc": "2.0", "id": 6, "error": {"code": 1, "message": "x"}},
                ]
            )
            await h.client.assert_nothing_was_sent()
            dropped = [r for r in caplog.records if "unknown request id" in r.getMessage()]
            assert len(dropped) == 2
            await h.prove_alive()


async def test_cancellation_later_in_the_same_batch_cancels_the_request() -> None:
    batch = [
        tools_call("slow", "slow", {"tag": "slow"}),
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow"}},
    ]
    with trio.fail_after(5):
        async with open_harness(BATCH_REVISION) as h:
            await h.client.send(batch)
            await trio.testing.wait_all_tasks_blocked()
            h.release_slow.set()
            # A cancelled request gets no answer, so neither does its batch.
            await h.client.assert_nothing_was_sent()
            await h.prove_alive(slow_id=None)


@pytest.mark.parametrize("attempt", range(10))
async def test_cancellation_right_behind_its_request_cancels_it(attempt: int) -> None:
    # Both frames in one write: the reader may see the cancellation before the handler's task
    # has first run. Repeated because the scheduler's order varies from run to run.
    call = tools_call("slow", "slow", {"tag": "slow"})
    cancel = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": "slow"},
    }
    with trio.fail_after(5):
        async with open_harness() as h:
            await h.client.transport.send(
                [Outgoing(json.dumps(call).encode()), Outgoing(json.dumps(cancel).encode())]
            )
            await trio.testing.wait_all_tasks_blocked()
            h.release_slow.set()
            await h.client.assert_nothing_was_sent()
            await h.prove_alive(slow_id=None)


@pytest.mark.parametrize("revision", NON_BATCH_REVISIONS)
async def test_batch_outside_2025_03_26_gets_a_single_invalid_request_and_is_not_run(
    revision: str,
) -> None:
    batch = [tools_call(1, "add", {"a": 1, "b": 2}), {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    with trio.fail_after(5):
        async with open_harness(revision) as h:
            await h.start_slow()
            await h.client.send(batch)
            assert_error(await h.client.receive(), INVALID_REQUEST, None, revision)
            # Neither member ran: nothing more comes for ids 1 or 2.
            await h.client.assert_nothing_was_sent()
            await h.prove_alive()


async def test_batch_before_initialize_gets_a_single_invalid_request() -> None:
    with trio.fail_after(5):
        async with open_harness(None) as h:
            await h.client.send([initialize_request(1, BATCH_REVISION)])
            assert_error(await h.client.receive(), INVALID_REQUEST, None, None)
            assert h.session.connection.revision is None
            await h.client.initialize(BATCH_REVISION)
            await h.prove_alive(slow_id=None)


# --- notifications -------------------------------------------------------------------------------

IGNORED_NOTIFICATIONS: list[Any] = [
    pytest.param({"method": "notifications/no/such"}, id="unknown"),
    pytest.param({"method": "no/such/method", "params": {"x": 1}}, id="unknown-non-notification"),
    pytest.param({"method": "tools/list"}, id="request-method-without-id"),
    pytest.param({"method": "notifications/tools/list_changed"}, id="server-to-client"),
    pytest.param({"method": "notifications/cancelled", "params": {}}, id="cancelled-no-request-id"),
    pytest.param({"method": "notifications/cancelled", "params": ["slow"]}, id="cancelled-array"),
    pytest.param(
        {"method": "notifications/cancelled", "params": {"requestId": None}}, id="cancelled-null-id"
    ),
    pytest.param(
        {"method": "notifications/cancelled", "params": {"requestId": "ghost"}},
        id="cancelled-unknown-id",
    ),
    pytest.param(
        {"method": "notifications/cancelled", "params": {"requestId": "alive"}},
        id="cancelled-id-not-yet-used",
    ),
    pytest.param({"method": "notifications/progress", "params": "x"}, id="progress-a-string"),
    pytest.param(
        {"method": "notifications/progress", "params": {"progressToken": "t"}},
        id="progress-without-progress",
    ),
    pytest.param({"method": "notifications/initialized", "params": 5}, id="initialized-a-number"),
    pytest.param({"method": "notifications/tasks/status", "params": {}}, id="later-revision"),
]


@pytest.mark.parametrize("notification", IGNORED_NOTIFICATIONS)
async def test_unknown_or_malformed_notification_is_ignored_without_reply(
    notification: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=SESSION_LOGGER)
    with trio.fail_after(5):
        async with open_harness() as h:
            await h.start_slow()
            await h.client.send({"jsonrpc": "2.0", **notification})
            await h.client.assert_nothing_was_sent()
            assert any(
                r.name == SESSION_LOGGER and r.getMessage().startswith("ignored a message")
                for r in caplog.records
            )
            # In particular, the slow call was not cancelled.
            await h.prove_alive()


# --- input msgspec rejects outside its own DecodeError -------------------------------------------
#
# msgspec raises UnicodeDecodeError for a JSON string that is not UTF-8 and RecursionError for
# nesting deeper than the interpreter's recursion limit; neither is a msgspec.DecodeError, and
# both once escaped the codec and ended the session. Undecodable in phase one -> -32700; in a
# batch item -> -32600; in params (phase two) -> -32602 with the id; while salvaging an id for
# another error -> that error, without the id. A request nested too deeply whose id and method
# come first -> -32700 with its id (mcptrio.protocol.unreadable), so its caller does not wait.

DEEP = 5000
NESTED = b"[" * DEEP + b"]" * DEEP

UNDECODABLE: list[Any] = [
    pytest.param(ID_NULL_REVISION, b"[" * DEEP, PARSE_ERROR, None, id="deep-unterminated"),
    pytest.param(ID_NULL_REVISION, NESTED, PARSE_ERROR, None, id="deep-nested-array"),
    pytest.param(
        ID_NULL_REVISION,
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo",'
        b' "arguments": {"text": ' + NESTED + b"}}}",
        PARSE_ERROR,
        1,
        id="deep-in-params",
    ),
    pytest.param(
        ID_NULL_REVISION,
        b'{"jsonrpc": "2.0", "params": {"name": "echo", "arguments": ' + NESTED + b'}, "id": 1,'
        b' "method": "tools/call"}',
        PARSE_ERROR,
        None,
        id="deep-in-params-before-the-id",
    ),
    pytest.param(
        ID_NULL_REVISION,
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo",'
        b' "arguments": {"text": "unterminated}}}',
        PARSE_ERROR,
        None,
        id="not-json-after-the-id",
    ),
    pytest.param(
        ID_NULL_REVISION,
        b'{"jsonrpc": "2.0", "id": 1, "method": 5, "x": ' + NESTED + b"}",
        INVALID_REQUEST,
        None,
        id="deep-while-salvaging-the-id",
    ),
    pytest.param(
        ID_NULL_REVISION,
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping\xff"}',
        PARSE_ERROR,
        None,
        id="non-utf8-method",
    ),
    pytest.param(
        ID_OMITTED_REVISION,
        b'{"jsonrpc": "\x80", "id": 1, "method": "ping"}',
        PARSE_ERROR,
        None,
        id="non-utf8-jsonrpc",
    ),
    pytest.param(
        ID_NULL_REVISION,
        b'{"jsonrpc": "2.0", "id": "\xc3", "method": "ping"}',
        PARSE_ERROR,
        None,
        id="non-utf8-id",
    ),
    pytest.param(
        ID_NULL_REVISION,
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "\xc3"}}',
        INVALID_PARAMS,
        1,
        id="non-utf8-in-params",
    ),
    pytest.param(
        ID_NULL_REVISION,
        b'{"jsonrpc": "2.0", "id": 1, "method": 5, "x": "\xff"}',
        INVALID_REQUEST,
        None,
        id="non-utf8-while-salvaging-the-id",
    ),
]


@pytest.mark.parametrize(("revision", "frame", "code", "echoed_id"), UNDECODABLE)
def test_undecodable_frame_is_answered_by_the_protocol_layer(
    revision: str, frame: bytes, code: int, echoed_id: int | None
) -> None:
    connection = mcptrio.Server("undecodable", declare=("tools",)).connection()
    connection.receive(json.dumps(initialize_request(0, revision)).encode())
    [reply] = connection.receive(frame)
    assert isinstance(reply, Reply)
    assert_error(json.loads(reply.data), code, echoed_id, revision)


def test_undecodable_batch_item_gets_an_error_item() -> None:
    connection = mcptrio.Server("undecodable", declare=("tools",)).connection()
    connection.receive(json.dumps(initialize_request(0, BATCH_REVISION)).encode())
    [reply] = connection.receive(
        b'[{"jsonrpc": "2.0", "id": 1, "method": "ping\xff"}, {"jsonrpc": "2.0", "id": 2,'
        b' "method": "ping"}]'
    )
    assert isinstance(reply, Reply)
    answers = json.loads(reply.data)
    assert {"jsonrpc": "2.0", "id": 2, "result": {}} in answers
    [error] = [item for item in answers if item.get("id") != 2]
    assert_error(error, INVALID_REQUEST, None, BATCH_REVISION)


@pytest.mark.parametrize(("revision", "frame", "code", "echoed_id"), UNDECODABLE)
async def test_undecodable_frame_does_not_end_the_session(
    revision: str, frame: bytes, code: int, echoed_id: int | None
) -> None:
    with trio.fail_after(5):
        async with open_harness(revision) as h:
            await h.start_slow()
            await h.client.send_bytes(frame)
            assert_error(await h.client.receive(), code, echoed_id, revision)
            await h.prove_alive()


def test_sans_io_connection_answers_every_bad_frame_and_keeps_its_state() -> None:
    """The inputs above, straight into the sans-IO core: one error each, nothing disturbed."""
    connection: Connection = mcptrio.Server("sans-io", declare=("tools",)).connection()
    connection.receive(json.dumps(initialize_request(0, ID_NULL_REVISION)).encode())
    [received] = connection.receive(json.dumps(tools_call("slow", "slow", {"tag": "x"})).encode())
    assert isinstance(received, RequestReceived)
    bad_frames = [param.values[0] for param in NOT_JSON + NOT_A_MESSAGE]
    bad_frames += [param.values[1] for param in UNDECODABLE]
    for frame in bad_frames:
        data = frame if isinstance(frame, bytes) else json.dumps(frame).encode()
        [reply] = connection.receive(data)
        assert isinstance(reply, Reply)
        code = json.loads(reply.data)["error"]["code"]
        assert code in (PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS)
    assert connection.in_flight() == 1
    assert connection.revision == ID_NULL_REVISION
    answer = connection.respond("slow", to_call_tool_result("done"))
    assert answer is not None
    assert json.loads(answer) == {"jsonrpc": "2.0", "id": "slow", "result": text_result("done")}
