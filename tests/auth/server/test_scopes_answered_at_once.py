"""A scoped tool answered at once (no Context, no await) is refused or allowed exactly as a
Context-taking one (run in an actor) is, over HTTP (lone and in a
2025-03-26 batch) and WebSocket, and a Context-free eager tool still runs under the POST's
principal (seen through the logging bridge's current context)."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
import trio
from test_protected_server import call_body, open_batch_session

import mcptrio
from mcptrio.client.targets import websocket as websocket_target

from oauth_servers import IO_LIMIT, open_protected


def add_eager_tools(server: mcptrio.Server, seen: list[Any]) -> None:
    from mcptrio.server.logging_bridge import current_context

    @server.tool(scopes=["admin"])
    async def wipe() -> str:
        ctx = current_context.get()
        seen.append(None if ctx is None or ctx.principal is None else ctx.principal.subject)
        return "wiped"

    @server.tool
    async def plain_whoami() -> str:
        ctx = current_context.get()
        principal = None if ctx is None else ctx.principal
        seen.append(None if principal is None else principal.subject)
        return "nobody" if principal is None else principal.subject


async def test_an_eager_scoped_tool_in_a_batch_is_refused_as_the_context_taking_one() -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected, httpx2.AsyncClient() as client:
            seen: list[Any] = []
            add_eager_tools(protected.app.server, seen)
            headers = await open_batch_session(client, protected.url, protected.token())
            answer = await client.post(
                protected.url,
                # Two answered at once, and one (whoami takes a Context) in an actor.
                json=[call_body("plain_whoami", 2), call_body("wipe", 3), call_body("whoami", 4)],
                headers=headers,
            )
            assert answer.status_code == 200
            by_id = {item["id"]: item for item in answer.json()}
            assert by_id[2]["result"]["content"][0]["text"] == "alice"
            assert by_id[4]["result"]["content"][0]["text"] == "alice"
            assert by_id[3]["error"]["code"] == -32600
            assert by_id[3]["error"]["data"] == {"error": "insufficient_scope", "scope": "admin"}
            # Lone, over the POST's own task: the endpoint answers 403 for both.
            for name in ("wipe", "reset"):
                lone = await client.post(protected.url, json=call_body(name, 9), headers=headers)
                assert lone.status_code == 403
            lone = await client.post(
                protected.url, json=call_body("plain_whoami", 10), headers=headers
            )
            assert lone.status_code == 200 and "alice" in lone.text
            assert seen == ["alice", "alice"]


@pytest.mark.parametrize("scopes", [("mcp",), ("mcp", "admin")])
async def test_over_websocket_an_eager_scoped_tool_checks_scopes(scopes: tuple[str, ...]) -> None:
    with trio.fail_after(IO_LIMIT):
        async with open_protected() as protected:
            seen: list[Any] = []
            add_eager_tools(protected.app.server, seen)
            ws_url = protected.url.replace("http://", "ws://", 1)
            token = protected.token("wendy", scopes=scopes)
            target = websocket_target(ws_url, headers={"Authorization": f"Bearer {token}"})
            async with mcptrio.open_client(target) as client:
                result = await client.call_tool("plain_whoami", {})
                assert result.content[0].text == "wendy"  # type: ignore[union-attr]
                if "admin" in scopes:
                    result = await client.call_tool("wipe", {})
                    assert result.content[0].text == "wiped"  # type: ignore[union-attr]
                else:
                    with pytest.raises(mcptrio.InvalidRequest) as refused:
                        await client.call_tool("wipe", {})
                    assert refused.value.data == {"error": "insufficient_scope", "scope": "admin"}
            assert seen == (["wendy", "wendy"] if "admin" in scopes else ["wendy"])
