"""The client's side of input-required results (2026-07-28, SEP-2322).

A stateless-era ``tools/call``, ``prompts/get`` or ``resources/read`` may be answered with an
input-required result instead of its own: requests for the client (elicitation, sampling,
roots), each under a key, and an opaque ``requestState``. The client answers each with the same
handlers that answer a handshake-era server's requests (:class:`~.server_requests.Handlers`),
then sends the same request again, with a new id, carrying the answers by key and the state as
it came (none if none came). That repeats until the server answers in full, at most
:data:`MAX_ROUNDS` times. A request the client has no handler for fails the call with the
handler's error (-32601), as it would be refused in the handshake era.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, TypeVar

import msgspec
import trio

from ..protocol.base import Request, Result
from ..protocol.methods import METHODS
from ..protocol.types import InputRequest, InputRequiredResult
from ..runtime.context import RequestContext
from ..runtime.session import Session
from .errors import ClientError

__all__ = ["MAX_ROUNDS", "TooManyInputRounds", "answer_input_required", "answer_requests"]

#: Rounds of input a request may take before the client gives up.
MAX_ROUNDS: Final = 16

ResultT = TypeVar("ResultT", bound=Result)
Send = Callable[[Request[Any]], Awaitable[Result]]
Answer = Callable[[RequestContext, Request[Any]], Awaitable[Result]]


class TooManyInputRounds(ClientError, default_message="The server asked for input too often"):
    """A request still needed input after :data:`MAX_ROUNDS` rounds."""


async def answer_input_required(
    session: Session, request: Request[ResultT], result: Result, send: Send, answer: Answer
) -> ResultT:
    """Answer ``result`` (and the rounds after it) until the server sends ``request``'s own."""
    rounds = 0
    while isinstance(result, InputRequiredResult):
        rounds += 1
        if rounds > MAX_ROUNDS:
            raise TooManyInputRounds(
                f"{request.METHOD} still needed input after {MAX_ROUNDS} rounds"
            )
        responses = await answer_requests(session, result.input_requests or {}, answer)
        retry = msgspec.structs.replace(
            request,
            input_responses=responses if responses else None,
            request_state=result.request_state,
        )
        result = await send(retry)
    return result  # type: ignore[return-value]


async def answer_requests(
    session: Session, asked: Mapping[str, InputRequest], answer: Answer
) -> dict[str, Any]:
    """The answers (wire form, by key) to embedded requests ``asked``, each answered by
    ``answer`` as the same request sent by a handshake-era server would be (also the input
    requests of a task, SEP-2663)."""
    responses: dict[str, Any] = {}
    for key, request in asked.items():
        params_type = METHODS[request.method].params
        assert issubclass(params_type, Request)
        embedded: Request[Any] = msgspec.convert(request.params or {}, params_type)
        context = RequestContext(session, key, embedded, trio.CancelScope())
        responses[key] = msgspec.to_builtins(await answer(context, embedded))
    return responses
