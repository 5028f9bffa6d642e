"""The official SDK's 2026 input helpers: ``Resolve``, ``Elicit``, ``Sample`` and ``ListRoots``.

A tool parameter annotated ``Annotated[T, Resolve(fn)]`` is filled by running the resolver
``fn`` before the tool, not from the model's arguments. A resolver may take the tool's arguments
by name, the ``Context`` and other ``Resolve(...)`` parameters, and may return a request:
``Elicit(message, Model)`` to ask the user, ``Sample(...)`` to sample the client's LLM,
``ListRoots()`` for its roots. The answer is what the parameter receives: the model itself
(a declined or cancelled elicitation then fails the call), or with
``Annotated[ElicitationResult[Model], Resolve(fn)]`` the whole outcome.

Each request is asked through mcptrio's context under the resolver's name as its key: in the
handshake era as a request to the client in the middle of the call, in the stateless era as an
input-required round (mcptrio's engine seals the answers and runs the tool again with them, so a
question is asked once).
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Generic, TypeVar, get_args, get_origin

from pydantic import BaseModel

from ...protocol.revisions import STATELESS_SUPPORTED
from ...server.sync_calls import run_sync_call
from .context import (
    AcceptedElicitation,
    CancelledElicitation,
    Context,
    DeclinedElicitation,
    ElicitationResult,
    elicitation_schema,
)
from .exceptions import ToolError

__all__ = ["Elicit", "ListRoots", "Resolve", "Sample", "resolve_all", "resolved_parameters"]

ModelT = TypeVar("ModelT", bound=BaseModel)
_OUTCOMES = (AcceptedElicitation, DeclinedElicitation, CancelledElicitation)


class Resolve:
    """Marker for ``Annotated[T, Resolve(fn)]``: fill the parameter by running ``fn``."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn


class Elicit(Generic[ModelT]):
    """A resolver's request to ask the user for a ``schema``-shaped answer."""

    def __init__(self, message: str, schema: type[ModelT]) -> None:
        self.message = message
        self.schema = schema


class Sample:
    """A resolver's request to sample the client's LLM; the parameter receives the
    ``CreateMessageResult``. The keywords are those of ``mcptrio.Context.sample``."""

    def __init__(self, messages: Any, *, max_tokens: int, **options: Any) -> None:
        self.messages = messages
        self.options = {"max_tokens": max_tokens, **options}


class ListRoots:
    """A resolver's request for the client's roots; the parameter receives them as a
    ``ListRootsResult``-like object with ``roots``."""


@dataclasses.dataclass(frozen=True, slots=True)
class ResolvedParameter:
    name: str
    resolve: Resolve
    #: Whether it receives the whole elicitation outcome rather than the answer.
    wants_outcome: bool


@dataclasses.dataclass(frozen=True, slots=True)
class _Roots:
    roots: list[Any]


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    target = fn if inspect.isroutine(fn) else getattr(type(fn), "__call__", fn)  # noqa: B004
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:
        return {}


def _wants_outcome(annotation: Any) -> bool:
    if annotation is ElicitationResult or get_origin(annotation) is ElicitationResult:
        return True
    members = get_args(annotation) if get_origin(annotation) is not None else (annotation,)
    return any(
        inspect.isclass(get_origin(member) or member)
        and issubclass(get_origin(member) or member, _OUTCOMES)
        for member in members
    )


def resolved_parameters(fn: Callable[..., Any]) -> list[ResolvedParameter]:
    """The parameters of ``fn`` annotated ``Annotated[T, Resolve(...)]``."""
    found: list[ResolvedParameter] = []
    hints = _hints(fn)
    for name in inspect.signature(fn).parameters:
        annotation: Any = hints.get(name)
        if get_origin(annotation) is not Annotated:
            continue
        target, *extras = get_args(annotation)
        markers = [extra for extra in extras if isinstance(extra, Resolve)]
        if markers:
            found.append(ResolvedParameter(name, markers[0], _wants_outcome(target)))
    return found


class _Resolution:
    """One call's resolvers, each run at most once."""

    def __init__(self, arguments: Mapping[str, Any], context: Context) -> None:
        self.arguments = arguments
        self.context = context
        self.outcomes: dict[Callable[..., Any], Any] = {}

    async def outcome(self, fn: Callable[..., Any]) -> Any:
        if fn in self.outcomes:
            return self.outcomes[fn]
        resolved = {p.name: p for p in resolved_parameters(fn)}
        hints = _hints(fn)
        kwargs: dict[str, Any] = {}
        for name in inspect.signature(fn).parameters:
            hint = hints.get(name)
            if name in resolved:
                kwargs[name] = await self.value(resolved[name])
            elif inspect.isclass(hint) and issubclass(hint, Context):
                kwargs[name] = self.context
            elif name in self.arguments:
                kwargs[name] = self.arguments[name]
        if inspect.iscoroutinefunction(fn):
            value = await fn(**kwargs)
        else:
            value = await run_sync_call(lambda: fn(**kwargs))
        outcome = await self._fulfil(value, getattr(fn, "__name__", type(fn).__name__))
        self.outcomes[fn] = outcome
        return outcome

    async def value(self, parameter: ResolvedParameter) -> Any:
        outcome = await self.outcome(parameter.resolve.fn)
        if parameter.wants_outcome:
            return outcome
        if isinstance(outcome, AcceptedElicitation):
            return outcome.data
        raise ToolError(
            f"Resolver for parameter {parameter.name!r} could not resolve: elicitation was"
            f" {outcome.action}"
        )

    async def _fulfil(self, value: Any, key: str) -> Any:
        engine = self.context.engine
        if isinstance(value, Elicit):
            requested = elicitation_schema(value.schema)
            if engine.revision in STATELESS_SUPPORTED:
                # The SDK's input requests keep only the schema's type, properties and required.
                requested.pop("title", None)
            return await self.context.ask(value.message, value.schema, requested, key=key)
        if isinstance(value, Sample):
            result = await engine.sample(value.messages, key=key, **value.options)
            return AcceptedElicitation.model_construct(data=result)
        if isinstance(value, ListRoots):
            roots = await engine.list_roots(key=key)
            return AcceptedElicitation.model_construct(data=_Roots(roots))
        return AcceptedElicitation.model_construct(data=value)


async def resolve_all(
    parameters: list[ResolvedParameter], arguments: Mapping[str, Any], context: Context
) -> dict[str, Any]:
    """The values of the resolved ``parameters`` of one call."""
    resolution = _Resolution(arguments, context)
    return {parameter.name: await resolution.value(parameter) for parameter in parameters}
