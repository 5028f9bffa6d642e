"""Finding and starting the real MCP peers (Node packages, the official SDK) the client tests use.

The Node packages come from ``interop/`` (``npm ci --prefix interop``, which ``.ci/run`` does).
Without them a test module calls :func:`require_interop`, which skips the module with the
reason printed, unless ``MCPTRIO_REQUIRE_INTEROP=1`` (set by CI) makes the absence a failure.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

ROOT = Path(__file__).resolve().parents[2]
INTEROP = ROOT / "interop"
NODE_BIN = INTEROP / "node_modules" / ".bin"
EVERYTHING_SERVER = (
    INTEROP / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)
#: Keeps every listener a Node process opens on 127.0.0.1.
LOCALHOST_ONLY = INTEROP / "localhost-only.cjs"


def require_interop(*paths: Path) -> None:
    """Skip the calling test module unless every path exists (fail under CI instead)."""
    missing = [str(path) for path in paths if not path.exists()]
    if not missing:
        return
    reason = f"{', '.join(missing)} missing: run `npm ci --prefix interop`"
    if os.environ.get("MCPTRIO_REQUIRE_INTEROP") == "1":
        raise RuntimeError(reason)
    print(f"skipping: {reason}", file=sys.stderr)
    pytest.skip(reason, allow_module_level=True)


def node() -> str:
    """The Node 22 binary from ``interop/`` (the system one may be older)."""
    return str(NODE_BIN / "node")


def node_env(**extra: str) -> dict[str, str]:
    """The environment for a Node process: Node 22 first on PATH, loopback-only listeners."""
    return {
        **os.environ,
        "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "NODE_OPTIONS": f"--require {LOCALHOST_ONLY}",
        **extra,
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def wait_for_port(port: int, process: trio.Process, timeout: float = 30.0) -> None:
    """Wait until something accepts connections on 127.0.0.1:``port``.

    Raises if ``process`` exits first or ``timeout`` passes.
    """
    with trio.fail_after(timeout):
        while True:
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
            except OSError:
                if process.returncode is not None:
                    raise RuntimeError(
                        f"the server exited with {process.returncode} before listening"
                    ) from None
                await trio.sleep(0.05)
            else:
                await stream.aclose()
                return


@asynccontextmanager
async def run_http_server(
    command: Sequence[str], port: int, *, env: Mapping[str, str] | None = None
) -> AsyncIterator[trio.Process]:
    """Run ``command`` (an HTTP server that will listen on ``port``) for the block.

    The process is terminated (killed after 5 s) when the block ends.
    """
    process = await trio.lowlevel.open_process(
        list(command),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        env=dict(env) if env is not None else None,
        cwd=str(ROOT),
    )
    try:
        await wait_for_port(port, process)
        yield process
    finally:
        with trio.CancelScope(shield=True):
            process.terminate()
            with trio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
