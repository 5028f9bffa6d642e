"""The payload sweep's floor: what the answer of a sweep workload costs to encode and decode.

For each ``read-*`` workload of ``matrix.SWEEP_SIZES`` the floor is msgspec encoding the very
JSON-RPC response the servers send (``{"jsonrpc": "2.0", "id": 1, "result": {"contents":
[{"uri", "mimeType", "text"}]}}`` with the workload's text) and decoding it back into typed
structs, in this process, with nothing else: no transport, no session, no request. A library
that carries the answer as JSON cannot do less per call; the report sets each library's time
per call beside it.

It is measured with the structs declared here, not mcptrio's, so that it is the same for every
library and no library's types are in it. Each figure is the best of several batches (the
least disturbed by other work on the machine), in µs per encode + decode.
"""

from __future__ import annotations

import time

import msgspec

from .matrix import FIXTURES, SWEEP_SIZES

__all__ = ["floor_us", "measure_floor"]

#: Seconds one batch of encode + decode takes, about; the best of ``_BATCHES`` is kept (many
#: short batches: on a busy machine the best of them is the least disturbed).
_BATCH_S = 0.005
_BATCHES = 20


class _Contents(msgspec.Struct):
    uri: str
    mimeType: str
    text: str


class _Result(msgspec.Struct):
    contents: list[_Contents]


class _Response(msgspec.Struct):
    jsonrpc: str
    id: int
    result: _Result


def _answer(workload: str) -> _Response:
    uri = FIXTURES[workload][1]["uri"]
    text = "y" * SWEEP_SIZES[workload]
    return _Response("2.0", 1, _Result([_Contents(uri, "text/plain", text)]))


def floor_us(workload: str, *, batches: int = _BATCHES, batch_s: float = _BATCH_S) -> float:
    """µs per msgspec encode + decode of ``workload``'s answer (best of ``batches``)."""
    message = _answer(workload)
    encode = msgspec.json.Encoder().encode
    decode = msgspec.json.Decoder(_Response).decode
    if decode(encode(message)) != message:
        raise AssertionError(f"the floor's round trip of {workload} changed the answer")
    # Calibrate the batch to about ``batch_s`` so that the clock's resolution does not matter.
    loops = 1
    while True:
        started = time.perf_counter()
        for _ in range(loops):
            decode(encode(message))
        took = time.perf_counter() - started
        if took >= batch_s / 4 or loops >= 1 << 20:
            break
        loops *= 4
    best = took / loops
    for _ in range(batches):
        started = time.perf_counter()
        for _ in range(loops):
            decode(encode(message))
        best = min(best, (time.perf_counter() - started) / loops)
    return best * 1e6


def measure_floor(workloads: tuple[str, ...] = tuple(SWEEP_SIZES)) -> dict[str, float]:
    """``floor_us`` of each sweep workload among ``workloads``."""
    return {w: round(floor_us(w), 2) for w in workloads if w in SWEEP_SIZES}
