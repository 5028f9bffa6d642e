"""Running a marked call at most once, on any worker: :func:`run_once`.

A ``tools/call`` whose ``_meta`` holds a call key (:mod:`mcptrio.protocol.call_key`), to a
server whose stores keep call records (:class:`~mcptrio.stores.call_records.CallRecords`, in
the bundle of :func:`mcptrio.open_stores`), is claimed under that key before the tool runs. A
request that finds the key claimed is a re-issue of the same call, and never runs the tool:

- the first run finished: it gets that run's answer (its result, or its error answer), under
  its own id;
- the first run is still going, on this worker or another: it waits for it, then as above;
- the first run was cancelled before it finished (its client closed the stream), or its worker
  died (its lease lapsed), or its answer was too large to keep: it gets
  :class:`CallOutcomeUnknown`, an error answer (-32603) saying so.

A tool declared ``readOnlyHint`` or ``idempotentHint`` is run every time, as are calls without a
key (every client but mcptrio's). An input-required result (2026-07-28) is not an outcome: the
key is released, so that the retry carrying the answers runs the tool. Keys are scoped to the
principal that sent them, so one client's key never reaches another's answer.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import outcome
import trio

from ..protocol.base import Result
from ..protocol.errors import INTERNAL_ERROR, InternalError, McpError
from ..protocol.types import CallToolResult, Tool
from ..stores.call_records import (
    ANSWERED,
    INTERRUPTED,
    LAPSED,
    REFUSED,
    RUNNING,
    TOO_LARGE,
    CallRecords,
)
from ..stores.errors import StoreUnavailable
from .input_rounds import InputRequired

__all__ = ["CallOutcomeUnknown", "record_key", "run_once", "runs_every_time"]

log = logging.getLogger("mcptrio.server")


class CallOutcomeUnknown(InternalError):
    """A re-issued call whose first run left no outcome: it may or may not have done
    its work (its worker died, it was cancelled, or its answer was too large to keep)."""


class _Refusal(msgspec.Struct):
    code: int
    message: str
    data: Any = None


_refusal = msgspec.json.Decoder(_Refusal)
_answer = msgspec.json.Decoder(CallToolResult)


def runs_every_time(tool: Tool) -> bool:
    """Whether ``tool`` says a second run does no harm (``readOnlyHint``, ``idempotentHint``)."""
    hints = tool.annotations
    return hints is not None and bool(hints.read_only_hint or hints.idempotent_hint)


def record_key(key: str, subject: str | None) -> str:
    """The key of the record of call ``key`` sent by ``subject`` (hashed: a fixed-length store
    key, with no principal's name in it)."""
    return hashlib.sha256(f"{subject or ''}\x00{key}".encode()).hexdigest()


async def run_once(
    records: CallRecords,
    key: str,
    subject: str | None,
    name: str,
    run: Callable[[], Awaitable[Result]],
) -> Result:
    """``run()``'s result, or the first run's outcome for the call marked ``key`` (sent by
    ``subject``; ``name`` is the tool's, for messages)."""
    scoped = record_key(key, subject)
    while True:
        record = await records.claim(scoped)
        if record is None:
            return await _run_claimed(records, scoped, name, run)
        if record == RUNNING:
            record = await records.wait(scoped)
            if record is None:
                # The first run left nothing to keep (an input-required round): claim again.
                continue
        return _outcome_of(record, name, key)


async def _run_claimed(
    records: CallRecords, scoped: str, name: str, run: Callable[[], Awaitable[Result]]
) -> Result:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_keep_lease, records, scoped)
        # Captured, so that the tool's own exception leaves this nursery as itself.
        ran = await outcome.acapture(run)
        nursery.cancel_scope.cancel()
    with trio.CancelScope(shield=True), trio.move_on_after(5):
        await _settle(records, scoped, name, ran, records.max_answer_bytes)
    return ran.unwrap()


async def _keep_lease(records: CallRecords, scoped: str) -> None:
    interval = records.lease / 3
    if interval == float("inf"):
        return
    while True:
        await trio.sleep(interval)
        try:
            await records.renew(scoped)
        except StoreUnavailable as exc:
            # The call runs on; if the store stays away past the lease, a re-issue will be told
            # that its outcome is unknown, which is true.
            log.warning("the lease of a running call was not renewed: %s", exc.message)


async def _settle(
    records: CallRecords, scoped: str, name: str, ran: outcome.Outcome[Result], limit: int
) -> None:
    if isinstance(ran, outcome.Value):
        if not isinstance(ran.value, CallToolResult):
            # An input-required result (or a task): not an outcome; the retry runs the tool.
            await records.release(scoped)
            return
        answer = msgspec.json.encode(ran.value)
        if len(answer) > limit:
            await records.settle(scoped, TOO_LARGE + str(len(answer)).encode())
        else:
            await records.settle(scoped, ANSWERED + answer)
        return
    if not isinstance(ran, outcome.Error):
        return
    error = ran.error
    if isinstance(error, InputRequired):
        # The round asks for input (2026-07-28): not an outcome; the round with the answers runs.
        await records.release(scoped)
        return
    if not isinstance(error, Exception):
        # Cancelled (the client closed the stream, the server shut down) or stopped mid-run.
        log.warning("tools/call %r stopped mid-run: its outcome is unknown", name)
        await records.settle(scoped, INTERRUPTED)
        return
    if isinstance(error, McpError):
        refusal = _Refusal(error.code, error.message, error.data)
    else:
        # What the request's lifecycle answers for any other exception.
        refusal = _Refusal(INTERNAL_ERROR, f"{type(error).__name__}: {error}")
    await records.settle(scoped, REFUSED + msgspec.json.encode(refusal))


def _outcome_of(record: bytes, name: str, key: str) -> Result:
    """The answer a re-issue gets from the first run's ``record``."""
    kind, body = record[:1], record[1:]
    if kind == ANSWERED:
        return _answer.decode(body)
    if kind == REFUSED:
        refusal = _refusal.decode(body)
        raise McpError.from_wire(refusal.code, refusal.message, refusal.data)
    why = {
        LAPSED: "the worker running it stopped before it finished",
        INTERRUPTED: "its first run was cancelled before it finished",
        TOO_LARGE: f"it ran, and its answer ({body.decode()} bytes) was too large to keep",
    }.get(kind, "its first run left no record that can be read")
    raise CallOutcomeUnknown(
        f"The outcome of tools/call {name!r} is unknown: {why} (call key {key!r});"
        " it was not run again"
    )
