"""Prompts: a Python function, described to the client and rendered into messages.

::

    @server.prompt()
    def review(code: str, language: Annotated[str, "Language of the code"] = "python") -> str:
        '''Ask for a review of some code.'''
        return f"Please review this {language} code:\\n{code}"

The function's signature describes the prompt's arguments: a parameter without a default is a
required argument, one with a default an optional one. An argument's ``description`` (and, from
2025-06-18, ``title``) come from ``Annotated[T, msgspec.Meta(description=..., title=...)]`` or
from a plain string ``Annotated[T, "description"]``. A parameter annotated
:class:`~mcptrio.server.context.Context` receives the request's context instead. The prompt's
description defaults to the function's cleaned docstring.

Arguments arrive as strings. A parameter annotated ``str`` (or not at all) gets the string as
is; any other type (``int``, ``float``, ``bool``, an ``Enum``, a ``Literal``, ``Annotated``
constraints...) is converted with ``msgspec.convert(..., strict=False)``, so ``"3"`` becomes
``3`` and ``"true"`` becomes ``True``. A missing required argument, an unknown argument or a
value that does not convert gets ``InvalidParams`` (-32602) naming the argument, as the spec
asks; the function is not called.

What the function returns becomes the ``GetPromptResult``:

- a ``str`` or a content block (``TextContent``, ``ImageContent``, ``AudioContent``,
  ``EmbeddedResource``, ``ResourceLink``): one user message;
- a :class:`~mcptrio.protocol.types.PromptMessage` (see :func:`user` and :func:`assistant`): that
  message;
- a list or tuple of any of those: the messages in order (strings and blocks as user messages);
- a ``GetPromptResult``: used as it is.

The messages are built for the newest revision; the session's connection fits them to the
negotiated one rather than send them invalid (:mod:`mcptrio.protocol.fitting`: before
2025-03-26 an ``AudioContent`` becomes a ``TextContent`` saying that audio was left out; before
2025-06-18 a ``ResourceLink`` becomes a ``TextContent`` naming the link, and ``_meta`` and
``annotations.lastModified`` are dropped; ``icons`` are dropped before 2025-11-25).

Synchronous functions run in a worker thread so they never block the event loop; async ones run
in the request's task and are cancelled with it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin, get_type_hints

import msgspec
from msgspec import UNSET

from ..protocol.errors import InvalidParams
from ..protocol.types import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    Icon,
    ImageContent,
    Prompt,
    PromptArgument,
    PromptMessage,
    ResourceLink,
    TextContent,
)
from .completion import Completer, call_user_function, check_completions, is_context_annotation
from .context import Context

__all__ = [
    "PromptRegistry",
    "RegisteredPrompt",
    "assistant",
    "make_prompt",
    "to_prompt_messages",
    "user",
]

_CONTENT_TYPES = (
    TextContent,
    ImageContent,
    AudioContent,
    ResourceLink,
    EmbeddedResource,
)
_MESSAGE_LIKE = (str, TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)


def _message(role: Any, content: str | ContentBlock) -> PromptMessage:
    if isinstance(content, str):
        return PromptMessage(role=role, content=TextContent(text=content))
    if isinstance(content, _CONTENT_TYPES):
        return PromptMessage(role=role, content=content)
    raise TypeError(f"A prompt message holds a str or a content block, not {content!r}")


def user(content: str | ContentBlock) -> PromptMessage:
    """A message from the user: ``user("Review this")`` or ``user(ImageContent(...))``."""
    return _message("user", content)


def assistant(content: str | ContentBlock) -> PromptMessage:
    """A message from the assistant, for example to start its answer in a prompt."""
    return _message("assistant", content)


def to_prompt_messages(value: Any) -> list[PromptMessage]:
    """The messages a prompt function's return value stands for (see the module docstring)."""
    if isinstance(value, PromptMessage):
        return [value]
    if isinstance(value, _MESSAGE_LIKE):
        return [user(value)]
    if isinstance(value, list | tuple):
        return [item if isinstance(item, PromptMessage) else _item(item) for item in value]
    raise TypeError(
        "A prompt must return a str, a content block, a PromptMessage, a list of those, or a"
        f" GetPromptResult, not {type(value).__name__}"
    )


def _item(item: Any) -> PromptMessage:
    if isinstance(item, _MESSAGE_LIKE):
        return user(item)
    raise TypeError(
        "A prompt's list of messages holds str, content blocks and PromptMessage,"
        f" not {type(item).__name__}"
    )


# ------------------------------------------------------------------ prompts


@dataclass(frozen=True, slots=True)
class _Parameter:
    name: str
    annotation: Any
    required: bool
    needs_conversion: bool


class RegisteredPrompt:
    """A prompt as the server keeps it: its description, its completers, how to render it."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        title: str | None,
        description: str | None,
        icons: Sequence[Icon] | None,
        meta: Mapping[str, Any] | None,
        arguments: tuple[PromptArgument, ...],
        parameters: tuple[_Parameter, ...],
        context_parameter: str | None,
        completions: dict[str, Completer | Sequence[str]],
    ) -> None:
        self.fn = fn
        self.name = name
        self.title = title
        self.description = description
        self.icons: tuple[Icon, ...] | None = None if icons is None else tuple(icons)
        self.meta: dict[str, Any] | None = None if meta is None else dict(meta)
        #: The arguments, as described to clients of the latest revision (name, required...).
        self.arguments = arguments
        #: Completers per argument name (a callable or the candidate values).
        self.completions = completions
        self._parameters = parameters
        self._context_parameter = context_parameter
        self._definition: Prompt | None = None

    def __repr__(self) -> str:
        return f"<RegisteredPrompt {self.name!r}>"

    @property
    def definition(self) -> Prompt:
        """The ``Prompt`` for ``prompts/list``, in the newest shape."""
        if self._definition is None:
            self._definition = Prompt(
                name=self.name,
                title=UNSET if self.title is None else self.title,
                description=UNSET if self.description is None else self.description,
                arguments=list(self.arguments) if self.arguments else UNSET,
                icons=list(self.icons) if self.icons else UNSET,
                meta=UNSET if self.meta is None else self.meta,
            )
        return self._definition

    async def render(self, ctx: Context, arguments: Mapping[str, str] | None) -> GetPromptResult:
        """Check and convert ``arguments``, call the function, return its messages.

        Raises ``InvalidParams`` for an unknown or missing argument or a value that does not
        convert. Cancelling the request cancels an async function at its next checkpoint; a
        synchronous one finishes in its thread and its result is dropped.
        """
        kwargs = self._arguments(arguments or {})
        if self._context_parameter is not None:
            kwargs[self._context_parameter] = ctx
        value = await call_user_function(self.fn, **kwargs)
        if isinstance(value, GetPromptResult):
            result = value
        else:
            result = GetPromptResult(
                messages=to_prompt_messages(value),
                description=UNSET if self.description is None else self.description,
            )
        return result

    def _arguments(self, given: Mapping[str, str]) -> dict[str, Any]:
        known = {parameter.name for parameter in self._parameters}
        unknown = sorted(name for name in given if name not in known)
        if unknown:
            raise InvalidParams(
                f"Prompt {self.name!r} has no argument {', '.join(repr(n) for n in unknown)}"
            )
        kwargs: dict[str, Any] = {}
        for parameter in self._parameters:
            if parameter.name not in given:
                if parameter.required:
                    raise InvalidParams(
                        f"Missing required argument {parameter.name!r} for prompt {self.name!r}"
                    )
                continue
            value = given[parameter.name]
            if not isinstance(value, str):
                raise InvalidParams(
                    f"Argument {parameter.name!r} of prompt {self.name!r} must be a string"
                )
            if parameter.needs_conversion:
                try:
                    kwargs[parameter.name] = msgspec.convert(
                        value, parameter.annotation, strict=False
                    )
                except msgspec.ValidationError as exc:
                    raise InvalidParams(
                        f"Invalid value for argument {parameter.name!r} of prompt"
                        f" {self.name!r}: {exc}"
                    ) from None
            else:
                kwargs[parameter.name] = value
        return kwargs


def _needs_conversion(annotation: Any) -> bool:
    """Whether a string argument must go through ``msgspec.convert`` for this annotation."""
    if get_origin(annotation) is Annotated:
        if any(isinstance(extra, msgspec.Meta) for extra in annotation.__metadata__):
            return True  # constraints such as min_length apply to strings too
        annotation = get_args(annotation)[0]
    return annotation is not str and annotation is not Any


def _argument_texts(annotation: Any) -> tuple[str | None, str | None]:
    """The (description, title) an ``Annotated`` annotation gives an argument."""
    description: str | None = None
    title: str | None = None
    if get_origin(annotation) is Annotated:
        for extra in annotation.__metadata__:
            if isinstance(extra, msgspec.Meta):
                description = extra.description or description
                title = extra.title or title
            elif isinstance(extra, str):
                description = extra
    return description, title


def make_prompt(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    icons: Sequence[Icon] | None = None,
    meta: Mapping[str, Any] | None = None,
    completions: Mapping[str, Completer | Sequence[str]] | None = None,
) -> RegisteredPrompt:
    """Describe ``fn`` as a prompt (see the module docstring).

    ``completions`` maps argument names to completers (see :mod:`mcptrio.server.completion`).
    Raises ``ValueError`` for an empty name, ``*args`` / ``**kwargs`` / positional-only
    parameters, or completions for an argument the prompt does not have, and ``TypeError`` for
    a completer that is neither callable nor a sequence of strings.
    """
    prompt_name = name if name is not None else getattr(fn, "__name__", "")
    if not prompt_name:
        raise ValueError(f"A prompt needs a non-empty name (got {prompt_name!r} for {fn!r})")
    hints = get_type_hints(fn, include_extras=True)
    arguments: list[PromptArgument] = []
    parameters: list[_Parameter] = []
    context_parameter: str | None = None
    for parameter in inspect.signature(fn).parameters.values():
        annotation = hints.get(parameter.name, Any)
        if is_context_annotation(annotation):
            context_parameter = parameter.name
            continue
        if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            raise ValueError(
                f"Prompt {prompt_name!r}: parameter {parameter.name!r} must be passable by"
                " keyword (no *args, **kwargs or positional-only parameters)"
            )
        required = parameter.default is inspect.Parameter.empty
        argument_description, argument_title = _argument_texts(annotation)
        parameters.append(
            _Parameter(
                name=parameter.name,
                annotation=annotation,
                required=required,
                needs_conversion=_needs_conversion(annotation),
            )
        )
        arguments.append(
            PromptArgument(
                name=parameter.name,
                title=UNSET if argument_title is None else argument_title,
                description=UNSET if argument_description is None else argument_description,
                required=required,
            )
        )
    doc = description if description is not None else inspect.getdoc(fn)
    return RegisteredPrompt(
        fn,
        name=prompt_name,
        title=title,
        description=doc or None,
        icons=icons,
        meta=meta,
        arguments=tuple(arguments),
        parameters=tuple(parameters),
        context_parameter=context_parameter,
        completions=check_completions(
            completions, [a.name for a in arguments], f"Prompt {prompt_name!r}"
        ),
    )


class PromptRegistry:
    """The prompts of a server, in registration order.

    ``on_change`` is called after each :meth:`add` and each :meth:`remove` that removed
    something; the server sends ``notifications/prompts/list_changed`` from it.
    """

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        self._prompts: dict[str, RegisteredPrompt] = {}
        self._on_change = on_change

    def __len__(self) -> int:
        return len(self._prompts)

    def __contains__(self, name: object) -> bool:
        return name in self._prompts

    def add(self, prompt: RegisteredPrompt) -> RegisteredPrompt:
        """Register ``prompt``; a second prompt of the same name is refused (``ValueError``)."""
        if prompt.name in self._prompts:
            raise ValueError(f"A prompt named {prompt.name!r} is already registered")
        self._prompts[prompt.name] = prompt
        if self._on_change is not None:
            self._on_change()
        return prompt

    def remove(self, name: str) -> bool:
        """Unregister the prompt ``name``; whether there was one."""
        if self._prompts.pop(name, None) is None:
            return False
        if self._on_change is not None:
            self._on_change()
        return True

    def get(self, name: str) -> RegisteredPrompt | None:
        return self._prompts.get(name)

    def prompts(self) -> list[RegisteredPrompt]:
        """Every prompt, in registration order."""
        return list(self._prompts.values())

    def definitions(self) -> list[Prompt]:
        """The ``Prompt`` of every prompt for ``prompts/list``, in order."""
        return [prompt.definition for prompt in self._prompts.values()]

    async def render(
        self, ctx: Context, name: str, arguments: Mapping[str, str] | None
    ) -> GetPromptResult:
        """Answer ``prompts/get``: an unknown prompt gets ``InvalidParams`` (-32602)."""
        prompt = self._prompts.get(name)
        if prompt is None:
            raise InvalidParams(f"Unknown prompt: {name!r}")
        return await prompt.render(ctx, arguments)
