"""Prompts: :class:`Prompt`, :class:`PromptArgument`, :class:`PromptMessage` and the methods
``prompts/list``, ``prompts/get`` and ``notifications/prompts/list_changed`` (all 2024-11-05).

Revision notes: prompt message content gained audio in 2025-03-26 and became the full
:data:`~mcptrio.protocol.types.content.ContentBlock` (with resource links) in 2025-06-18, which
also added ``title`` to prompts and arguments and ``_meta`` to prompts. ``icons`` on prompts is
2025-11-25.
"""

from __future__ import annotations

from ..base import Notification, Result, WireStruct
from .common import (
    BaseMetadata,
    CacheablePaginatedResult,
    Described,
    PaginatedRequest,
    Role,
)
from .content import ContentBlock
from .input_required import InputResponseRequest

__all__ = [
    "GetPromptRequest",
    "GetPromptResult",
    "ListPromptsRequest",
    "ListPromptsResult",
    "Prompt",
    "PromptArgument",
    "PromptListChangedNotification",
    "PromptMessage",
]


class PromptArgument(BaseMetadata, kw_only=True):
    """An argument a prompt template accepts."""

    description: str | None = None
    required: bool | None = None


class Prompt(Described, kw_only=True):
    """A prompt or prompt template the server offers."""

    arguments: list[PromptArgument] | None = None


class PromptMessage(WireStruct, kw_only=True):
    """One message of a prompt."""

    role: Role
    content: ContentBlock


class ListPromptsResult(CacheablePaginatedResult, kw_only=True):
    """The result of ``prompts/list``."""

    prompts: list[Prompt]


class ListPromptsRequest(PaginatedRequest[ListPromptsResult], kw_only=True):
    """``prompts/list``: list the server's prompts (paginated)."""

    METHOD = "prompts/list"


class GetPromptResult(Result, kw_only=True):
    """The result of ``prompts/get``."""

    messages: list[PromptMessage]
    description: str | None = None


class GetPromptRequest(InputResponseRequest[GetPromptResult], kw_only=True):
    """``prompts/get``: render a prompt with string ``arguments``."""

    METHOD = "prompts/get"

    name: str
    arguments: dict[str, str] | None = None


class PromptListChangedNotification(Notification, kw_only=True):
    """``notifications/prompts/list_changed``: the prompt list changed (params optional)."""

    METHOD = "notifications/prompts/list_changed"
