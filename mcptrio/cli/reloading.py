"""Serving a server that restarts when its code changes (``mcptrio dev``, ``mcptrio run
--reload``): a supervisor process that runs the server as a child and starts it again.

The child is ``python -m mcptrio run ...`` (the server never runs in the supervisor, so a
change is read from a fresh interpreter, with no module left over from the last version). The
supervisor polls the watched folders (:mod:`.watching`) every :data:`POLL_INTERVAL` seconds;
when a ``.py`` file changes it says which, stops the child with SIGTERM (the child drains as
any ``mcptrio run`` does: calls in flight are answered, within its ``--grace``) and starts it
again, on the same port. A child that fails (the server does not load, say) has printed its
one-line error; the supervisor waits for the next change and starts it again, and never exits
for it.

The child runs in a session of its own, so that Ctrl-C in a terminal reaches the supervisor
only: each SIGINT or SIGTERM the supervisor gets is passed to the child as SIGTERM, the first
to drain it, a second to stop it at once, and the supervisor exits 0 once the child has. A
child still running :data:`KILL_AFTER` seconds past its grace is killed.

The child's stderr passes through the supervisor, which reads the ``Serving NAME over ... at
URL`` line in it (``on_serving``: ``mcptrio dev`` then prints the Inspector's command).
"""

from __future__ import annotations

import codecs
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Final

import trio

from .watching import Snapshot, changed_files, scan

__all__ = ["KILL_AFTER", "POLL_INTERVAL", "serve_reloading"]

#: Seconds between two scans of the watched folders.
POLL_INTERVAL: Final = 0.5
#: Seconds a stopped child is given past its own grace before it is killed.
KILL_AFTER: Final = 5.0


def serve_reloading(
    command: Sequence[str],
    folders: Sequence[Path],
    *,
    grace: float,
    on_serving: Callable[[str], None] | None = None,
) -> None:
    """Run ``command`` (an ``mcptrio run``) until SIGINT or SIGTERM, starting it again each
    time a ``.py`` file under ``folders`` changes (see the module docstring)."""
    trio.run(_Supervisor(command, folders, grace, on_serving).run)


class _Supervisor:
    def __init__(
        self,
        command: Sequence[str],
        folders: Sequence[Path],
        grace: float,
        on_serving: Callable[[str], None] | None,
    ) -> None:
        self.command = list(command)
        self.folders = list(folders)
        self.grace = grace
        self.on_serving = on_serving
        self.stop = trio.Event()
        self.child: trio.Process | None = None
        self.files: Snapshot = {}

    async def run(self) -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._pass_on_signals, signals)
                await self._serve()
                nursery.cancel_scope.cancel()

    async def _pass_on_signals(self, signals: AsyncIterator[int]) -> None:
        async for _ in signals:
            self.stop.set()
            if self.child is not None and self.child.returncode is None:
                self.child.send_signal(signal.SIGTERM)

    async def _serve(self) -> None:
        self.files = await trio.to_thread.run_sync(scan, self.folders)
        while not self.stop.is_set():
            async with trio.open_nursery() as nursery:
                child = await self._start(nursery)
                ended = await _first_of(child.wait, self._change, self.stop.wait)
                if ended == 0:
                    # It failed (its error is printed): the next change starts it again.
                    self.child = None
                    await _first_of(self._change, self.stop.wait)
                    continue
                if ended == 1:
                    child.send_signal(signal.SIGTERM)
                # Stopping (a signal was passed on, or a change): wait for it to drain.
                await self._wait_for_end(child)
                self.child = None

    async def _start(self, nursery: trio.Nursery) -> trio.Process:
        # A session of its own: Ctrl-C in the terminal reaches the supervisor only, which
        # passes it on once (POSIX; Windows ignores the option).
        child = await trio.lowlevel.open_process(
            self.command,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        assert child.stderr is not None
        self.child = child
        if self.stop.is_set():
            # A signal came while it started, and found no child to pass it on to.
            child.send_signal(signal.SIGTERM)
        nursery.start_soon(self._relay, child.stderr)
        return child

    async def _change(self) -> None:
        """Wait until a file under the folders changes from the last scan, and say which."""
        while True:
            await trio.sleep(POLL_INTERVAL)
            now = await trio.to_thread.run_sync(scan, self.folders)
            changed = changed_files(self.files, now)
            self.files = now
            if changed:
                more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
                line = f"mcptrio: {_shown(changed[0])}{more} changed: restarting"
                print(line, file=sys.stderr, flush=True)
                return

    async def _wait_for_end(self, child: trio.Process) -> None:
        with trio.move_on_after(self.grace + KILL_AFTER):
            await child.wait()
            return
        child.kill()
        await child.wait()

    async def _relay(self, stream: trio.abc.ReceiveStream) -> None:
        """Copy the child's stderr to ours, and report its ``Serving`` lines."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending = ""
        while data := await stream.receive_some():
            text = decoder.decode(data)
            sys.stderr.write(text)
            sys.stderr.flush()
            pending += text
            *lines, pending = pending.split("\n")
            for line in lines:
                if line.startswith("Serving ") and self.on_serving is not None:
                    self.on_serving(line.split()[-1])


async def _first_of(*waits: Callable[[], Awaitable[object]]) -> int:
    """Run ``waits`` until one returns; the index of the first that did."""
    winner = -1
    async with trio.open_nursery() as nursery:
        for index, wait in enumerate(waits):

            async def run(index: int = index, wait: Callable[[], Awaitable[object]] = wait) -> None:
                nonlocal winner
                await wait()
                if winner < 0:
                    winner = index
                nursery.cancel_scope.cancel()

            nursery.start_soon(run)
    return winner


def _shown(path: str) -> str:
    """``path`` from the current folder when it is under it."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path
