"""The server every check serves: :class:`SuiteServer`, a :class:`mcptrio.Server` whose tools
exercise one behaviour each, and the :class:`Witness` of what its handlers saw.

The checks observe the server only through what a user could: the answers their calls get,
the notifications and requests that reach the client, and what the handlers record in the
witness (that a handler started, that it was cancelled, how far it got). Each check makes a
fresh one, so nothing one check leaves behind reaches the next.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Any

import trio

from ...protocol.errors import RequestTimeout
from ...protocol.revisions import revision_of
from ...protocol.types import TextContent
from ...server import Server
from ...server.context import Context, Elicited

__all__ = ["SuiteServer", "Witness", "digest", "text_of_size"]

# Every kind of character a codec must carry: ASCII, JSON's escapes, two- to four-byte UTF-8.
_PATTERN = 'plain ASCII, "quoted", back\\slash, tab\t, newline\n, é ü ß, 中文, 😀; '
#: The JSON Schema of the elicitation the suite server asks for.
NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


def text_of_size(size: int, *, plain: bool = False) -> str:
    """``size`` characters of a fixed text: every kind of character JSON and UTF-8 make a codec
    treat differently, or only ``x`` (``plain``: as many bytes as characters)."""
    if plain:
        return "x" * size
    return (_PATTERN * (size // len(_PATTERN) + 1))[:size]


def digest(text: str) -> str:
    """What the ``measure`` tool answers for ``text``: its length and SHA-256."""
    return f"{len(text)} {hashlib.sha256(text.encode()).hexdigest()}"


class Witness:
    """What the suite server's handlers saw, by the key each call names.

    ``entered(key)`` is set when a handler starts, ``ended(key)`` when it leaves, and
    ``outcomes[key]`` says how (``"cancelled"``, ``"returned"``); ``sent[key]`` counts the
    notifications a flooding handler got out; ``finished`` lists what the ``in_turn``
    handlers answered, in the order they answered it.
    """

    def __init__(self) -> None:
        self._entered: defaultdict[str, trio.Event] = defaultdict(trio.Event)
        self._sending: defaultdict[str, trio.Event] = defaultdict(trio.Event)
        self._ended: defaultdict[str, trio.Event] = defaultdict(trio.Event)
        self.outcomes: dict[str, str] = {}
        self.sent: defaultdict[str, int] = defaultdict(int)
        self.finished: list[str] = []
        self._arrived: defaultdict[str, set[int]] = defaultdict(set)

    def entered(self, key: str) -> trio.Event:
        return self._entered[key]

    def ended(self, key: str) -> trio.Event:
        return self._ended[key]

    def sending(self, key: str) -> trio.Event:
        """Set once the flooding handler ``key`` has sent its first message."""
        return self._sending[key]

    def arrived(self, key: str) -> set[int]:
        return self._arrived[key]


class SuiteServer:
    """A fresh :class:`mcptrio.Server` with the suite's tools (``server``), and its
    :class:`Witness` (``witness``). The tools:

    - ``echo(text)``: answers ``text``;
    - ``in_turn(key, index, count)``: waits until all ``count`` calls of ``key`` have arrived,
      then answers ``index`` after ``index + 1`` has answered (so the last call answers first);
    - ``hold(key)``: waits until cancelled;
    - ``chatter(count)``: sends ``count`` progress notifications and log messages, alternating,
      then answers;
    - ``blob(size, plain)`` answers :func:`text_of_size`; ``measure(text)`` answers
      :func:`digest`;
    - ``ask_client()``: samples the client, elicits a name (where the revision has
      elicitation), lists its roots, and answers with what it got;
    - ``ask_and_give_up(after)``: samples the client with a ``timeout`` of ``after`` seconds;
      answers ``"gave up"`` when it passes;
    - ``flood(key, count, size)``: sends ``count`` log messages of ``size`` characters.

    ``echo``, ``blob`` and ``measure`` never suspend (a runtime may answer such a handler at
    once, in the task that read the request); the others do.
    """

    def __init__(self) -> None:
        self.witness = witness = Witness()
        self.server = server = Server("transport-suite")

        @server.tool
        async def echo(text: str) -> str:
            return text

        @server.tool
        async def in_turn(key: str, index: int, count: int) -> str:
            arrived = witness.arrived(key)
            arrived.add(index)
            if len(arrived) == count:
                witness.entered(key).set()
            await witness.entered(key).wait()
            if index + 1 < count:
                await witness.ended(f"{key} {index + 1}").wait()
            answer = f"{key} {index}"
            witness.finished.append(answer)
            witness.ended(answer).set()
            return answer

        @server.tool
        async def hold(key: str) -> str:
            witness.entered(key).set()
            outcome = "returned"
            try:
                await trio.sleep_forever()
            except trio.Cancelled:
                outcome = "cancelled"
                raise
            finally:
                witness.outcomes[key] = outcome
                witness.ended(key).set()

        @server.tool
        async def chatter(count: int, ctx: Context) -> str:
            for step in range(1, count + 1):
                await ctx.report_progress(step, count)
                await ctx.info(f"line {step}")
            return f"said {count}"

        @server.tool
        async def blob(size: int, plain: bool = False) -> str:
            return text_of_size(size, plain=plain)

        @server.tool
        async def measure(text: str) -> str:
            return digest(text)

        @server.tool
        async def ask_client(ctx: Context) -> str:
            sampled = await ctx.sample("Say something", max_tokens=20)
            assert isinstance(sampled.content, TextContent)
            got = [f"sampled {sampled.content.text}"]
            if revision_of(ctx.revision).elicitation:
                answer: Elicited[Any] = await ctx.elicit("Your name?", NAME_SCHEMA)
                assert answer.content is not None
                got.append(f"elicited {answer.content['name']}")
            roots = await ctx.list_roots()
            got.append("roots " + " ".join(root.uri for root in roots))
            return "; ".join(got)

        @server.tool
        async def ask_and_give_up(after: float, ctx: Context) -> str:
            try:
                await ctx.sample("Take your time", max_tokens=20, timeout=after)
            except RequestTimeout:
                return "gave up"
            return "answered"

        @server.tool
        async def flood(key: str, count: int, size: int, ctx: Context) -> str:
            payload = text_of_size(size, plain=True)
            for _ in range(count):
                await ctx.info(payload)
                witness.sent[key] += 1
                witness.sending(key).set()
            return f"flooded {count}"
