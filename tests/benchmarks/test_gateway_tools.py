"""The gateway tools benchmark runs against its real upstreams and reports every mode."""

from __future__ import annotations

import trio
from client.real_servers import EVERYTHING_SERVER, NODE_BIN, require_interop

from benchmarks.gateway_tools import NPM, run

require_interop(
    EVERYTHING_SERVER,
    NODE_BIN / "node",
    NPM / "server-filesystem" / "dist" / "index.js",
    NPM / "server-memory" / "dist" / "index.js",
)


async def test_the_benchmark_lists_every_mode_and_times_both_paths() -> None:
    with trio.fail_after(120):
        report = await run(calls=3, rounds=2)
    modes = report["modes"]
    assert modes["pass-through"]["tools_listed"] == modes["pass-through"]["upstream_tools"] == 90
    assert modes["search"]["tools_listed"] == 2
    assert 2 < modes["toolsets"]["tools_listed"] < 90
    for mode in modes.values():
        assert mode["tokens_estimated"] == mode["bytes"] // 4
    assert report["search_share_of_pass_through"] <= 0.05
    assert report["latency_ms"]["direct_through_gateway"] > 0
    assert report["latency_ms"]["through_call_tool"] > 0
