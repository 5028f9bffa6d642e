"""``python -m benchmarks.http_calls_per_request``: the count covers exactly the calls it says,
in the server only, in either era (no count is asserted: they change with the code)."""

from __future__ import annotations

import pytest
import trio

from benchmarks.http_calls_per_request import _layer, _serve_and_count


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_the_count_covers_each_call_once_and_every_layer_of_the_server(era: str) -> None:
    with trio.fail_after(60):
        counts = await _serve_and_count(era, 40)
    tool_calls = sum(
        n
        for (filename, _, name), n in counts.items()
        if name == "add" and filename.endswith("mcptrio_server.py")
    )
    assert tool_calls == 40
    layers = {_layer(filename) for filename, _, _ in counts}
    for layer in ("transports/http/engine", "transports/http/endpoints", "runtime", "server"):
        assert layer in layers
    # The client runs in a thread of its own, which the hook does not see.
    assert not any(name in ("_client", "_post") for _, _, name in counts)
