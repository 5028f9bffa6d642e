"""The official Python SDK's ``Client`` calling ``charge`` over and over, for the chaos test
(tests/server/test_scale_out_chaos.py)::

    python sdk_ledger_client.py URL PREFIX SECONDS

In ``mode="auto"`` (it probes the stateless era first). Each call is ``charge`` with the name
``PREFIX-N``; one JSON line per call says how it ended: ``ok``, ``answered`` (a JSON-RPC error
answer: the server said it failed) or ``cut`` (no answer: the connection or stream failed, so
the call may have run). A client that fails is opened again.
"""

from __future__ import annotations

import json
import sys
import time

import anyio
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT


def report(call: str, outcome: str, error: str = "") -> None:
    print(json.dumps({"call": call, "outcome": outcome, "error": error[:300]}), flush=True)


async def main(url: str, prefix: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    number = 0
    while time.monotonic() < deadline:
        try:
            async with Client(url, mode="auto", read_timeout_seconds=30) as client:
                while time.monotonic() < deadline:
                    number += 1
                    call = f"{prefix}-{number}"
                    try:
                        result = await client.call_tool("charge", {"call": call, "delay": 0.2})
                    except MCPError as error:
                        if error.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):
                            # The SDK's own codes for "no answer came".
                            report(call, "cut", f"{error.code}: {error.message}")
                            raise
                        report(call, "answered", f"{error.code}: {error.message}")
                        continue
                    except BaseException as error:
                        # Also a cancellation: the client's task group ends the call when
                        # its connection fails, and raises the failure as it closes.
                        report(call, "cut", f"{type(error).__name__}: {error}")
                        raise
                    report(call, "answered" if result.is_error else "ok")
        except Exception:
            await anyio.sleep(0.2)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], float(sys.argv[3]))
