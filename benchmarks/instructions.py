"""Instructions per call (callgrind) of mcptrio in two checkouts: the deterministic CPU check.

::

    python benchmarks/instructions.py OLD_CHECKOUT NEW_CHECKOUT [--cells ...] [--small N]
                                      [--large N]

Wall-clock figures on a shared machine drift by more than the changes they are meant to judge;
instruction counts do not. Each cell is run under ``valgrind --tool=callgrind`` twice per
checkout, with ``--small`` and with ``--large`` units of work, and the figure is the difference
over the difference in units, so start-up and import cancel out::

    instructions per unit = (Ir(large) - Ir(small)) / (large - small)

The cells (each checkout's own ``mcptrio`` and ``benchmarks/servers/mcptrio_server.py``):

- ``memory-call-x1``: in memory, one caller, the benchmark's ``call`` (tools/call ``add``);
  client and server in the measured process.
- ``memory-call-x100``: the same with 100 concurrent callers on one session (a unit: 100 calls).
- ``memory-session``: in memory, a session opened, 20 calls, closed (the ``s100x20`` shape).
- ``stdio-call``: the stdio server process alone (it runs under callgrind, the client outside).
- ``http-call``: the Streamable HTTP server process alone (JSON answers), one session, calls
  over one keep-alive connection from a raw-socket client.
- ``http-call-stateless``: the same server and client, each call a stateless-era POST (revision
  2026-07-28: no session, the client's ``_meta`` in the params, the era's routing headers), the
  bytes the HTTP benchmark's ``stateless.lua`` sends. Against ``http-call``, in the same
  checkout: the stateless era's CPU per call over the handshake era's (issue 42, item 2).
- ``http-session``: the same server, sessions opened (``initialize`` + ``initialized``).

It prints a Markdown table: instructions per unit in each checkout, and NEW / OLD.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CELLS = (
    "memory-call-x1",
    "memory-call-x100",
    "memory-session",
    "stdio-call",
    "http-call",
    "http-call-stateless",
    "http-session",
)
_CALL = {"name": "add", "arguments": {"a": 1, "b": 2}}


# ------------------------------------------------------------------ the measured side


async def _memory(cell: str, units: int) -> None:
    import trio

    import mcptrio
    from benchmarks.servers.mcptrio_server import build_server

    server = build_server()
    if cell == "memory-session":
        for _ in range(units):
            async with mcptrio.open_client(server) as client:
                for _ in range(20):
                    await client.call_tool("add", {"a": 1, "b": 2})
        return
    callers = 100 if cell == "memory-call-x100" else 1
    async with mcptrio.open_client(server) as client:

        async def caller() -> None:
            for _ in range(units):
                await client.call_tool("add", {"a": 1, "b": 2})

        async with trio.open_nursery() as nursery:
            for _ in range(callers):
                nursery.start_soon(caller)


def _run_stdio_client(checkout: Path, units: int, valgrind: list[str]) -> None:
    """Drive the stdio server (under callgrind) with ``units`` calls, line by line."""
    process = subprocess.Popen(
        [*valgrind, sys.executable, "-m", "benchmarks.servers.mcptrio_server"],
        cwd=checkout,
        env=_env(checkout),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None

    def ask(message: dict[str, object]) -> None:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()
        if "id" in message:
            process.stdout.readline()

    ask(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "instructions", "version": "1"},
            },
        }
    )
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for index in range(units):
        ask({"jsonrpc": "2.0", "id": index + 1, "method": "tools/call", "params": _CALL})
    process.stdin.close()
    process.wait(600)


def _http_post(sock: socket.socket, port: int, body: bytes, extra: str = "") -> tuple[str, bytes]:
    sock.sendall(
        (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\n{extra}"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        + body
    )
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
    while len(rest) < length:
        rest += sock.recv(65536)
    return head.decode("latin-1"), rest


def _open_http_session(sock: socket.socket, port: int) -> str:
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "instructions", "version": "1"},
        },
    }
    head, _ = _http_post(sock, port, json.dumps(initialize).encode())
    session_id = re.search(r"(?i)mcp-session-id: *(\S+)", head).group(1)  # type: ignore[union-attr]
    extra = f"Mcp-Session-Id: {session_id}\r\nMCP-Protocol-Version: 2025-06-18\r\n"
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    _http_post(sock, port, json.dumps(initialized).encode(), extra)
    return extra


def _stateless_call() -> tuple[dict[str, object], str]:
    """The params and the extra head lines of the benchmark's stateless-era ``call``."""
    from benchmarks.http.client import stateless_headers, stateless_params

    lines = "".join(f"{name}: {value}\r\n" for name, value in stateless_headers("call").items())
    return stateless_params("call"), lines


def _run_http_client(checkout: Path, cell: str, units: int, valgrind: list[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    command = [sys.executable, "-m", "benchmarks.capacity.server", "mcptrio", str(port), "2000"]
    process = subprocess.Popen(
        [*valgrind, *command],
        cwd=checkout,
        env=_env(checkout),
        stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 600
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=600)
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the HTTP server did not start") from None
                time.sleep(0.5)
        with sock:
            if cell == "http-call-stateless":
                params, extra = _stateless_call()
            else:
                params, extra = _CALL, _open_http_session(sock, port)
            for index in range(units):
                if cell == "http-session":
                    _open_http_session(sock, port)
                else:
                    body = {"jsonrpc": "2.0", "id": index + 1, "method": "tools/call"}
                    body["params"] = params
                    _http_post(sock, port, json.dumps(body).encode(), extra)
        process.send_signal(signal.SIGINT)
        process.wait(600)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


# ------------------------------------------------------------------ the measuring side


def _env(checkout: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(checkout)
    env["PYTHONHASHSEED"] = "0"
    return env


def _instructions(checkout: Path, cell: str, units: int) -> int:
    """Instructions callgrind counts for one run of ``cell`` with ``units`` units of work."""
    with tempfile.TemporaryDirectory(prefix="instructions-") as tmp:
        log = Path(tmp) / "callgrind.log"
        valgrind = [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            f"--log-file={log}",
        ]
        if cell.startswith("memory-"):
            subprocess.run(
                [*valgrind, sys.executable, __file__, "--run", cell, str(units)],
                cwd=checkout,
                env=_env(checkout),
                check=True,
            )
        elif cell == "stdio-call":
            _run_stdio_client(checkout, units, valgrind)
        else:
            _run_http_client(checkout, cell, units, valgrind)
        text = log.read_text()
    found = re.findall(r"Collected : (\d+)", text)
    if not found:
        raise RuntimeError(f"{cell}: no count in callgrind's log: {text[-400:]}")
    return int(found[-1])


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    # Run as a script, its own directory leads sys.path, where benchmarks/http would shadow the
    # standard library's http.
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    if argv[:1] == ["--run"]:
        import trio

        trio.run(_memory, argv[1], int(argv[2]))
        return
    parser = argparse.ArgumentParser(prog="python benchmarks/instructions.py")
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--cells", nargs="+", choices=CELLS, default=list(CELLS))
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=600)
    args = parser.parse_args(argv)
    rows = ["| cell | unit | old | new | new / old |", "|---|---|---:|---:|---:|"]
    for cell in args.cells:
        small, large = args.small, args.large
        if cell in ("memory-call-x100", "memory-session"):
            small, large = max(1, small // 20), max(2, large // 20)
        per: list[float] = []
        for checkout in (args.old, args.new):
            low = _instructions(checkout.resolve(), cell, small)
            high = _instructions(checkout.resolve(), cell, large)
            per.append((high - low) / (large - small))
            print(f"{cell} {checkout}: {per[-1]:,.0f} per unit", file=sys.stderr, flush=True)
        unit = {"memory-call-x100": "100 calls", "memory-session": "session + 20 calls"}.get(
            cell, "session" if cell == "http-session" else "call"
        )
        rows.append(f"| {cell} | {unit} | {per[0]:,.0f} | {per[1]:,.0f} | {per[1] / per[0]:.3f} |")
        print(rows[-1], file=sys.stderr, flush=True)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
