"""Prompt messages as the official SDK writes them: ``UserMessage("...")``,
``AssistantMessage(Image(...))``, and what a prompt function's value turns into."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ...protocol.types import PromptMessage, TextContent
from .media import Audio, Image

__all__ = ["AssistantMessage", "Message", "UserMessage", "to_messages"]

Role = Literal["user", "assistant"]


class Message:
    """A message of a prompt: a role and one content block (a ``str`` is text, an ``Image`` or
    ``Audio`` is its block, a content block is kept)."""

    __slots__ = ("content", "role")
    default_role: Role = "user"

    def __init__(self, content: Any, *, role: Role | None = None) -> None:
        if isinstance(content, str):
            content = TextContent(text=content)
        elif isinstance(content, Image | Audio):
            content = content.to_content()
        self.content = content
        self.role: Role = role or self.default_role

    def to_prompt_message(self) -> PromptMessage:
        return PromptMessage(role=self.role, content=self.content)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(role={self.role!r}, content={self.content!r})"


class UserMessage(Message):
    """A message from the user."""

    __slots__ = ()
    default_role: Role = "user"


class AssistantMessage(Message):
    """A message from the assistant."""

    __slots__ = ()
    default_role: Role = "assistant"


def to_messages(value: Any) -> list[PromptMessage]:
    """The messages a prompt function's value stands for: a message, a ``str``, a content block,
    an ``Image``/``Audio`` or a ``{"role": ..., "content": ...}`` dict, or a list of those."""
    items = value if isinstance(value, list | tuple) else [value]
    out: list[PromptMessage] = []
    for item in items:
        if isinstance(item, Message):
            out.append(item.to_prompt_message())
        elif isinstance(item, Mapping):
            content = item.get("content")
            if isinstance(content, Mapping) and content.get("type") == "text":
                content = str(content.get("text", ""))
            out.append(Message(content, role=item.get("role", "user")).to_prompt_message())
        else:
            out.append(UserMessage(item).to_prompt_message())
    return out
