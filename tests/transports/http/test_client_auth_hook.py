"""The HTTP client transports' auth hook: headers on every request, bounded re-sends."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import trio

from mcptrio.transports.http.client.auth_hook import MAX_ATTEMPTS, AuthorizedRequests, HttpAuth
from mcptrio.transports.http.engine.builtin_server import serve_builtin
from mcptrio.transports.http.engine.client_pool import HttpClientPool
from mcptrio.transports.http.engine.exchange import HttpRequest, HttpResponder, header


class Refusing:
    """An HTTP app that refuses every request, and remembers the Authorization it saw."""

    def __init__(self) -> None:
        self.seen: list[bytes | None] = []

    async def handle_http(self, request: HttpRequest, responder: HttpResponder) -> None:
        self.seen.append(header(request.headers, b"authorization"))
        await responder.send_response(401, [(b"www-authenticate", b"Bearer")], b"no")

    async def handle_websocket(self, request: HttpRequest, peer: object) -> None:
        raise AssertionError("no websocket here")


class AlwaysAgain:
    """An auth component that always asks for the request to be sent again."""

    def __init__(self) -> None:
        self.attempts: list[int] = []

    async def headers(self, method: str, url: str) -> list[tuple[str, str]]:
        await trio.lowlevel.checkpoint()
        return [("authorization", f"Bearer try-{len(self.attempts)}")]

    async def on_response(
        self,
        method: str,
        url: str,
        status: int,
        headers: Sequence[tuple[bytes, bytes]],
        sent: Sequence[tuple[str, str]],
        attempt: int,
    ) -> bool:
        await trio.lowlevel.checkpoint()
        self.attempts.append(attempt)
        return True


async def test_a_refused_request_is_sent_again_with_fresh_headers_a_bounded_number_of_times() -> (
    None
):
    app = Refusing()
    auth = AlwaysAgain()
    assert isinstance(auth, HttpAuth)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(partial(serve_builtin, app))
            pool = HttpClientPool()
            async with AuthorizedRequests(pool, auth).request("POST", url, body=b"{}") as answer:
                assert answer.status == 401
            await pool.aclose()
            nursery.cancel_scope.cancel()
    assert auth.attempts == list(range(1, MAX_ATTEMPTS))
    assert app.seen == [f"Bearer try-{n}".encode() for n in range(MAX_ATTEMPTS)]
