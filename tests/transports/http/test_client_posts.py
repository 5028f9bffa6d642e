"""The HTTP client transports' POST scheduler once the transport has closed.

A frame the session's writer hands over while the transport closes must end the writer with
``trio.ClosedResourceError`` (which ends the session quietly), never with trio's "Nursery is
closed to new arrivals" ``RuntimeError``, which used to escape ``open_client`` in place of the
block's own error.
"""

from __future__ import annotations

import pytest
import trio

import mcptrio
from mcptrio.transports.http.client.messages import OutgoingInfo
from mcptrio.transports.http.client.posts import PostScheduler
from mcptrio.transports.http.serve import serve_http


async def _never_posted(data: bytes, info: OutgoingInfo) -> None:
    raise AssertionError("nothing may be posted once the transport closed")


async def test_scheduling_after_the_transport_closed_raises_closed_resource_error() -> None:
    async with trio.open_nursery() as tasks:
        scheduler = PostScheduler(tasks, _never_posted, max_concurrent_posts=1)
        tasks.cancel_scope.cancel()
    info = OutgoingInfo(request_ids=(), method="notifications/initialized")
    with pytest.raises(trio.ClosedResourceError):
        await scheduler.schedule(b"{}", info)
    # The slot was given back.
    with pytest.raises(trio.ClosedResourceError):
        await scheduler.schedule(b"{}", info)


class _Boom(Exception):
    pass


async def test_an_error_raised_right_after_connecting_over_http_leaves_open_client_unchanged() -> (
    None
):
    # Raising with no checkpoint after the handshake leaves notifications/initialized with the
    # writer while the transport closes: the race this guards against.
    server = mcptrio.Server("posts")
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_http, server)
            for _ in range(10):
                with pytest.raises(_Boom):
                    async with mcptrio.open_client(url + "/mcp"):
                        raise _Boom
            nursery.cancel_scope.cancel()
