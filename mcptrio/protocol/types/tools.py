"""Tools: :class:`Tool` and its annotations, ``tools/list``, ``tools/call`` and list changes.

Revision notes:

- 2024-11-05: ``Tool{name, description?, inputSchema}``; ``CallToolResult{content, isError?}``
  with text, image and embedded-resource content.
- 2025-03-26: :class:`ToolAnnotations`; audio content.
- 2025-06-18: ``title``, ``outputSchema``, ``_meta`` on :class:`Tool`;
  ``structuredContent`` on :class:`CallToolResult`; resource links in content.
- 2025-11-25: ``icons`` and ``execution`` (:class:`ToolExecution`, ``taskSupport``) on
  :class:`Tool`; ``task`` on :class:`CallToolRequest` (the answer is then a
  :class:`~mcptrio.protocol.types.tasks.CreateTaskResult`).

``inputSchema`` and ``outputSchema`` are arbitrary JSON Schema objects and are kept as
``dict[str, Any]`` so they survive a round trip untouched (``$schema`` included).
"""

from __future__ import annotations

from typing import Any, Literal

from ..base import Notification, Result, WireStruct
from .common import CacheablePaginatedResult, Described, PaginatedRequest
from .content import ContentBlock
from .input_required import InputResponseRequest
from .tasks import TaskMetadata

__all__ = [
    "CallToolRequest",
    "CallToolResult",
    "ListToolsRequest",
    "ListToolsResult",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
    "ToolListChangedNotification",
]


class ToolAnnotations(WireStruct, kw_only=True):
    """Hints about a tool's behaviour (2025-03-26+); untrusted unless the server is trusted.

    Defaults when absent: ``readOnlyHint`` false, ``destructiveHint`` true, ``idempotentHint``
    false, ``openWorldHint`` true.
    """

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


class ToolExecution(WireStruct, kw_only=True):
    """How a tool may be run (2025-11-25): ``taskSupport`` defaults to ``"forbidden"``."""

    task_support: Literal["forbidden", "optional", "required"] | None = None


class Tool(Described, kw_only=True):
    """A tool the client can call."""

    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    execution: ToolExecution | None = None


class ListToolsResult(CacheablePaginatedResult, kw_only=True):
    """The result of ``tools/list``."""

    tools: list[Tool]


class ListToolsRequest(PaginatedRequest[ListToolsResult], kw_only=True):
    """``tools/list``: list the server's tools (paginated)."""

    METHOD = "tools/list"


class CallToolResult(Result, kw_only=True):
    """The result of ``tools/call``. Tool errors are reported with ``isError: true``."""

    content: list[ContentBlock]
    structured_content: dict[str, Any] | None = None
    is_error: bool | None = None


class CallToolRequest(InputResponseRequest[CallToolResult], kw_only=True):
    """``tools/call``: invoke a tool."""

    METHOD = "tools/call"

    name: str
    arguments: dict[str, Any] | None = None
    task: TaskMetadata | None = None


class ToolListChangedNotification(Notification, kw_only=True):
    """``notifications/tools/list_changed``: the server's tool list changed (params optional)."""

    METHOD = "notifications/tools/list_changed"
