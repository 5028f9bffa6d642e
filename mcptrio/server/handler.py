"""The handler-signature reader: a user function, read once at registration and called one way.

Tools, resources, resource templates, prompts, completers and the completion handler are all
user functions. :func:`read_handler` reads one when it is registered, and what it finds is a
:class:`Handler`; each request then only runs :meth:`Handler.call`. The rules are the same for
every kind:

- **Injection.** A parameter annotated :class:`~mcptrio.server.context.Context` (also
  ``Context | None`` or ``Annotated[Context, ...]``) receives the context of the request being
  answered and is never one of the function's arguments. There may be any number of them, in any
  position. A parameter annotated with the runtime's ``RequestContext`` is refused: ``Context``
  has everything it had.
- **Values.** Every other parameter is a value the kind passes by name: a tool's arguments, a
  template's URI variables, a prompt's arguments, a completer's ``(value, arguments)``.
  Positional-only parameters are passed positionally, in order. ``*args`` and ``**kwargs`` are
  refused: every value has a name (and, for tools, a place in the input schema).
- **Calling.** An ``async def`` function runs in the request's task and is cancelled with it at
  its next checkpoint. A plain ``def`` function runs in a worker thread (:mod:`.sync_calls`) so
  it never blocks the event loop; a thread cannot be interrupted, so a cancelled request whose
  call has started waits for it and drops its result. Registered with ``blocking=False``
  (:attr:`Handler.inline`), it runs in the request's task instead. What it returns is its value.
  An ``async def`` marked :func:`~mcptrio.asyncio_handler` runs on the server's asyncio loop
  (see :mod:`.asyncio_handlers`).
- **Generators.** A generator function's items are collected into a list, in a worker thread
  (running the generator is the function's work); an async generator's in the request's task.
  The list is the value, as if the function had returned it, and a return annotation
  ``Iterator[T]`` (``Generator``, ``Iterable``, their async forms) reads as ``list[T]``.
- **Errors** in a signature (a type hint that does not resolve, ``*args``, a ``RequestContext``
  parameter, and whatever the kind checks on top) raise ``ValueError`` at registration, naming
  the function's owner (``Tool 'add': ...``).
"""

from __future__ import annotations

import collections.abc
import enum
import functools
import inspect
import re
import reprlib
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

import msgspec

from ..protocol.errors import InvalidParams
from ..runtime.context import RequestContext
from .asyncio_handlers import marked_for_asyncio
from .eager import JudgedCode
from .handler_context import HandlerContext
from .pydantic_values import field_is_required, is_field_info, text_converter
from .sync_calls import run_sync_call

__all__ = [
    "Handler",
    "Mode",
    "Parameter",
    "default_name",
    "docstring",
    "read_handler",
    "underlying_callable",
]

_EMPTY = inspect.Parameter.empty
_SEQUENCES = (list, tuple, set, frozenset)
_ITERATOR_ORIGINS = (
    collections.abc.Iterator,
    collections.abc.Iterable,
    collections.abc.Generator,
    collections.abc.AsyncIterator,
    collections.abc.AsyncIterable,
    collections.abc.AsyncGenerator,
)


class Mode(enum.Enum):
    """How a user function is run."""

    ASYNC = "async"
    SYNC = "sync"
    GENERATOR = "generator"
    ASYNC_GENERATOR = "async generator"
    #: An ``async def`` marked :func:`~mcptrio.asyncio_handler`: on the server's asyncio loop.
    ASYNCIO = "asyncio"


@dataclass(frozen=True, slots=True)
class Parameter:
    """A parameter that receives a value (not the context)."""

    name: str
    #: The resolved type hint (``Annotated`` kept), ``Any`` when there is none.
    annotation: Any
    #: The default, or ``inspect.Parameter.empty`` when the value is required.
    default: Any
    #: Whether a value given as text converts to the annotation (it is not plain ``str``;
    #: ``Annotated[str, msgspec.Meta(...)]`` converts, so that its constraints apply).
    converts: bool = False
    #: Whether comma-separated text splits into the annotation's list (``list[int]``...).
    splits: bool = False
    #: How text converts when pydantic describes the annotation (see :mod:`.pydantic_values`).
    text_converter: Callable[[str | Sequence[str]], Any] | None = None

    @property
    def required(self) -> bool:
        return self.default is _EMPTY or field_is_required(self.default)

    def from_text(self, value: str | Sequence[str]) -> Any:
        """A value given as text (a prompt's argument, a URI template's variable), converted
        to the annotation with ``msgspec.convert(..., strict=False)`` (``"3"`` becomes ``3``).

        Raises ``ValueError`` (``msgspec.ValidationError``, or pydantic's reason when pydantic
        describes the annotation) for a value that does not convert.
        """
        if self.text_converter is not None:
            return self.text_converter(value)
        if not self.converts:
            return value if isinstance(value, str) else ",".join(value)
        if self.splits and isinstance(value, str):
            value = value.split(",") if value else []
        return msgspec.convert(value, self.annotation, strict=False)


@dataclass(slots=True, eq=False, repr=False)
class Handler:
    """A user function as read at registration, and the one way to call it."""

    fn: Callable[..., Any]
    #: How the function runs.
    mode: Mode
    #: The parameters that receive values, in order.
    parameters: tuple[Parameter, ...]
    #: The parameters that receive the :class:`Context`.
    context_names: tuple[str, ...]
    #: The positional-only parameters (values or the context), passed positionally in order.
    positional: tuple[str, ...]
    #: The return annotation (a generator's as ``list[T]``); ``inspect.Parameter.empty`` when
    #: there is none.
    returns: Any
    #: Whether a sync function (or generator) runs in the request's task rather than in a
    #: worker thread: its author declared that it does not block (``blocking=False``).
    inline: bool = False
    #: The function's code found never to suspend (see :attr:`never_suspends`), else ``None``.
    judged: JudgedCode | None = field(init=False)
    _async: bool = field(init=False)
    _plain: bool = field(init=False)

    def __post_init__(self) -> None:
        self._async = self.mode is Mode.ASYNC
        self.judged = JudgedCode.of(self.fn) if self._async and not self.context_names else None
        # Nothing to inject and nothing positional: the values are the call's keywords as they
        # are (the common case).
        self._plain = not (self.context_names or self.positional)

    def __repr__(self) -> str:
        return f"<Handler {self.fn!r} ({self.mode.value})>"

    @property
    def never_suspends(self) -> bool:
        """Whether a call always ends without waiting (see :mod:`.eager`): an ``async def``
        that never suspends, with no context to reach anything that does, still running the
        code read at registration."""
        judged = self.judged
        return judged is not None and judged.holds

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the parameters that receive values, in order."""
        return tuple(parameter.name for parameter in self.parameters)

    async def call(self, ctx: HandlerContext, values: dict[str, Any]) -> Any:
        """Call the function with ``values`` by name (the dict is consumed) and ``ctx`` injected;
        its value."""
        args: tuple[Any, ...] = ()
        if not self._plain:
            for name in self.context_names:
                values[name] = ctx
            args = tuple(values.pop(name) for name in self.positional)
        if self._async:
            return await self.fn(*args, **values)
        mode = self.mode
        if mode is Mode.SYNC:
            if self.inline:
                return self.fn(*args, **values)
            return await run_sync_call(functools.partial(self.fn, *args, **values))
        if mode is Mode.GENERATOR:
            if self.inline:
                return _collect(self.fn, args, values)
            return await run_sync_call(functools.partial(_collect, self.fn, args, values))
        if mode is Mode.ASYNCIO:
            from .asyncio_bridge import call_on_asyncio  # only for servers that use asyncio

            return await call_on_asyncio(ctx, self.fn, args, values)
        return [item async for item in self.fn(*args, **values)]

    def values_from_text(
        self, given: Mapping[str, str | Sequence[str]], owner: str
    ) -> dict[str, Any]:
        """The values of a call whose values came as text (a prompt's arguments, a URI
        template's variables), each converted by :meth:`Parameter.from_text`.

        A missing value leaves its parameter at its default; a missing required one, or one that
        does not convert, gets ``InvalidParams`` (-32602) naming it and ``owner`` (``"prompt
        'review'"``). Values for names that are not parameters are not looked at.
        """
        values: dict[str, Any] = {}
        for parameter in self.parameters:
            if parameter.name not in given:
                if parameter.required:
                    raise InvalidParams(f"Missing required argument {parameter.name!r} for {owner}")
                if is_field_info(parameter.default):  # ``= Field(default=...)``: its value
                    values[parameter.name] = parameter.default.get_default(
                        call_default_factory=True
                    )
                continue
            value = given[parameter.name]
            try:
                values[parameter.name] = parameter.from_text(value)
            except ValueError as exc:
                reason = _described_refusal(parameter.annotation, value) or str(exc)
                raise InvalidParams(
                    f"Invalid value for argument {parameter.name!r} of {owner}: {reason}"
                ) from None
        return values

    def take_values(self, names: Sequence[str], what: str, owner: str) -> tuple[str, ...]:
        """The parameters that receive values passed in order (a completer's ``value`` and
        ``arguments``): the first ``len(names)`` ones. ``ValueError`` when there are fewer, or
        when a later one has no default."""
        if len(self.parameters) < len(names):
            raise ValueError(
                f"{owner}: {what} is called with {len(names)} values ({', '.join(names)}), but"
                f" {_name_of(self.fn)!r} takes {len(self.parameters)} besides the context"
            )
        extra = [p.name for p in self.parameters[len(names) :] if p.required]
        if extra:
            raise ValueError(
                f"{owner}: {what} is called with ({', '.join(names)}) only, but"
                f" {_name_of(self.fn)!r} also requires {', '.join(map(repr, extra))}"
            )
        return self.names[: len(names)]


def _collect(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    return list(fn(*args, **kwargs))


def read_handler(fn: Callable[..., Any], owner: str) -> Handler:
    """Read ``fn`` (a function, method, ``functools.partial`` or callable object) once.

    ``owner`` names what ``fn`` is registered as (``"Tool 'add'"``), for error messages.
    Raises ``ValueError`` for what the module docstring lists.
    """
    if not callable(fn):
        raise TypeError(f"{owner}: {fn!r} is not callable")
    target = underlying_callable(fn)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{owner}: cannot read the signature of {fn!r}: {exc}") from None
    hints = _resolve_hints(target, owner)
    parameters: list[Parameter] = []
    contexts: list[str] = []
    positional: list[str] = []
    for parameter in signature.parameters.values():
        annotation = hints.get(parameter.name, Any)
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            stars = "*" if parameter.kind is parameter.VAR_POSITIONAL else "**"
            raise ValueError(
                f"{owner}: *args and **kwargs are not supported ({_name_of(fn)!r} has"
                f" {stars}{parameter.name}); declare each parameter by name"
            )
        if parameter.kind is parameter.POSITIONAL_ONLY:
            positional.append(parameter.name)
        if _asks_for(annotation, RequestContext):
            raise ValueError(
                f"{owner}: parameter {parameter.name!r} is annotated RequestContext; annotate it"
                " mcptrio.Context, which receives the request's context (its id, session,"
                " progress, logging, sampling, elicitation, roots, cancel scope and arguments)"
            )
        if _asks_for(annotation, HandlerContext):
            contexts.append(parameter.name)
        else:
            parameters.append(
                Parameter(
                    parameter.name,
                    annotation,
                    parameter.default,
                    converts=_converts(annotation),
                    splits=_splits(annotation),
                    text_converter=text_converter(annotation),
                )
            )
    mode = _mode_of(fn, target)
    returns = hints.get("return", _EMPTY)
    if mode in (Mode.GENERATOR, Mode.ASYNC_GENERATOR):
        returns = _as_list(returns)
    return Handler(
        fn,
        mode=mode,
        parameters=tuple(parameters),
        context_names=tuple(contexts),
        positional=tuple(positional),
        returns=returns,
    )


def underlying_callable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The function whose hints and docstring describe ``fn``.

    Sees through ``functools.partial``; for a callable object that is not a function or method,
    its class's ``__call__``.
    """
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.isroutine(fn) or inspect.isclass(fn):
        return fn
    call: Callable[..., Any] | None = getattr(type(fn), "__call__", None)  # noqa: B004
    return call if call is not None else fn


def default_name(fn: Callable[..., Any]) -> str | None:
    """The name ``fn`` goes by: a function's ``__name__`` (not a lambda's), a callable object's
    class name; ``None`` when it has none."""
    target = underlying_callable(fn)
    if target is not fn and not isinstance(fn, functools.partial):
        return type(fn).__name__
    name = getattr(target, "__name__", None)
    return name if isinstance(name, str) and name and name != "<lambda>" else None


def docstring(fn: Callable[..., Any]) -> str | None:
    """The cleaned docstring of ``fn`` itself (a callable object's: its class's), if any."""
    target = underlying_callable(fn)
    # The function's own docstring: an inherited one (``object.__call__``'s) says nothing.
    doc = getattr(target, "__doc__", None)
    if not doc and target is not fn and not isinstance(fn, functools.partial):
        doc = type(fn).__doc__
    if not isinstance(doc, str):
        return None
    return inspect.cleandoc(doc) or None


def _name_of(fn: Callable[..., Any]) -> str:
    return default_name(fn) or repr(fn)


def _mode_of(fn: Callable[..., Any], target: Callable[..., Any]) -> Mode:
    if marked_for_asyncio(target):
        return Mode.ASYNCIO
    if inspect.isasyncgenfunction(target):
        return Mode.ASYNC_GENERATOR
    if inspect.isgeneratorfunction(target):
        return Mode.GENERATOR
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(target):
        return Mode.ASYNC
    return Mode.SYNC


def _asks_for(annotation: Any, kind: type) -> bool:
    """Whether ``annotation`` is ``kind`` (a subclass, ``kind | None``, inside ``Annotated``)."""
    if get_origin(annotation) is Annotated:
        return _asks_for(get_args(annotation)[0], kind)
    if get_origin(annotation) in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        return len(members) == 1 and _asks_for(members[0], kind)
    return isinstance(annotation, type) and issubclass(annotation, kind)


def _described_refusal(annotation: Any, value: str | Sequence[str]) -> str | None:
    """Why ``value`` was refused, in words, when ``annotation`` is a string whose pattern has a
    description (``Annotated[str, msgspec.Meta(pattern=..., description=...)]``, as the path
    types of :mod:`.path_parameters`); ``None`` (msgspec's own words, which quote the regular
    expression) otherwise."""
    if get_origin(annotation) is not Annotated or not isinstance(value, str):
        return None
    for meta in annotation.__metadata__:
        described = isinstance(meta, msgspec.Meta) and meta.pattern and meta.description
        if described and re.search(meta.pattern, value) is None:
            return f"{reprlib.repr(value)} is not {meta.description}"
    return None


def _converts(annotation: Any) -> bool:
    if get_origin(annotation) is Annotated:
        if any(isinstance(extra, msgspec.Meta) for extra in annotation.__metadata__):
            return True  # constraints such as min_length apply to strings too
        annotation = get_args(annotation)[0]
    return annotation is not str and annotation is not Any


def _splits(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _splits(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return any(_splits(member) for member in get_args(annotation))
    return annotation in _SEQUENCES or origin in _SEQUENCES


def _as_list(annotation: Any) -> Any:
    """``list[T]`` for a generator's ``Iterator[T]`` (and its kin); no annotation otherwise."""
    if get_origin(annotation) in _ITERATOR_ORIGINS and get_args(annotation):
        return types.GenericAlias(list, (get_args(annotation)[0],))
    return _EMPTY


def _resolve_hints(target: Callable[..., Any], owner: str) -> dict[str, Any]:
    """The type hints of ``target`` (``Annotated`` kept), or a ``ValueError`` saying what failed."""
    if inspect.isclass(target):
        target = target.__init__
    try:
        return get_type_hints(target, include_extras=True)
    except NameError:
        pass
    except Exception as exc:
        raise ValueError(f"{owner}: cannot read the type hints of {target!r}: {exc}") from None
    # String hints naming classes local to the function that registers the handler (a common
    # pattern: tools defined inside a ``build_server()``) resolve in that function's frame.
    try:
        return get_type_hints(target, localns=_registering_frame_locals(), include_extras=True)
    except NameError as exc:
        raise ValueError(
            f"{owner}: cannot resolve a type hint ({exc}). Hints written as strings (or under"
            " `from __future__ import annotations`) are resolved in the function's module and"
            " among the local variables of the code registering it: define the types they name"
            " there."
        ) from None


def _registering_frame_locals() -> dict[str, Any]:
    """The local variables of the nearest caller outside mcptrio (the code registering)."""
    frame = inspect.currentframe()
    try:
        while frame is not None:
            module = frame.f_globals.get("__name__", "")
            if module != "mcptrio" and not module.startswith("mcptrio."):
                return dict(frame.f_locals)
            frame = frame.f_back
        return {}
    finally:
        del frame
