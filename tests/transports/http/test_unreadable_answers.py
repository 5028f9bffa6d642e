"""Over Streamable HTTP, an answer too deep to read fails the request it answers at once, on
either side, instead of leaving it to wait (see mcptrio.protocol.unreadable)."""

from __future__ import annotations

import json

import trio

import mcptrio
from mcptrio.runtime.transport import Outgoing
from mcptrio.transports.http.client.messages import peek_incoming
from mcptrio.transports.http.client.streamable import open_streamable_http_client_transport
from mcptrio.transports.http.endpoints.envelope_peek import peek
from mcptrio.transports.http.serve import serve_http

NESTED = b"[" * 5000 + b"]" * 5000
DEEP_ANSWER = b'{"jsonrpc":"2.0","id":7,"result":{"content":[],"_meta":{"v":' + NESTED + b"}}}"


def test_an_answer_too_deep_to_read_is_routed_as_the_answer_it_begins_as() -> None:
    # The server's endpoint hands it to the session (202) instead of refusing it with 400...
    routing = peek(DEEP_ANSWER)
    assert (routing.request_ids, routing.response_ids, routing.message) == ([], [7], None)
    # ...and the client's exchange counts it as the answer to 7 (it does not reissue 7).
    assert peek_incoming(DEEP_ANSWER) == ([7], None)
    deep_request = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":' + NESTED + b"}"
    assert peek_incoming(deep_request) == ([], None)


async def test_an_elicitation_answer_too_deep_to_read_fails_the_elicitation_at_once() -> None:
    server = mcptrio.Server("elicits")
    outcome: list[str] = []

    @server.tool()
    async def ask(ctx: mcptrio.Context) -> str:
        try:
            await ctx.elicit("name?", {"type": "object", "properties": {"n": {"type": "string"}}})
        except mcptrio.ParseError as error:
            outcome.append(error.message)
        return "done"

    # No timeout on the elicitation: before, it waited for the client's 600 s default.
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            base = await nursery.start(serve_http, server)
            async with open_streamable_http_client_transport(
                base + "/mcp", open_get_stream=False
            ) as transport:
                initialize = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"elicitation": {}},
                        "clientInfo": {"name": "raw", "version": "1"},
                    },
                }
                await transport.send([Outgoing(json.dumps(initialize).encode())])
                await transport.receive()
                await transport.send(
                    [Outgoing(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')]
                )
                call = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask"}}'
                await transport.send([Outgoing(call)])
                while True:
                    frame = await transport.receive()
                    assert isinstance(frame, bytes)
                    message = json.loads(frame)
                    if message.get("method") == "elicitation/create":
                        answer = (
                            b'{"jsonrpc":"2.0","id":'
                            + json.dumps(message["id"]).encode()
                            + b',"result":{"action":"accept","_meta":{"v":'
                            + NESTED
                            + b"}}}"
                        )
                        await transport.send([Outgoing(answer)])
                    elif message.get("id") == 2:
                        assert message["result"]["content"][0]["text"] == "done"
                        break
            nursery.cancel_scope.cancel()
    assert outcome == ["Unreadable response: Parse error: nested too deeply to be read"]
