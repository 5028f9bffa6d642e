"""The well-behaved client, in a process of its own: ``python -m stress.probe URL SECONDS``.

Run apart from the attacker, so that what it measures is the server and not the attacker's own
load on the process it would share; prints its summary (:meth:`ProbeResult.summary`) as JSON.
"""

from __future__ import annotations

import json
import sys

import trio

from .harness import ServerChild, probe_http


async def main(url: str, seconds: float) -> None:
    stop = trio.Event()
    child = ServerChild(process=None, url=url)  # type: ignore[arg-type]
    async with trio.open_nursery() as nursery:

        async def stopper() -> None:
            await trio.sleep(seconds)
            stop.set()

        nursery.start_soon(stopper)
        result = await probe_http(child, stop)
    print(json.dumps(result.summary()), flush=True)


if __name__ == "__main__":
    trio.run(main, sys.argv[1], float(sys.argv[2]))
