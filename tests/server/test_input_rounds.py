"""Input-required rounds against a hostile client: the sealed ``requestState`` is bound to the
principal it was issued to, the answers of earlier rounds stay as they were sealed, and only
answers to keys the server asked for are taken (SEP-2322)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import trio

from mcptrio import Context, Server
from mcptrio.protocol.request_meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcptrio.runtime.transport import Outgoing
from mcptrio.transports.http.endpoints.security import current_principal
from mcptrio.transports.memory import memory_transport_pair

REV = "2026-07-28"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


@dataclass(frozen=True)
class User:
    subject: str


def make_server() -> Server:
    server = Server("rounds", version="1.0")

    @server.tool
    async def greet(ctx: Context) -> str:
        """Asks a name, then a surname."""
        first = await ctx.elicit("Name?", SCHEMA, key="name")
        second = await ctx.elicit("Surname?", SCHEMA, key="surname")
        name, surname = (first.content or {}).get("name"), (second.content or {}).get("name")
        who = ctx.principal.subject if ctx.principal is not None else "nobody"
        return f"{who}: {name} {surname}"

    return server


class Client:
    """One connection to the server, speaking raw JSON-RPC as ``user`` (``None``: anonymous)."""

    def __init__(self, server: Server, user: User | None) -> None:
        self.server = server
        self.user = user
        self.end, self._server_end = memory_transport_pair()
        self._next_id = 0

    async def serve(self) -> None:
        # The principal of every request of this connection, as an authenticator would set it.
        current_principal.set(self.user)
        await self.server.serve_session(self._server_end)

    async def call(self, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        rid = self._next_id
        body = {
            "_meta": {PROTOCOL_VERSION_KEY: REV, CLIENT_CAPABILITIES_KEY: {"elicitation": {}}},
            "name": "greet",
            "arguments": {},
            **params,
        }
        message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": body}
        await self.end.send([Outgoing(json.dumps(message).encode())])
        while True:
            frame = await self.end.receive()
            assert isinstance(frame, bytes)
            answer: dict[str, Any] = json.loads(frame)
            if answer.get("id") == rid:
                return answer


@asynccontextmanager
async def clients(*users: User | None) -> AsyncIterator[list[Client]]:
    server = make_server()
    connected = [Client(server, user) for user in users]
    async with trio.open_nursery() as nursery:
        for client in connected:
            nursery.start_soon(client.serve)
        yield connected
        nursery.cancel_scope.cancel()


def accept(name: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": name}}


async def test_a_state_sealed_for_one_principal_is_refused_to_another() -> None:
    with trio.fail_after(5):
        async with clients(User("alice"), User("mallory")) as (alice, mallory):
            first = (await alice.call())["result"]
            second = (
                await alice.call(
                    inputResponses={"name": accept("Alice")}, requestState=first["requestState"]
                )
            )["result"]
            stolen = await mallory.call(
                inputResponses={"surname": accept("Liddell")},
                requestState=second["requestState"],
            )
            own = await alice.call(
                inputResponses={"surname": accept("Liddell")},
                requestState=second["requestState"],
            )
    assert "result" not in stolen
    assert stolen["error"]["code"] == -32602
    assert "another user" in stolen["error"]["message"]
    assert own["result"]["content"][0]["text"] == "alice: Alice Liddell"


async def test_an_anonymous_state_is_refused_to_a_principal_and_back() -> None:
    with trio.fail_after(5):
        async with clients(None, User("alice")) as (anonymous, alice):
            theirs = (await anonymous.call())["result"]["requestState"]
            mine = (await alice.call())["result"]["requestState"]
            borrowed = await alice.call(inputResponses={"name": accept("Eve")}, requestState=theirs)
            lent = await anonymous.call(inputResponses={"name": accept("Eve")}, requestState=mine)
    assert borrowed["error"]["code"] == lent["error"]["code"] == -32602


async def test_a_retry_cannot_replace_an_answer_sealed_in_an_earlier_round() -> None:
    with trio.fail_after(5):
        async with clients(None) as (client,):
            first = (await client.call())["result"]
            second = (
                await client.call(
                    inputResponses={"name": accept("Alice")}, requestState=first["requestState"]
                )
            )["result"]
            last = await client.call(
                inputResponses={"name": accept("Eve"), "surname": accept("Liddell")},
                requestState=second["requestState"],
            )
    assert last["result"]["content"][0]["text"] == "nobody: Alice Liddell"


async def test_answers_given_ahead_are_taken_and_keys_never_asked_are_dropped() -> None:
    # SEP-2322's conformance scenario: correct answers sent with the first request, beside keys
    # the server never asks, complete the call; the unknown keys are ignored.
    with trio.fail_after(5):
        async with clients(None) as (client,):
            done = (
                await client.call(
                    inputResponses={
                        "name": accept("Alice"),
                        "surname": accept("Liddell"),
                        "unknown": accept("Eve"),
                    }
                )
            )["result"]
            partial = (
                await client.call(inputResponses={"name": accept("Alice"), "unknown": accept("E")})
            )["result"]
    assert done["resultType"] == "complete"
    assert done["content"][0]["text"] == "nobody: Alice Liddell"
    # Only "name" was given: "surname" is asked, and the state seals "name" alone.
    assert partial["resultType"] == "input_required"
    assert list(partial["inputRequests"]) == ["surname"]


async def test_unknown_keys_are_not_sealed_into_the_state() -> None:
    junk = {f"junk-{n}": {"action": "accept", "content": {"x": "y" * 1000}} for n in range(20)}
    with trio.fail_after(5):
        async with clients(None) as (client,):
            first = (await client.call())["result"]
            second = (
                await client.call(
                    inputResponses={"name": accept("Alice"), **junk},
                    requestState=first["requestState"],
                )
            )["result"]
    assert list(second["inputRequests"]) == ["surname"]
    # 20 kB of unknown answers would be sealed (and echoed) whole: the state stays small.
    assert len(second["requestState"]) < 1000


async def test_an_answer_that_does_not_fit_is_asked_again_not_sealed() -> None:
    with trio.fail_after(5):
        async with clients(None) as (client,):
            first = (await client.call())["result"]
            again = (
                await client.call(
                    inputResponses={"name": {"action": "bogus"}},
                    requestState=first["requestState"],
                )
            )["result"]
            second = (
                await client.call(
                    inputResponses={"name": accept("Alice")}, requestState=again["requestState"]
                )
            )["result"]
            last = await client.call(
                inputResponses={"surname": accept("Liddell")}, requestState=second["requestState"]
            )
    assert list(again["inputRequests"]) == ["name"]
    assert list(second["inputRequests"]) == ["surname"]
    assert last["result"]["content"][0]["text"] == "nobody: Alice Liddell"
