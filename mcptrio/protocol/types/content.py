"""Content blocks, resource contents, annotations and icons.

Content blocks are msgspec *tagged* structs keyed on ``type``, so the unions below decode by
their ``type`` member and always encode it:

============================  ==================  ==========================================
struct                        ``type``            added in
============================  ==================  ==========================================
:class:`TextContent`          ``text``            2024-11-05
:class:`ImageContent`         ``image``           2024-11-05
:class:`EmbeddedResource`     ``resource``        2024-11-05
:class:`AudioContent`         ``audio``           2025-03-26
:class:`ResourceLink`         ``resource_link``   2025-06-18
:class:`ToolUseContent`       ``tool_use``        2025-11-25 (sampling only)
:class:`ToolResultContent`    ``tool_result``     2025-11-25 (sampling only)
============================  ==================  ==========================================

- :data:`ContentBlock` (tool results, prompt messages, tool-result content) is text, image,
  audio, resource link or embedded resource.
- :data:`SamplingContent` (``SamplingMessageContentBlock`` in the schema) is text, image, audio,
  tool use or tool result.

Other revision notes: ``annotations`` exists on every block (2024-11-05 had it through the
``Annotated`` base; 2025-03-26 named the type :class:`Annotations`; 2025-06-18 added
``lastModified``). ``_meta`` on blocks and resource contents is 2025-06-18+. :class:`Icon` and
the ``icons`` lists are 2025-11-25+.

Resource contents: the schema's ``TextResourceContents | BlobResourceContents`` is not a tagged
union (the two differ only by which of ``text`` / ``blob`` is present), and msgspec cannot decode
an untagged union of structs. Both are therefore one struct, :class:`ResourceContents`, with
optional ``text`` and ``blob`` of which at least one must be present (checked on construction
and on decode). ``TextResourceContents`` and ``BlobResourceContents`` are aliases of it, so
``TextResourceContents(uri=..., text=...)`` reads like the schema and round-trips unchanged.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from ..base import UNSET, Meta, UnsetType, WireStruct, meta_field
from .common import BaseMetadata

__all__ = [
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "Icon",
    "ImageContent",
    "ResourceContents",
    "ResourceLink",
    "Role",
    "SamplingContent",
    "SamplingMessageContentBlock",
    "TextContent",
    "TextResourceContents",
    "ToolResultContent",
    "ToolUseContent",
]

#: The sender or recipient of a message (and an ``Annotations.audience`` entry).
Role: TypeAlias = Literal["user", "assistant"]


class Annotations(WireStruct, kw_only=True):
    """Hints for the client about how to use or display an object.

    ``audience`` and ``priority`` (0..1) exist since 2024-11-05; ``lastModified`` (an ISO 8601
    timestamp) since 2025-06-18.
    """

    audience: list[Role] | UnsetType = UNSET
    priority: float | UnsetType = UNSET
    last_modified: str | UnsetType = UNSET


class Icon(WireStruct, kw_only=True):
    """An icon for display (2025-11-25+).

    ``src`` is an ``https:`` or ``data:`` URI; ``sizes`` entries look like ``"48x48"`` or
    ``"any"``; ``theme`` says which background the icon is meant for.
    """

    src: str
    mime_type: str | UnsetType = UNSET
    sizes: list[str] | UnsetType = UNSET
    theme: Literal["light", "dark"] | UnsetType = UNSET


class ResourceContents(WireStruct, kw_only=True):
    """The contents of a resource: text (``text``) or binary data (``blob``, base64).

    Stands for the schema's ``TextResourceContents`` and ``BlobResourceContents`` (see the
    module docstring). ``_meta`` is 2025-06-18+.
    """

    uri: str
    mime_type: str | UnsetType = UNSET
    text: str | UnsetType = UNSET
    blob: str | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()

    def __post_init__(self) -> None:
        if self.text is UNSET and self.blob is UNSET:
            raise ValueError("resource contents need `text` or `blob`")

    @property
    def is_text(self) -> bool:
        """Whether these are text contents (``TextResourceContents``)."""
        return self.text is not UNSET

    @property
    def is_blob(self) -> bool:
        """Whether these are binary contents (``BlobResourceContents``)."""
        return self.text is UNSET and self.blob is not UNSET


#: Text contents of a resource: build with ``uri`` and ``text``.
TextResourceContents: TypeAlias = ResourceContents
#: Binary contents of a resource: build with ``uri`` and ``blob`` (base64).
BlobResourceContents: TypeAlias = ResourceContents


class TextContent(WireStruct, kw_only=True, tag_field="type", tag="text"):
    """Text provided to or from an LLM."""

    text: str
    annotations: Annotations | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class ImageContent(WireStruct, kw_only=True, tag_field="type", tag="image"):
    """An image: base64 ``data`` and its ``mimeType``."""

    data: str
    mime_type: str
    annotations: Annotations | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class AudioContent(WireStruct, kw_only=True, tag_field="type", tag="audio"):
    """Audio: base64 ``data`` and its ``mimeType`` (2025-03-26+)."""

    data: str
    mime_type: str
    annotations: Annotations | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class ResourceLink(BaseMetadata, kw_only=True, tag_field="type", tag="resource_link"):
    """A link to a resource the server can read, with the fields of a ``Resource`` (2025-06-18+).

    ``icons`` is 2025-11-25+.
    """

    uri: str
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    size: int | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class EmbeddedResource(WireStruct, kw_only=True, tag_field="type", tag="resource"):
    """The contents of a resource, embedded in a prompt or tool result."""

    resource: ResourceContents
    annotations: Annotations | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


#: The content of tool results, prompt messages and tool-result content blocks.
ContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
)


class ToolUseContent(WireStruct, kw_only=True, tag_field="type", tag="tool_use"):
    """A tool call requested by the model in a sampling response (2025-11-25+)."""

    id: str
    name: str
    input: dict[str, Any]
    meta: Meta | UnsetType = meta_field()


class ToolResultContent(WireStruct, kw_only=True, tag_field="type", tag="tool_result"):
    """The result of a tool call, sent back to the model in sampling (2025-11-25+)."""

    tool_use_id: str
    content: list[ContentBlock]
    structured_content: dict[str, Any] | UnsetType = UNSET
    is_error: bool | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


#: A content block of a sampling message (``SamplingMessageContentBlock`` in the schema).
SamplingContent: TypeAlias = (
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent
)
#: The schema's name for :data:`SamplingContent`.
SamplingMessageContentBlock: TypeAlias = SamplingContent
