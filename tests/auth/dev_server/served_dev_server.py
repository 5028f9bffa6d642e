"""The development authorization server served on loopback, with an HTTP client pointed at it,
for the dev server's tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import trio

from mcptrio.auth.dev_server import DevAuthorizationServer


@asynccontextmanager
async def dev_server(
    **options: Any,
) -> AsyncIterator[tuple[DevAuthorizationServer, httpx2.AsyncClient]]:
    """``DevAuthorizationServer(**options)``, serving for the block, and a client of it that
    follows no redirects."""
    auth = DevAuthorizationServer(**options)
    async with trio.open_nursery() as nursery:
        issuer = await nursery.start(auth.serve)
        async with httpx2.AsyncClient(base_url=issuer, follow_redirects=False) as client:
            try:
                yield auth, client
            finally:
                nursery.cancel_scope.cancel()
