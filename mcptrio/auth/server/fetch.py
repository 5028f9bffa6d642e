"""Fetching the JSON document a verifier needs (a key set, an introspection answer): one way,
with a deadline, a size limit, and every failure a :class:`VerifierUnavailable` (answered 503:
the verifier cannot decide, which is not the client's fault)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import trio

from ...transports.http.engine.client_pool import HttpClientPool, HttpError
from .verifier import VerifierUnavailable

__all__ = ["fetch_json"]


async def fetch_json(
    http: HttpClientPool,
    method: str,
    url: str,
    *,
    what: str,
    headers: Sequence[tuple[str | bytes, str | bytes]] = (),
    body: bytes = b"",
    timeout: float,
    max_size: int,
) -> Any:
    """The JSON document ``method url`` answers with 200; ``what`` names it in the errors."""
    with trio.move_on_after(timeout) as deadline:
        try:
            async with http.request(method, url, headers=list(headers), body=body) as answer:
                status = answer.status
                data = await answer.read(max_size)
        except HttpError as exc:
            raise VerifierUnavailable(f"{what} from {url} failed: {exc}") from None
    if deadline.cancelled_caught:
        raise VerifierUnavailable(f"{what} from {url} took over {timeout}s")
    if status != 200:
        raise VerifierUnavailable(f"{what} from {url} answered {status}")
    if data is None:
        raise VerifierUnavailable(f"{what} from {url} is over {max_size} bytes")
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        raise VerifierUnavailable(f"{what} from {url} is not JSON") from None
