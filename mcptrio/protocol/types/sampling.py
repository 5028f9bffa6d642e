"""Sampling: ``sampling/createMessage`` (server to client, all four revisions).

Revision notes:

- 2024-11-05: messages of text or image content; ``modelPreferences``, ``systemPrompt``,
  ``includeContext``, ``temperature``, ``maxTokens``, ``stopSequences``, ``metadata``.
- 2025-03-26: audio content.
- 2025-11-25: ``_meta`` on :class:`SamplingMessage`; ``tools`` and ``toolChoice``
  (:class:`ToolChoice`; need the client capability ``sampling.tools``), ``task`` (task
  augmentation), message and result ``content`` may be a single block *or a list* of
  :data:`~mcptrio.protocol.types.content.SamplingContent`, which gains ``tool_use`` /
  ``tool_result`` blocks, and ``stopReason`` may be ``"toolUse"``. ``includeContext`` values
  other than ``"none"`` are soft-deprecated.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from ..base import HasMeta, Request, Result, WireStruct
from .common import Role
from .content import SamplingContent
from .tasks import TaskMetadata
from .tools import Tool

__all__ = [
    "CreateMessageRequest",
    "CreateMessageResult",
    "IncludeContext",
    "ModelHint",
    "ModelPreferences",
    "SamplingMessage",
    "SamplingMessageContent",
    "StopReason",
    "ToolChoice",
]

#: Which MCP servers' context the client should add to the prompt.
IncludeContext: TypeAlias = Literal["none", "thisServer", "allServers"]
#: Why sampling stopped: ``"endTurn"``, ``"stopSequence"``, ``"maxTokens"``, ``"toolUse"``
#: (2025-11-25) or any other string.
StopReason: TypeAlias = str
#: The ``content`` of a sampling message or result: one block, or (2025-11-25) a list of them.
SamplingMessageContent: TypeAlias = SamplingContent | list[SamplingContent]


class ModelHint(WireStruct, kw_only=True):
    """A hint for model selection: ``name`` is a (sub)string of a model name."""

    name: str | None = None


class ModelPreferences(WireStruct, kw_only=True):
    """The server's model preferences; priorities are in 0..1."""

    hints: list[ModelHint] | None = None
    cost_priority: float | None = None
    speed_priority: float | None = None
    intelligence_priority: float | None = None


class SamplingMessage(HasMeta, kw_only=True):
    """One message of a sampling conversation."""

    role: Role
    content: SamplingMessageContent


class ToolChoice(WireStruct, kw_only=True):
    """How the model should use the offered tools (2025-11-25); ``mode`` defaults to ``auto``."""

    mode: Literal["auto", "required", "none"] | None = None


class CreateMessageResult(Result, kw_only=True):
    """The client's answer to ``sampling/createMessage``: the sampled message."""

    role: Role
    content: SamplingMessageContent
    model: str
    stop_reason: StopReason | None = None


class CreateMessageRequest(Request[CreateMessageResult], kw_only=True):
    """``sampling/createMessage``: the server asks the client to sample an LLM."""

    METHOD = "sampling/createMessage"

    messages: list[SamplingMessage]
    max_tokens: int
    model_preferences: ModelPreferences | None = None
    system_prompt: str | None = None
    include_context: IncludeContext | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    metadata: dict[str, Any] | None = None
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = None
    task: TaskMetadata | None = None
