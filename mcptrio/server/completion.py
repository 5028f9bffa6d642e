"""Completion: suggestions for the arguments of prompts and resource templates.

``completion/complete`` names what is being completed (a prompt by name, or a resource template
by its URI template), the argument and its partial value and, from 2025-06-18, the arguments the
user already filled in. The :class:`CompletionEngine` answers it from two sources:

1. an optional **global handler** (``@server.completion``), called as
   ``handler(ref, argument, context)`` where ``context`` is the request's
   :class:`~mcptrio.protocol.types.CompleteContext` (``None`` when absent or before 2025-06-18).
   It returns a :class:`~mcptrio.protocol.types.Completion`, a sequence of strings, or ``None``
   to fall through to:
2. the **per-argument completers** registered with the prompt or template
   (``completions={"language": [...]}``). A completer is either a sequence of strings (the
   values that start with the partial value, case-sensitively, in their order) or a callable
   ``completer(value, arguments)`` returning an iterable of strings (or an awaitable of one),
   where ``arguments`` holds the *other* already-resolved arguments of the same prompt or
   template (empty before 2025-06-18). The callable does its own filtering and ranking.

Handlers and completers are read at registration and called as every handler is (see
:mod:`.handler`): the values above go, in order, to the first parameters that are not the
context (a signature that cannot take them is refused at registration); a parameter annotated
:class:`~mcptrio.server.context.Context` receives the request's context; synchronous ones run in
a worker thread so a slow lookup never blocks the event loop, async ones in the request's task,
under its cancel scope; a generator's items are the values.

The reference and the argument name are validated before anything is called: an unknown prompt,
an unknown resource template, or a name that is not one of its arguments gets ``InvalidParams``
(-32602). An argument that has no completer gets an empty completion (``values: []``). At most
100 values are sent (the spec's limit); ``total`` then says how many there were and ``hasMore``
that some were cut.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeAlias

from ..protocol.errors import InvalidParams
from ..protocol.types import (
    CompleteArgument,
    CompleteContext,
    CompleteRequest,
    CompleteResult,
    Completion,
    PromptReference,
    ResourceTemplateReference,
)
from .handler import Handler, read_handler
from .handler_context import HandlerContext

__all__ = [
    "MAX_COMPLETION_VALUES",
    "ArgumentCompleter",
    "Completer",
    "CompletionEngine",
    "CompletionHandler",
    "HasCompletions",
    "read_completions",
]

#: The most values one ``completion/complete`` answer may carry (the spec's limit).
MAX_COMPLETION_VALUES = 100

#: ``completer(value, arguments)`` -> the suggestions, possibly awaitable; a parameter annotated
#: ``Context`` may be added and receives the request's context.
Completer: TypeAlias = Callable[..., Iterable[str] | Awaitable[Iterable[str]]]
#: ``handler(ref, argument, context)`` -> a ``Completion``, the values, or ``None`` to fall
#: through to the per-argument completers; possibly awaitable.
CompletionHandler: TypeAlias = Callable[
    ..., Completion | Sequence[str] | Awaitable[Completion | Sequence[str] | None] | None
]


class ArgumentCompleter:
    """One argument's completer, read at registration: candidate values, or a function."""

    __slots__ = ("_handler", "_names", "_values", "source")

    def __init__(self, source: Completer | Sequence[str], owner: str, argument: str) -> None:
        #: What was registered: the candidate values (as a tuple) or the function.
        self.source: Completer | tuple[str, ...]
        self._handler: Handler | None = None
        self._names: tuple[str, ...] = ()
        self._values: tuple[str, ...] = ()
        if callable(source):
            self.source = source
            what = f"the completer of {argument!r}"
            self._handler = read_handler(source, f"{owner}: {what}")
            self._names = self._handler.take_values(("value", "arguments"), what, owner)
        elif (
            isinstance(source, Sequence)
            and not isinstance(source, str)
            and all(isinstance(value, str) for value in source)
        ):
            self.source = self._values = tuple(source)
        else:
            raise TypeError(
                f"{owner}: the completer of {argument!r} must be a callable or a sequence of"
                f" strings, not {source!r}"
            )

    def __repr__(self) -> str:
        return f"<ArgumentCompleter {self.source!r}>"

    async def complete(
        self, ctx: HandlerContext, argument: CompleteArgument, resolved: dict[str, str]
    ) -> list[str]:
        """The suggestions for ``argument``'s partial value, given the ``resolved`` others."""
        if self._handler is None:
            return [value for value in self._values if value.startswith(argument.value)]
        value_name, arguments_name = self._names
        values = await self._handler.call(
            ctx, {value_name: argument.value, arguments_name: resolved}
        )
        return _string_values(values, f"The completer of {argument.name!r}")


class HasCompletions(Protocol):
    """A prompt or resource template, as far as completion is concerned.

    Besides ``completions``, the engine learns the valid argument names from ``variables`` (a
    template's tuple of variable names) or, failing that, from ``arguments`` (a prompt's
    argument descriptions, each with a ``name``).
    """

    @property
    def completions(self) -> Mapping[str, ArgumentCompleter]: ...


def read_completions(
    completions: Mapping[str, Completer | Sequence[str]] | None,
    argument_names: Collection[str],
    owner: str,
) -> dict[str, ArgumentCompleter]:
    """Read the completers of a prompt or template at registration.

    Raises ``ValueError`` for a key that is not one of ``argument_names`` or a function that
    cannot take ``(value, arguments)``, and ``TypeError`` for a completer that is neither
    callable nor a sequence of strings (a bare ``str`` included: it would otherwise complete
    with its single characters). ``owner`` names the prompt or template in the messages.
    """
    read: dict[str, ArgumentCompleter] = {}
    for name, completer in (completions or {}).items():
        if name not in argument_names:
            known = ", ".join(repr(n) for n in argument_names) or "none"
            raise ValueError(f"{owner}: completions for unknown argument {name!r} (known: {known})")
        read[name] = ArgumentCompleter(completer, owner, name)
    return read


def _argument_names(target: object) -> Collection[str]:
    variables = getattr(target, "variables", None)
    if variables is not None:
        return tuple(variables)
    return tuple(argument.name for argument in getattr(target, "arguments", ()))


def _string_values(values: Any, what: str) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise TypeError(f"{what} must give an iterable of strings, not {values!r}")
    listed = list(values)
    for value in listed:
        if not isinstance(value, str):
            raise TypeError(f"{what} gave a value that is not a string: {value!r}")
    return listed


def _capped(values: list[str]) -> Completion:
    total = len(values)
    return Completion(
        values=values[:MAX_COMPLETION_VALUES], total=total, has_more=total > MAX_COMPLETION_VALUES
    )


def _capped_completion(completion: Completion) -> Completion:
    values = _string_values(completion.values, "The completion handler")
    if len(values) <= MAX_COMPLETION_VALUES:
        return completion
    total = completion.total if isinstance(completion.total, int) else 0
    return Completion(
        values=values[:MAX_COMPLETION_VALUES], total=max(total, len(values)), has_more=True
    )


class CompletionEngine:
    """Answers ``completion/complete`` for the prompts and resource templates of a server.

    ``prompts`` and ``templates`` map a prompt's name and a template's URI template to it (the
    server's live registries).
    """

    def __init__(
        self,
        prompts: Mapping[str, HasCompletions],
        templates: Mapping[str, HasCompletions],
    ) -> None:
        self._prompts = prompts
        self._templates = templates
        self._handler: Handler | None = None
        self._handler_names: tuple[str, ...] = ()

    @property
    def handler(self) -> CompletionHandler | None:
        """The global completion handler, if one is set."""
        return None if self._handler is None else self._handler.fn

    def set_handler(self, handler: CompletionHandler | None) -> None:
        """Set the global handler (``None`` removes it); a second one is refused.

        ``ValueError`` also for a function that cannot take ``(ref, argument, context)``.
        """
        if handler is None:
            self._handler = None
            return
        if self._handler is not None:
            raise ValueError("A completion handler is already set")
        owner = "The completion handler"
        read = read_handler(handler, owner)
        self._handler_names = read.take_values(("ref", "argument", "context"), "it", owner)
        self._handler = read

    def has_any(self) -> bool:
        """Whether anything can complete: a global handler, or a completer on any argument.

        The server declares the ``completions`` capability when this is true.
        """
        if self._handler is not None:
            return True
        return any(
            target.completions
            for registry in (self._prompts, self._templates)
            for target in registry.values()
        )

    async def complete(self, ctx: HandlerContext, request: CompleteRequest) -> CompleteResult:
        """Answer one ``completion/complete`` request (see the module docstring)."""
        ref = request.ref
        argument = request.argument
        if isinstance(ref, PromptReference):
            target = self._prompts.get(ref.name)
            if target is None:
                raise InvalidParams(f"Unknown prompt: {ref.name!r}")
            owner = f"Prompt {ref.name!r}"
        else:
            target = self._templates.get(ref.uri)
            if target is None:
                raise InvalidParams(f"Unknown resource template: {ref.uri!r}")
            owner = f"Resource template {ref.uri!r}"
        names = _argument_names(target)
        if argument.name not in names:
            raise InvalidParams(f"{owner} has no argument {argument.name!r}")
        context = self._context_of(request)
        if self._handler is not None:
            answer = await self._ask_handler(self._handler, ctx, ref, argument, context)
            if answer is not None:
                return CompleteResult(completion=answer)
        completer = target.completions.get(argument.name)
        if completer is None:
            return CompleteResult(completion=Completion(values=[]))
        given = context.arguments if context is not None else None
        resolved = {
            name: value
            for name, value in (given if isinstance(given, dict) else {}).items()
            if name != argument.name and name in names
        }
        values = await completer.complete(ctx, argument, resolved)
        return CompleteResult(completion=_capped(values))

    @staticmethod
    def _context_of(request: CompleteRequest) -> CompleteContext | None:
        context = request.context
        return context if isinstance(context, CompleteContext) else None

    async def _ask_handler(
        self,
        handler: Handler,
        ctx: HandlerContext,
        ref: PromptReference | ResourceTemplateReference,
        argument: CompleteArgument,
        context: CompleteContext | None,
    ) -> Completion | None:
        values = dict(zip(self._handler_names, (ref, argument, context), strict=True))
        answer = await handler.call(ctx, values)
        if answer is None:
            return None
        if isinstance(answer, Completion):
            return _capped_completion(answer)
        return _capped(_string_values(answer, "The completion handler"))
