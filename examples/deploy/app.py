"""The server the deployment samples serve: ``examples/deploy/`` builds it into an image.

Replace it with your own: the image runs ``mcptrio run app.py`` (see ``Dockerfile``), so any
file holding an ``mcptrio.Server`` works. This one answers from whichever worker and machine
took the request, which shows the balancing and the workers at work::

    mcptrio call http://localhost:8000/mcp where
"""

from __future__ import annotations

import os
import socket

import trio

import mcptrio

server = mcptrio.Server(
    "deployed", "1.0.0", instructions="Adds numbers, and says which worker answered."
)


@server.tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
async def where() -> str:
    """The machine (container or pod) and the worker that answered this call."""
    worker = os.environ.get("MCPTRIO_WORKER_ID", "single process")
    return f"{socket.gethostname()}, worker {worker}"


@server.tool
async def wait(seconds: float = 1.0) -> str:
    """Sleep, then answer: a call to stop a server in the middle of (it is answered within
    the server's --grace)."""
    await trio.sleep(seconds)
    return f"waited {seconds:g} s"
