"""Python calls per Streamable HTTP call in the server, by layer: the count that does not drift.

::

    python -m benchmarks.http_calls_per_request [--era handshake|stateless] [--calls N] [--top N]

The benchmark server (``benchmarks/servers/mcptrio_server.py``) serves JSON answers on loopback
with the built-in front end, in this process; a client in a thread of its own sends ``tools/call
add`` POSTs one after the other on one keep-alive connection (a session opened first in the
handshake era; every request carrying its ``_meta`` in the stateless era). After 300 calls of
warm-up, a profile hook (``sys.setprofile``, on the Trio thread only: the client is not counted)
counts every Python function called while the next ``--calls`` are served. It prints the calls
per request, by layer of mcptrio (the engine, the endpoints, runtime, protocol, server), Trio
and the rest, then the functions called most.

The Trio layer includes the waits for the client's next request: a read that finds the request
already there costs fewer calls than one that has to wait, so that line moves a little from
run to run; the others do not. Wall-clock figures under the hook mean nothing and are not given.
"""

from __future__ import annotations

import argparse
import collections
import json
import socket
import sys
import threading
from collections.abc import Callable
from functools import partial
from types import FrameType
from typing import Any

import trio

from benchmarks.instructions import _http_post, _open_http_session
from benchmarks.servers.mcptrio_server import build_server

_CALL = {"name": "add", "arguments": {"a": 1, "b": 2}}
_WARM_UP = 300
_STATELESS_HEADERS = (
    "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: add\r\n"
)
_STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "count", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}

Key = tuple[str, int, str]


def _client(
    port: int, era: str, calls: int, start: Callable[[], None], stop: Callable[[], None]
) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        params: dict[str, Any] = dict(_CALL)
        if era == "handshake":
            extra = _open_http_session(sock, port)
        else:
            extra = _STATELESS_HEADERS
            params["_meta"] = _STATELESS_META
        for index in range(_WARM_UP + calls):
            if index == _WARM_UP:
                start()
            body = {"jsonrpc": "2.0", "id": index + 1, "method": "tools/call", "params": params}
            head, answer = _http_post(sock, port, json.dumps(body).encode(), extra)
            if b'"result"' not in answer:
                raise RuntimeError(f"not a result: {head} {answer[:300]!r}")
        stop()


def _layer(filename: str) -> str:
    if "/mcptrio/" in filename:
        parts = filename.split("/mcptrio/", 1)[1].removesuffix(".py").split("/")
        return "/".join(parts[:3]) if parts[0] == "transports" else parts[0]
    if (
        "/trio/" in filename
        or "/outcome/" in filename
        or filename.endswith("collections/__init__.py")
    ):
        return "trio (scheduling, waits)"
    if "benchmarks/servers" in filename:
        return "the tool"
    return "other"


async def _serve_and_count(era: str, calls: int) -> collections.Counter[Key]:
    counts: collections.Counter[Key] = collections.Counter()

    def hook(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            code = frame.f_code
            counts[(code.co_filename, code.co_firstlineno, code.co_name)] += 1

    server = build_server()
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(server.serve_http, "127.0.0.1", 0, json_response=True))
        port = int(str(url).rsplit(":", 1)[1].split("/")[0])
        token = trio.lowlevel.current_trio_token()
        done = threading.Event()

        # Set and cleared in the Trio thread, between two task steps, before the client goes
        # on: the window holds exactly the requests sent between the two.
        def start() -> None:
            trio.from_thread.run_sync(sys.setprofile, hook, trio_token=token)

        def stop() -> None:
            trio.from_thread.run_sync(sys.setprofile, None, trio_token=token)

        def client() -> None:
            try:
                _client(port, era, calls, start, stop)
            finally:
                done.set()

        thread = threading.Thread(target=client)
        thread.start()
        await trio.to_thread.run_sync(done.wait)
        thread.join()
        nursery.cancel_scope.cancel()
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.http_calls_per_request")
    parser.add_argument("--era", choices=("handshake", "stateless"), default="handshake")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--top", type=int, default=0, help="also list the N functions most called")
    args = parser.parse_args(argv)
    counts = trio.run(_serve_and_count, args.era, args.calls)
    per = args.calls
    layers: collections.Counter[str] = collections.Counter()
    for (filename, _, _), count in counts.items():
        layers[_layer(filename)] += count
    print(f"{args.era} era, {per} calls: {sum(counts.values()) / per:.1f} Python calls per call")
    print("| layer | calls per call |\n|---|---:|")
    for layer, count in layers.most_common():
        print(f"| {layer} | {count / per:.1f} |")
    for (filename, line, name), count in counts.most_common(args.top):
        print(f"{count / per:6.2f}  {filename.rsplit('/mcptrio/', 1)[-1]}:{line} {name}")


if __name__ == "__main__":
    main()
