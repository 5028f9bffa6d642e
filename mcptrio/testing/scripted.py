"""Scripted answers to a server's requests to the client: sampling, elicitation, roots.

A test of a tool that samples the client's model or asks its user needs a client that answers
as the test says. Each scripted handler answers the requests it receives in order, from its
script, and keeps them (``.requests``) for the test to inspect; a request past the end of the
script is refused with an error the server sees (and the test then fails on the tool's
result), never left waiting::

    sampling = ScriptedSampling("a haiku about trio", "another one")
    elicitation = ScriptedElicitation({"name": "Ada"}, "decline")
    async with open_test_client(
        server, handlers=Handlers(sampling=sampling, elicitation=elicitation, roots=roots("file:///repo"))
    ) as client:
        ...
    assert sampling.requests[0].messages[0].content.text == "Write a haiku"

An item of a script may also be a function of the request returning the answer (sync or
async), for an answer that depends on what was asked.
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

from ..protocol.errors import InternalError
from ..protocol.types import (
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    Root,
    TextContent,
)
from ..runtime.context import RequestContext

__all__ = ["ScriptedElicitation", "ScriptedSampling", "roots"]

RequestT = TypeVar("RequestT")
ResultT = TypeVar("ResultT")


class _Scripted(abc.ABC, Generic[RequestT, ResultT]):
    """Answers requests in order from a script; see the module docstring."""

    kind = "request"

    def __init__(self, *script: Any) -> None:
        self._script = list(script)
        #: The requests received, in order.
        self.requests: list[RequestT] = []

    @property
    def remaining(self) -> int:
        """How many scripted answers are left."""
        return len(self._script)

    async def __call__(self, ctx: RequestContext, request: RequestT) -> ResultT:
        self.requests.append(request)
        if not self._script:
            raise InternalError(
                f"The test scripted {len(self.requests) - 1} {self.kind} answer(s), and the"
                f" server asked for one more"
            )
        item = self._script.pop(0)
        if callable(item):
            item = item(request)
            if inspect.isawaitable(item):
                item = await item
        return self._answer(item)

    @abc.abstractmethod
    def _answer(self, item: Any) -> ResultT:
        """The answer a script item stands for."""


class ScriptedSampling(_Scripted[CreateMessageRequest, CreateMessageResult]):
    """A sampling handler answering from a script: each item a ``str`` (the model's text
    reply), a :class:`CreateMessageResult`, or a function of the request returning either.

    ``model`` names the model in answers made from text.
    """

    kind = "sampling"

    def __init__(
        self,
        *script: str
        | CreateMessageResult
        | Callable[[CreateMessageRequest], str | CreateMessageResult]
        | Callable[[CreateMessageRequest], Awaitable[str | CreateMessageResult]],
        model: str = "scripted-model",
    ) -> None:
        super().__init__(*script)
        self.model = model

    def _answer(self, item: Any) -> CreateMessageResult:
        if isinstance(item, CreateMessageResult):
            return item
        if isinstance(item, str):
            return CreateMessageResult(
                role="assistant",
                content=TextContent(text=item),
                model=self.model,
                stop_reason="endTurn",
            )
        raise TypeError(f"A sampling script item must be a str or CreateMessageResult: {item!r}")


class ScriptedElicitation(_Scripted[ElicitRequest, ElicitResult]):
    """An elicitation handler answering from a script: each item a ``dict`` (the user
    accepts with that content), ``"accept"`` (accepts with no content, as for a URL
    elicitation), ``"decline"`` or ``"cancel"``, an :class:`ElicitResult`, or a function of the
    request returning one of these."""

    kind = "elicitation"

    def __init__(
        self,
        *script: dict[str, Any]
        | str
        | ElicitResult
        | Callable[[ElicitRequest], Any]
        | Callable[[ElicitRequest], Awaitable[Any]],
    ) -> None:
        super().__init__(*script)

    def _answer(self, item: Any) -> ElicitResult:
        if isinstance(item, ElicitResult):
            return item
        if isinstance(item, dict):
            return ElicitResult(action="accept", content=item)
        if item in ("accept", "decline", "cancel"):
            return ElicitResult(action=item)
        raise TypeError(
            "An elicitation script item must be a dict, 'accept', 'decline', 'cancel' or an"
            f" ElicitResult: {item!r}"
        )


def roots(*uris: str | Root) -> list[Root]:
    """Roots for ``Handlers(roots=...)``: each a URI (named after its last path segment) or a
    :class:`Root`."""
    found: list[Root] = []
    for uri in uris:
        if isinstance(uri, Root):
            found.append(uri)
        else:
            name = urlsplit(uri).path.rstrip("/").rsplit("/", 1)[-1]
            found.append(Root(uri=uri, name=name or None))
    return found
