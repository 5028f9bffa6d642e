"""Where authorization plugs into the HTTP client transports: one small interface, one wrapper.

Both HTTP client transports (Streamable HTTP and the legacy HTTP+SSE one) send every request
through :class:`AuthorizedRequests` when they are given an :class:`HttpAuth`:

1. before each request, :meth:`HttpAuth.headers` adds what proves the client's identity (an
   ``Authorization`` header, and a ``DPoP`` proof where tokens are sender-constrained);
2. a ``401`` or ``403`` answer, or any answer carrying a ``DPoP-Nonce``, goes to
   :meth:`HttpAuth.on_response`, which may log in, refresh, step up or take the nonce. When it
   returns ``True`` the request is sent again with fresh headers (the body is given whole, so a
   request can always be sent twice); when ``False`` the answer goes to the transport as it is.

The number of attempts per request is bounded (:data:`MAX_ATTEMPTS`), so a server that keeps
refusing can never make the client loop. What the auth component raises (its errors are
:class:`~mcptrio.transports.http.engine.client_pool.HttpError`\\ s) reaches the transport as the
failure of that request: the JSON-RPC requests it carried fail with that very error.

The interface lives with the transports, so that they never import :mod:`mcptrio.auth` (which
imports them); :class:`mcptrio.auth.client.OAuthClient` is the implementation mcptrio ships.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..engine.client_pool import HttpClientPool, HttpResponse

__all__ = ["MAX_ATTEMPTS", "AuthorizedRequests", "HttpAuth", "Requests"]

#: Sends of one request at most: the first, a login, a DPoP nonce and a step-up.
MAX_ATTEMPTS = 4

Headers = Sequence[tuple[str | bytes, str | bytes]]


@runtime_checkable
class HttpAuth(Protocol):
    """What an HTTP client transport asks of an authorization component."""

    async def headers(self, method: str, url: str) -> list[tuple[str, str]]:
        """The headers that authorize a ``method`` request to ``url`` (none before a login)."""
        ...

    async def on_response(
        self,
        method: str,
        url: str,
        status: int,
        headers: Sequence[tuple[bytes, bytes]],
        sent: Sequence[tuple[str, str]],
        attempt: int,
    ) -> bool:
        """React to a ``401``/``403`` (or a ``DPoP-Nonce``) answering the ``attempt``-th send
        (from 1) of a request that carried ``sent`` (what :meth:`headers` gave it); ``True``:
        send the request again."""
        ...


def _wants_auth(response: HttpResponse) -> bool:
    return response.status in (401, 403) or response.header(b"dpop-nonce") is not None


@dataclass(frozen=True, slots=True, eq=False)
class AuthorizedRequests:
    """An ``HttpClientPool`` whose requests carry ``auth``'s headers and react to challenges."""

    pool: HttpClientPool
    auth: HttpAuth

    @asynccontextmanager
    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: Headers = (),
        body: bytes = b"",
        read_timeout: float | None = None,
    ) -> AsyncIterator[HttpResponse]:
        """As :meth:`HttpClientPool.request`, authorized (see the module's docstring)."""
        for attempt in range(1, MAX_ATTEMPTS + 1):
            extra = await self.auth.headers(method, url)
            async with self.pool.request(
                method, url, headers=[*headers, *extra], body=body, read_timeout=read_timeout
            ) as response:
                if _wants_auth(response) and attempt < MAX_ATTEMPTS:
                    # Held while the auth component works (a login may take a while): a refused
                    # answer's connection is closed on the way out, its body unread.
                    retry = await self.auth.on_response(
                        method, url, response.status, response.headers, extra, attempt
                    )
                    if retry and response.status in (401, 403):
                        continue
                yield response
                return


#: What the transports send their requests through: the pool itself, or the pool authorized.
Requests = HttpClientPool | AuthorizedRequests
