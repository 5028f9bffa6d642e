"""Prompts: a Python function, described to the client and rendered into messages.

::

    @server.prompt
    def review(code: str, language: Annotated[str, "Language of the code"] = "python") -> str:
        '''Ask for a review of some code.'''
        return f"Please review this {language} code:\\n{code}"

The function's signature describes the prompt's arguments: a parameter without a default is a
required argument, one with a default an optional one. An argument's ``description`` (and, from
2025-06-18, ``title``) come from ``Annotated[T, msgspec.Meta(description=..., title=...)]`` or
from a plain string ``Annotated[T, "description"]``. The prompt's description defaults to the
function's cleaned docstring.

Arguments arrive as strings. A parameter annotated ``str`` (or not at all) gets the string as
is; any other type (``int``, ``float``, ``bool``, an ``Enum``, a ``Literal``, ``Annotated``
constraints...) is converted with ``msgspec.convert(..., strict=False)``, so ``"3"`` becomes
``3`` and ``"true"`` becomes ``True``; comma-separated text splits for a ``list`` annotation
(the same text conversion as a URI template's variables, :meth:`.handler.Parameter.from_text`).
A missing required argument, an unknown argument or a
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

The function is read and called as every handler is (see :mod:`.handler`): a parameter
annotated :class:`~mcptrio.server.context.Context` receives the request's context; synchronous
functions run in a worker thread, async ones in the request's task; a generator's items are the
messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Unpack, get_origin

import msgspec

from ..protocol.errors import InvalidParams
from ..protocol.types import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    Prompt,
    PromptArgument,
    PromptMessage,
    ResourceLink,
    TextContent,
)
from .completion import ArgumentCompleter, Completer, read_completions
from .handler import Handler, default_name, read_handler
from .handler_context import HandlerContext
from .pydantic_values import is_field_info
from .registry import DescriptionOptions, Registered

__all__ = [
    "PromptOptions",
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


class PromptOptions(DescriptionOptions, total=False):
    """The options of a prompt: the keywords of ``@server.prompt``, ``Server.add_prompt`` and
    :func:`make_prompt`, besides those every kind has (:class:`DescriptionOptions`)."""

    #: Completers per argument name: the candidate values, or a function ``(value, arguments)``
    #: (see :mod:`mcptrio.server.completion`).
    completions: Mapping[str, Completer | Sequence[str]] | None


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


class RegisteredPrompt(Registered[Prompt]):
    """A prompt as the server keeps it: its description, its completers, how to render it."""

    __slots__ = ("arguments", "completions")
    handler: Handler

    def __init__(
        self,
        name: str,
        handler: Handler,
        arguments: tuple[PromptArgument, ...],
        options: PromptOptions,
    ) -> None:
        super().__init__(name, handler, options)
        #: The arguments, as described to clients of the latest revision (name, required...).
        self.arguments = arguments
        #: Completers per argument name, read at registration.
        self.completions: dict[str, ArgumentCompleter] = read_completions(
            options.get("completions"), [a.name for a in arguments], f"Prompt {name!r}"
        )

    @property
    def fn(self) -> Callable[..., Any]:
        return self.handler.fn

    def __repr__(self) -> str:
        return f"<RegisteredPrompt {self.name!r}>"

    def _describe(self) -> Prompt:
        return Prompt(
            name=self.name,
            title=self.title,
            description=self.description,
            arguments=list(self.arguments) if self.arguments else None,
            icons=list(self.icons) if self.icons else None,
            meta=self.meta,
        )

    async def render(
        self, ctx: HandlerContext, arguments: Mapping[str, str] | None
    ) -> GetPromptResult:
        """Check and convert ``arguments``, call the function, return its messages.

        Raises ``InvalidParams`` for an unknown or missing argument or a value that does not
        convert. Cancelling the request cancels an async function at its next checkpoint; a
        synchronous one finishes in its thread and its result is dropped.
        """
        value = await self.handler.call(ctx, self._arguments(arguments or {}))
        if isinstance(value, GetPromptResult):
            result = value
        else:
            result = GetPromptResult(
                messages=to_prompt_messages(value),
                description=self.description,
            )
        return result

    def _arguments(self, given: Mapping[str, str]) -> dict[str, Any]:
        parameters = self.handler.parameters
        known = {parameter.name for parameter in parameters}
        unknown = sorted(name for name in given if name not in known)
        if unknown:
            raise InvalidParams(
                f"Prompt {self.name!r} has no argument {', '.join(repr(n) for n in unknown)}"
            )
        strings = [name for name, value in given.items() if not isinstance(value, str)]
        if strings:
            raise InvalidParams(f"Argument {strings[0]!r} of prompt {self.name!r} must be a string")
        return self.handler.values_from_text(given, f"prompt {self.name!r}")


def _argument_texts(annotation: Any, default: Any) -> tuple[str | None, str | None]:
    """The (description, title) an ``Annotated`` annotation (or a pydantic ``Field(...)``
    default) gives an argument."""
    description: str | None = None
    title: str | None = None
    extras = list(annotation.__metadata__) if get_origin(annotation) is Annotated else []
    if is_field_info(default):
        extras.append(default)
    for extra in extras:
        if isinstance(extra, msgspec.Meta) or is_field_info(extra):
            description = extra.description or description
            title = extra.title or title
        elif isinstance(extra, str):
            description = extra
    return description, title


def make_prompt(fn: Callable[..., Any], **options: Unpack[PromptOptions]) -> RegisteredPrompt:
    """Describe ``fn`` as a prompt (see the module docstring and :class:`PromptOptions`).

    Raises ``ValueError`` for an empty name, a signature the handler reader refuses (see
    :mod:`.handler`), or completions for an argument the prompt does not have, and
    ``TypeError`` for a completer that is neither callable nor a sequence of strings.
    """
    name = options.get("name")
    if name is None:
        name = default_name(fn)
    if not name:
        raise ValueError(f"A prompt needs a non-empty name (got {name!r} for {fn!r}): pass name=")
    handler = read_handler(fn, f"Prompt {name!r}")
    arguments: list[PromptArgument] = []
    for parameter in handler.parameters:
        description, title = _argument_texts(parameter.annotation, parameter.default)
        arguments.append(
            PromptArgument(
                name=parameter.name,
                title=title,
                description=description,
                required=parameter.required,
            )
        )
    return RegisteredPrompt(name, handler, tuple(arguments), options)
