"""A soak: a long run of calls on one stdio session, whose server's memory must stay flat.

64 callers share the calls; the server's resident set is read once a tenth of them are done
(warm: caches filled, actors parked) and at the end. Flat means the end is within 10% (plus
2 MB) of the warm figure.
"""

from __future__ import annotations

import time
from typing import Any

import trio

import mcptrio
from mcptrio.transports.stdio import StdioTransport

from .harness import open_server, peak_rss_mb

CALLERS = 64


async def soak(calls: int) -> dict[str, Any]:
    async with open_server("stdio") as child:
        process = child.process
        assert process.stdout is not None and process.stdin is not None
        done = 0
        warm_mb = 0.0
        started = time.monotonic()
        async with mcptrio.open_client(StdioTransport(process.stdout, process.stdin)) as client:

            async def caller(share: int) -> None:
                nonlocal done, warm_mb
                for _ in range(share):
                    result = await client.call_tool("add", {"a": 1, "b": 2})
                    assert not result.is_error
                    done += 1
                    if done == calls // 10:
                        warm_mb = peak_rss_mb(process.pid, "VmRSS")

            async with trio.open_nursery() as nursery:
                for index in range(CALLERS):
                    nursery.start_soon(caller, calls // CALLERS + (index < calls % CALLERS))
            end_mb = peak_rss_mb(process.pid, "VmRSS")
        elapsed = time.monotonic() - started
        child.sample()
        return {
            "calls": done,
            "calls_per_s": round(done / elapsed),
            "rss_warm_mb": round(warm_mb, 1),
            "rss_end_mb": round(end_mb, 1),
            "peak_rss_mb": round(child.peak_mb, 1),
            "holds": done == calls and end_mb <= warm_mb * 1.1 + 2,
        }


async def soak_attack(short: bool) -> dict[str, Any]:
    """1,000,000 calls on one stdio session (5,000 in the short run), RSS flat."""
    return await soak(5_000 if short else 1_000_000)
