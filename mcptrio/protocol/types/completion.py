"""Completion: ``completion/complete`` (all four revisions) and its references.

The ``ref`` of a request is a tagged union on ``type``: :class:`PromptReference`
(``ref/prompt``) or :class:`ResourceTemplateReference` (``ref/resource``; the schema called it
``ResourceReference`` before 2025-06-18, kept here as an alias).

Revision notes: the server capability ``completions`` appears in 2025-03-26 (2024-11-05 defines
no capability for this method); ``context.arguments`` and ``PromptReference.title`` are
2025-06-18+. ``completion.values`` holds at most 100 entries.
"""

from __future__ import annotations

from typing import TypeAlias

from ..base import Request, Result, WireStruct
from .common import BaseMetadata

__all__ = [
    "CompleteArgument",
    "CompleteContext",
    "CompleteRequest",
    "CompleteResult",
    "Completion",
    "CompletionReference",
    "PromptReference",
    "ResourceReference",
    "ResourceTemplateReference",
]


class PromptReference(BaseMetadata, kw_only=True, tag_field="type", tag="ref/prompt"):
    """Identifies a prompt (``type: "ref/prompt"``); ``title`` is 2025-06-18+."""


class ResourceTemplateReference(WireStruct, kw_only=True, tag_field="type", tag="ref/resource"):
    """Identifies a resource or resource template by URI (``type: "ref/resource"``)."""

    uri: str


#: The schema's name for :class:`ResourceTemplateReference` before 2025-06-18.
ResourceReference: TypeAlias = ResourceTemplateReference
#: What ``completion/complete`` completes an argument of.
CompletionReference: TypeAlias = PromptReference | ResourceTemplateReference


class CompleteArgument(WireStruct, kw_only=True):
    """The argument being completed and its current (partial) value."""

    name: str
    value: str


class CompleteContext(WireStruct, kw_only=True):
    """Already-resolved arguments that may inform the completion (2025-06-18+)."""

    arguments: dict[str, str] | None = None


class Completion(WireStruct, kw_only=True):
    """Completion values (at most 100), with optional ``total`` and ``hasMore``."""

    values: list[str]
    total: int | None = None
    has_more: bool | None = None


class CompleteResult(Result, kw_only=True):
    """The result of ``completion/complete``."""

    completion: Completion


class CompleteRequest(Request[CompleteResult], kw_only=True):
    """``completion/complete``: ask for completion options of a prompt or template argument."""

    METHOD = "completion/complete"

    ref: CompletionReference
    argument: CompleteArgument
    context: CompleteContext | None = None
