"""Input-required results (2026-07-28, SEP-2322): asking the client by ending the round.

The stateless era has no requests from server to client. A ``tools/call``, ``prompts/get`` or
``resources/read`` handler still calls :meth:`Context.elicit`, :meth:`Context.sample` or
:meth:`Context.list_roots` as in the handshake era; what differs is how the answer comes:

- the handler is **replayed**: every round runs it from the start. Each ask has a key (given by
  ``key=``, else ``<method>-<n>`` for the n-th ask of the run, the same in every run of the same
  code). An ask whose key has an answer, in the retry's ``inputResponses`` or in the answers
  earlier rounds sealed into ``requestState``, returns that answer at once;
- the first ask without an answer ends the round: :class:`InputRequired` unwinds the handler,
  and the request is answered with an input-required result that asks for it, with the answers
  so far sealed into ``requestState`` (:mod:`.request_state`). The client asks its user or
  model, and retries with a new id; the next run gets one ask further.

What the client sends is taken only where it answers the server: an answer in
``inputResponses`` counts when this run of the handler asks its key (an answer given ahead of
its question included, as SEP-2322's conformance scenarios expect), and an answer under a key
the handler never asks is ignored and never sealed; an answer sealed in an earlier round stays
as it was (a retry cannot replace it); an answer that does not fit its request is dropped and
asked for again. The state is bound to the principal it
was issued to (:mod:`.request_state`).

So a handler should do before its first ask only what it can do again (or what is idempotent):
everything before an ask runs once per round. :meth:`Context.ask` asks several things in one
round. A handler that is not one of those three methods cannot ask (-32603), and an ask the
request's declared client capabilities do not allow is -32021.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ..protocol.base import Request, Result
from ..protocol.fitting import fit_outgoing
from ..protocol.revisions import Revision
from ..protocol.types import InputRequest, InputRequiredResult
from ..transports.http.endpoints.security import Principal
from .request_state import RequestStateKey, params_digest

__all__ = ["InputRequired", "InputRound", "ask_key", "typed_answer"]

_SHORT = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


def ask_key(method: str, number: int) -> str:
    """The key of the ``number``-th ask without a key of its own: ``elicitation-1``..."""
    return f"{_SHORT.get(method, method)}-{number}"


def typed_answer(raw: Any, result_type: type[Result]) -> Result | None:
    """An answer as it came (``raw``, ``None`` if none came) as ``result_type``; ``None`` for
    one that does not fit, which is asked for again, as the spec prefers to an error."""
    if raw is None:
        return None
    try:
        return msgspec.convert(raw, result_type)
    except msgspec.ValidationError:
        return None


class InputRequired(BaseException):
    """Unwinds a handler whose round needs input; never reaches user code that does not ask.

    A ``BaseException`` so that a handler's ``except Exception`` does not swallow the end of
    its round.
    """

    def __init__(self, requests: Mapping[str, Request[Any]]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = dict(requests)


class InputRound:
    """One run of a stateless-era handler: the answers it has, the asks it made."""

    __slots__ = ("_asked", "_digest", "_key", "_method", "_offered", "_principal", "answers")

    def __init__(
        self, request: Request[Any], key: RequestStateKey, principal: Principal | None = None
    ) -> None:
        self._key = key
        self._method = request.METHOD
        self._principal = None if principal is None else principal.subject
        name = getattr(request, "name", None)
        if name is None:
            name = getattr(request, "uri", None)
        arguments = getattr(request, "arguments", None)
        self._digest = params_digest(
            self._method, name, arguments if isinstance(arguments, dict) else None
        )
        answers: dict[str, Any] = {}
        state = getattr(request, "request_state", None)
        if isinstance(state, str):
            answers = key.open(state, self._method, self._digest, principal=self._principal).answers
        responses = getattr(request, "input_responses", None)
        #: The answers sealed in earlier rounds, and those this run has used, by key: what the
        #: next state seals.
        self.answers = answers
        #: What the client sent this round, taken into :attr:`answers` only when asked for.
        self._offered: dict[str, Any] = responses if isinstance(responses, dict) else {}
        self._asked = 0

    def given(self) -> dict[str, Any]:
        """Every answer this request carries, by key: those sealed in earlier rounds, and what
        the client sent for the others (asked for or not yet)."""
        return {**self._offered, **self.answers}

    def next_key(self, method: str) -> str:
        """The key of the next ask without one of its own (the same in every run)."""
        self._asked += 1
        return ask_key(method, self._asked)

    def answer(self, key: str, result_type: type[Result]) -> Result | None:
        """The answer under ``key`` as ``result_type``, or ``None`` if there is none yet (or
        none that fits: it is dropped, so that it is not sealed, and asked for again)."""
        raw = self.answers.get(key)
        if raw is None:
            raw = self._offered.get(key)
        answer = typed_answer(raw, result_type)
        if answer is None:
            self.answers.pop(key, None)
        else:
            self.answers.setdefault(key, raw)
        return answer

    def result(self, asked: InputRequired, revision: Revision) -> InputRequiredResult:
        """The input-required result that ends this round."""
        inputs = {
            key: InputRequest(
                method=request.METHOD,  # type: ignore[arg-type]
                params=msgspec.to_builtins(fit_outgoing(request, revision)),
            )
            for key, request in asked.requests.items()
        }
        state = self._key.seal(
            self._method,
            self._digest,
            self.answers,
            principal=self._principal,
            asked=inputs.keys(),
        )
        return InputRequiredResult(input_requests=inputs, request_state=state)
