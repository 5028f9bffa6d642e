"""A server whose one tool says which worker answered: for ``run --workers N`` tests.

With ``WORKER_SERVER_CRASH`` set, every worker fails as it loads (the supervisor, which loads the
file without ``MCPTRIO_WORKER_ID``, does not): a crash loop; with ``WORKER_SERVER_SLOW_START``
set to seconds, every worker takes that long to load. With ``WORKER_SERVER_CALL_LOG`` set
to a file, each call writes a line to it as it starts (a test knows which calls are in flight).
Its resource ``worker://news`` can be subscribed to; the tool ``announce`` tells every worker's
subscribers that it changed.
"""

from __future__ import annotations

import os
import time

import trio

import mcptrio

if os.environ.get("MCPTRIO_WORKER_ID") and os.environ.get("WORKER_SERVER_CRASH"):
    raise SystemExit("this worker crashes on purpose")
if os.environ.get("MCPTRIO_WORKER_ID") and os.environ.get("WORKER_SERVER_SLOW_START"):
    time.sleep(float(os.environ["WORKER_SERVER_SLOW_START"]))

server = mcptrio.Server("worker-server")


@server.tool()
async def whoami(delay: float = 0.0) -> str:
    """``ID PID`` of the worker process answering, after ``delay`` seconds."""
    log = os.environ.get("WORKER_SERVER_CALL_LOG")
    if log:
        async with await trio.open_file(log, "a") as started:
            await started.write("started\n")
    await trio.sleep(delay)
    return f"{os.environ.get('MCPTRIO_WORKER_ID', '')} {os.getpid()}"


@server.resource("worker://news")
def news() -> str:
    """Nothing new: a resource to subscribe to."""
    return "news"


@server.tool()
def announce() -> str:
    """Tell the subscribers of ``worker://news``, on every worker, that it changed."""
    server.notify_resource_updated("worker://news")
    return "announced"
