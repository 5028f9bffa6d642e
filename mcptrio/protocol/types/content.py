"""Content blocks: what tool results, prompt messages and sampling messages are made of.

Content blocks are msgspec *tagged* structs keyed on ``type``, so the unions below decode by
their ``type`` member and always encode it:

============================  ==================  ==========================================
struct                        ``type``            added in
============================  ==================  ==========================================
:class:`TextContent`          ``text``            2024-11-05
:class:`ImageContent`         ``image``           2024-11-05
:class:`EmbeddedResource`     ``resource``        2024-11-05
:class:`AudioContent`         ``audio``           2025-03-26
:class:`ResourceLink`         ``resource_link``   2025-06-18 (defined with resources)
:class:`ToolUseContent`       ``tool_use``        2025-11-25 (sampling only)
:class:`ToolResultContent`    ``tool_result``     2025-11-25 (sampling only)
============================  ==================  ==========================================

- :data:`ContentBlock` (tool results, prompt messages, tool-result content) is text, image,
  audio, resource link or embedded resource.
- :data:`SamplingContent` (``SamplingMessageContentBlock`` in the schema) is text, image, audio,
  tool use or tool result.

Other revision notes: ``annotations`` exists on every block (2024-11-05 had it through the
``Annotated`` base; 2025-03-26 named the type ``Annotations``; 2025-06-18 added
``lastModified``). ``_meta`` on blocks is 2025-06-18+.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from ..base import HasMeta
from .common import Annotations
from .resources import ResourceContents, ResourceLink

__all__ = [
    "AnnotatedBlock",
    "AudioContent",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "SamplingContent",
    "SamplingMessageContentBlock",
    "TextContent",
    "ToolResultContent",
    "ToolUseContent",
]


class AnnotatedBlock(HasMeta, kw_only=True):
    """What every content block but tool use and tool result carries: ``annotations`` and
    ``_meta``."""

    annotations: Annotations | None = None


class TextContent(AnnotatedBlock, kw_only=True, tag_field="type", tag="text"):
    """Text provided to or from an LLM."""

    text: str


class _Media(AnnotatedBlock, kw_only=True):
    """Binary media: base64 ``data`` and its ``mimeType``."""

    data: str
    mime_type: str


class ImageContent(_Media, kw_only=True, tag_field="type", tag="image"):
    """An image: base64 ``data`` and its ``mimeType``."""


class AudioContent(_Media, kw_only=True, tag_field="type", tag="audio"):
    """Audio: base64 ``data`` and its ``mimeType`` (2025-03-26+)."""


class EmbeddedResource(AnnotatedBlock, kw_only=True, tag_field="type", tag="resource"):
    """The contents of a resource, embedded in a prompt or tool result."""

    resource: ResourceContents


#: The content of tool results, prompt messages and tool-result content blocks.
ContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
)


class ToolUseContent(HasMeta, kw_only=True, tag_field="type", tag="tool_use"):
    """A tool call requested by the model in a sampling response (2025-11-25+)."""

    id: str
    name: str
    input: dict[str, Any]


class ToolResultContent(HasMeta, kw_only=True, tag_field="type", tag="tool_result"):
    """The result of a tool call, sent back to the model in sampling (2025-11-25+)."""

    tool_use_id: str
    content: list[ContentBlock]
    structured_content: dict[str, Any] | None = None
    is_error: bool | None = None


#: A content block of a sampling message (``SamplingMessageContentBlock`` in the schema).
SamplingContent: TypeAlias = (
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent
)
#: The schema's name for :data:`SamplingContent`.
SamplingMessageContentBlock: TypeAlias = SamplingContent
