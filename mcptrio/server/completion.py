"""Completion: suggestions for the arguments of prompts and resource templates.

``completion/complete`` names what is being completed (a prompt by name, or a resource template
by its URI template), the argument and its partial value and, from 2025-06-18, the arguments the
user already filled in. The :class:`CompletionEngine` answers it from two sources:

1. an optional **global handler** (``@server.completion()``), called as
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

Any handler or completer may declare a parameter annotated :class:`~mcptrio.server.context.Context`
to receive the request's context. Synchronous ones run in a worker thread (as prompt functions
do) so a slow lookup never blocks the event loop; async ones run in the request's task, under
its cancel scope.

The reference and the argument name are validated before anything is called: an unknown prompt,
an unknown resource template, or a name that is not one of its arguments gets ``InvalidParams``
(-32602). An argument that has no completer gets an empty completion (``values: []``). At most
100 values are sent (the spec's limit); ``total`` then says how many there were and ``hasMore``
that some were cut.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import types
import weakref
from collections.abc import (
    Awaitable,
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import (
    Annotated,
    Any,
    Protocol,
    TypeAlias,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

import trio
from msgspec import UNSET

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
from .context import Context

__all__ = [
    "MAX_COMPLETION_VALUES",
    "Completer",
    "CompletionEngine",
    "CompletionHandler",
    "HasCompletions",
    "check_completions",
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


class HasCompletions(Protocol):
    """A prompt or resource template, as far as completion is concerned.

    Besides ``completions``, the engine learns the valid argument names from ``variables`` (a
    template's tuple of variable names) or, failing that, from ``arguments`` (a prompt's
    argument descriptions, each with a ``name``).
    """

    @property
    def completions(self) -> Mapping[str, Completer | Sequence[str]]: ...


def check_completions(
    completions: Mapping[str, Completer | Sequence[str]] | None,
    argument_names: Collection[str],
    owner: str,
) -> dict[str, Completer | Sequence[str]]:
    """Check completers at registration and return them as a fresh dict.

    Raises ``ValueError`` for a key that is not one of ``argument_names`` and ``TypeError`` for a
    completer that is neither callable nor a sequence of strings (a bare ``str`` included: it
    would otherwise complete with its single characters). ``owner`` names the prompt or template
    in the messages.
    """
    checked: dict[str, Completer | Sequence[str]] = {}
    for name, completer in (completions or {}).items():
        if name not in argument_names:
            known = ", ".join(repr(n) for n in argument_names) or "none"
            raise ValueError(f"{owner}: completions for unknown argument {name!r} (known: {known})")
        if callable(completer):
            checked[name] = completer
        elif (
            isinstance(completer, Sequence)
            and not isinstance(completer, str)
            and all(isinstance(value, str) for value in completer)
        ):
            checked[name] = tuple(completer)
        else:
            raise TypeError(
                f"{owner}: the completer of {name!r} must be a callable or a sequence of strings,"
                f" not {completer!r}"
            )
    return checked


def _strip_annotated(annotation: Any) -> Any:
    if get_origin(annotation) is Annotated:
        return get_args(annotation)[0]
    return annotation


def is_context_annotation(annotation: Any) -> bool:
    """Whether an annotation asks for the request's :class:`Context`.

    ``Context``, ``Context | None`` and either inside ``Annotated`` all do.
    """
    annotation = _strip_annotated(annotation)
    if annotation is Context:
        return True
    members = get_args(annotation) if isinstance(annotation, types.UnionType) else ()
    if get_origin(annotation) is Union:
        members = get_args(annotation)
    return Context in members and all(m is Context or m is type(None) for m in members)


_context_parameters: weakref.WeakKeyDictionary[Callable[..., Any], str | None] = (
    weakref.WeakKeyDictionary()
)


def context_parameter_of(fn: Callable[..., Any]) -> str | None:
    """The name of ``fn``'s parameter annotated :class:`Context`, if it has one (cached)."""
    try:
        return _context_parameters[fn]
    except (KeyError, TypeError):
        pass
    name = _find_context_parameter(fn)
    # What is not weak-referenceable is looked at again on each call, which is only slower.
    with contextlib.suppress(TypeError):
        _context_parameters[fn] = name
    return name


def _find_context_parameter(fn: Callable[..., Any]) -> str | None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    target = fn if inspect.isroutine(fn) else getattr(type(fn), "__call__", fn)  # noqa: B004
    try:
        hints = get_type_hints(target, include_extras=True)
    except Exception:
        # Unresolvable annotations (a name only imported under TYPE_CHECKING) mean no Context.
        hints = {}
    for parameter in signature.parameters.values():
        if is_context_annotation(hints.get(parameter.name, parameter.annotation)):
            return parameter.name
    return None


async def call_user_function(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn``: async functions in this task, others in a worker thread.

    What a synchronous function returns is handed back as is, so one returning an awaitable
    (a lambda around an async function) is awaited here, in Trio, not in the thread.
    """
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(type(fn), "__call__", None)  # noqa: B004
    ):
        return await fn(*args, **kwargs)
    value = await trio.to_thread.run_sync(functools.partial(_call_and_collect, fn, args, kwargs))
    if inspect.isawaitable(value):
        value = await value
    return value


def _call_and_collect(fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    # A lazy iterator (a generator, map, filter) is consumed in the worker thread too: running
    # it is the function's work.
    value = fn(*args, **kwargs)
    if isinstance(value, Iterator):
        return list(value)
    return value


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

    ``find_prompt(name)`` and ``find_template(uri_template)`` look the reference up (``None``:
    unknown). ``all_prompts()`` and ``all_templates()``, when given, list every registered one so
    that :meth:`has_any` can tell whether the server has a completer at all; without them only
    the global handler counts.
    """

    def __init__(
        self,
        find_prompt: Callable[[str], HasCompletions | None],
        find_template: Callable[[str], HasCompletions | None],
        *,
        all_prompts: Callable[[], Iterable[HasCompletions]] | None = None,
        all_templates: Callable[[], Iterable[HasCompletions]] | None = None,
    ) -> None:
        self._find_prompt = find_prompt
        self._find_template = find_template
        self._all_prompts = all_prompts
        self._all_templates = all_templates
        self._handler: CompletionHandler | None = None

    @property
    def handler(self) -> CompletionHandler | None:
        """The global completion handler, if one is set."""
        return self._handler

    def set_handler(self, handler: CompletionHandler | None) -> None:
        """Set the global handler (``None`` removes it); a second one is refused."""
        if handler is not None and self._handler is not None:
            raise ValueError("A completion handler is already set")
        self._handler = handler

    def has_any(self) -> bool:
        """Whether anything can complete: a global handler, or a completer on any argument.

        The server declares the ``completions`` capability when this is true.
        """
        if self._handler is not None:
            return True
        for source in (self._all_prompts, self._all_templates):
            if source is not None and any(target.completions for target in source()):
                return True
        return False

    async def complete(self, ctx: Context, request: CompleteRequest) -> CompleteResult:
        """Answer one ``completion/complete`` request (see the module docstring)."""
        ref = request.ref
        argument = request.argument
        if isinstance(ref, PromptReference):
            target = self._find_prompt(ref.name)
            if target is None:
                raise InvalidParams(f"Unknown prompt: {ref.name!r}")
            owner = f"Prompt {ref.name!r}"
        else:
            target = self._find_template(ref.uri)
            if target is None:
                raise InvalidParams(f"Unknown resource template: {ref.uri!r}")
            owner = f"Resource template {ref.uri!r}"
        names = _argument_names(target)
        if argument.name not in names:
            raise InvalidParams(f"{owner} has no argument {argument.name!r}")
        context = self._context_of(request)
        if self._handler is not None:
            answer = await self._ask_handler(ctx, ref, argument, context)
            if answer is not None:
                return CompleteResult(completion=answer)
        completer = target.completions.get(argument.name)
        if completer is None:
            return CompleteResult(completion=Completion(values=[]))
        given = context.arguments if context is not None else UNSET
        resolved = {
            name: value
            for name, value in (given if isinstance(given, dict) else {}).items()
            if name != argument.name and name in names
        }
        values = await self._run_completer(ctx, completer, argument, resolved)
        return CompleteResult(completion=_capped(values))

    @staticmethod
    def _context_of(request: CompleteRequest) -> CompleteContext | None:
        context = request.context
        return context if isinstance(context, CompleteContext) else None

    async def _ask_handler(
        self,
        ctx: Context,
        ref: PromptReference | ResourceTemplateReference,
        argument: CompleteArgument,
        context: CompleteContext | None,
    ) -> Completion | None:
        handler = self._handler
        assert handler is not None
        kwargs: dict[str, Any] = {}
        context_parameter = context_parameter_of(handler)
        if context_parameter is not None:
            kwargs[context_parameter] = ctx
        answer = await call_user_function(handler, ref, argument, context, **kwargs)
        if answer is None:
            return None
        if isinstance(answer, Completion):
            return _capped_completion(answer)
        return _capped(_string_values(answer, "The completion handler"))

    @staticmethod
    async def _run_completer(
        ctx: Context,
        completer: Completer | Sequence[str],
        argument: CompleteArgument,
        resolved: dict[str, str],
    ) -> list[str]:
        what = f"The completer of {argument.name!r}"
        if not callable(completer):
            return [value for value in completer if value.startswith(argument.value)]
        kwargs: dict[str, Any] = {}
        context_parameter = context_parameter_of(completer)
        if context_parameter is not None:
            kwargs[context_parameter] = ctx
        values = await call_user_function(completer, argument.value, resolved, **kwargs)
        return _string_values(values, what)
