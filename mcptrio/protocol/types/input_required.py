"""Input-required results (2026-07-28, SEP-2322): how a server asks the client for input.

The stateless era has no server-to-client requests. A ``tools/call``, ``prompts/get`` or
``resources/read`` handler that needs the user (elicitation), the model (sampling) or the roots
answers :class:`InputRequiredResult` instead: ``inputRequests`` maps keys of the server's choosing
to embedded requests (``{"method": ..., "params": ...}``), and ``requestState`` is opaque state
for the server. The client retries the same request, with a new id, adding ``inputResponses``
(the same keys mapped to the results) and echoing ``requestState``: the params of those three
requests derive from :class:`InputResponseRequest`.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeVar

from ..base import Request, Result, WireStruct

__all__ = [
    "INPUT_REQUEST_METHODS",
    "INPUT_REQUIRED",
    "RESULT_COMPLETE",
    "InputRequest",
    "InputRequiredResult",
    "InputResponseRequest",
]

_ResultT = TypeVar("_ResultT", bound=Result)

#: ``resultType`` of a result that answers the request.
RESULT_COMPLETE: Final = "complete"
#: ``resultType`` of an :class:`InputRequiredResult`.
INPUT_REQUIRED: Final = "input_required"
#: The methods an input request may embed.
INPUT_REQUEST_METHODS: Final = frozenset(
    {"elicitation/create", "sampling/createMessage", "roots/list"}
)


class InputRequest(WireStruct, kw_only=True):
    """One embedded request: a method of :data:`INPUT_REQUEST_METHODS` and its params."""

    method: Literal["elicitation/create", "sampling/createMessage", "roots/list"]
    params: dict[str, Any] | None = None


class InputRequiredResult(Result, kw_only=True):
    """The request needs input first; at least one of the two members is present."""

    input_requests: dict[str, InputRequest] | None = None
    request_state: str | None = None


class InputResponseRequest(Request[_ResultT], kw_only=True):
    """Base of the three requests that may get an :class:`InputRequiredResult` (the schema's
    ``InputResponseRequestParams``): retried, they carry ``inputResponses`` (the result's keys
    mapped to the answers) and echo its ``requestState``."""

    input_responses: dict[str, Any] | None = None
    request_state: str | None = None
