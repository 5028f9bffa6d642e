"""The payload sweep's floor: what the answer of a sweep workload costs to encode and decode.

For each ``read-*`` workload of ``matrix.SWEEP_SIZES`` the floor is encoding the very JSON-RPC
response the servers send (``{"jsonrpc": "2.0", "id": 1, "result": {"contents": [{"uri",
"mimeType", "text"}]}}`` with the workload's text) and decoding it back into typed structs with
msgspec, in this process, with nothing else: no transport, no session, no request. A library
that carries the answer as JSON cannot do less per call; the report sets each library's time
per call beside it.

The encoding is the cheaper of two: msgspec writing everything, or (when orjson is installed)
orjson writing the text, which it escapes 32 bytes at a time, spliced into msgspec's frame as
``msgspec.Raw``. The second is about five times cheaper for 100 KiB and dearer for 1 KiB; a
floor must be the least any library could pay, so each size takes the cheaper.

It is measured with the structs declared here, not mcptrio's, so that it is the same for every
library and no library's types are in it. Each figure is the best of several batches (the
least disturbed by other work on the machine), in µs per encode + decode.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import msgspec

from .matrix import FIXTURES, SWEEP_SIZES

try:
    import orjson
except ImportError:  # PyPy: msgspec writes the text
    orjson = None  # type: ignore[assignment]

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


def _encoders() -> list[Callable[[_Response], bytes]]:
    """The two ways of encoding an answer (one without orjson)."""
    encode = msgspec.json.Encoder().encode
    if orjson is None:
        return [encode]
    dumps = orjson.dumps

    def encode_text_with_orjson(message: _Response) -> bytes:
        contents = message.result.contents[0]
        text = msgspec.Raw(dumps(contents.text))
        spliced = _Contents(contents.uri, contents.mimeType, text)  # type: ignore[arg-type]
        return encode(_Response(message.jsonrpc, message.id, _Result([spliced])))

    return [encode, encode_text_with_orjson]


def floor_us(workload: str, *, batches: int = _BATCHES, batch_s: float = _BATCH_S) -> float:
    """µs per encode + decode of ``workload``'s answer (best of ``batches``, with the cheaper
    of the two encodings)."""
    return min(_round_trip_us(workload, encode, batches, batch_s) for encode in _encoders())


def _round_trip_us(
    workload: str, encode: Callable[[_Response], bytes], batches: int, batch_s: float
) -> float:
    message = _answer(workload)
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
