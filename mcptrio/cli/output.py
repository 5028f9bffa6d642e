"""What ``call``, ``read`` and ``prompt`` print for people, and the progress line of a call.

The readable form shows what a result *says*, not how it travelled: text as it is, structured
content as indented JSON, and one line in brackets for each thing that is not text (an image, a
sound, a resource, a link), giving its type and size, so that a terminal never fills with
base64. Everything the wire carries besides (``_meta``, ``resultType``, ``ttlMs``) is left to
``--json``. Each rendering ends with a newline, or is empty when there is nothing to show.
"""

from __future__ import annotations

import json
import shutil
from typing import Any, TextIO

from ..protocol.types import (
    AudioContent,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    ReadResourceResult,
    ResourceContents,
    ResourceLink,
    TextContent,
)

__all__ = ["ProgressLine", "render_call", "render_prompt", "render_read"]


def render_call(result: CallToolResult) -> str:
    """A tool's result: its content blocks in order, then its structured content.

    A text block holding the structured content serialized (the spec asks tools to send one,
    for clients that predate structured content) is shown once, as the indented JSON, where it
    stands.
    """
    structured = result.structured_content
    parts: list[str] = []
    shown = structured is None
    for block in result.content:
        if not shown and isinstance(block, TextContent) and _is_json_of(block.text, structured):
            parts.append(_pretty_json(structured))
            shown = True
        else:
            parts.append(_block(block))
    if not shown:
        parts.append(_pretty_json(structured))
    return _joined(parts)


def render_read(result: ReadResourceResult) -> str:
    """A resource's contents: text as it is, binary contents in one line; several contents each
    under a ``==> URI <==`` line (as ``head`` shows several files)."""
    contents = result.contents
    if len(contents) == 1:
        return _joined([_contents(contents[0])])
    return _joined([f"==> {item.uri} <==\n{_contents(item)}" for item in contents])


def render_prompt(result: GetPromptResult) -> str:
    """A prompt's messages, each under a ``[role]`` line."""
    return _joined([f"[{message.role}]\n{_block(message.content)}" for message in result.messages])


def _block(block: ContentBlock) -> str:
    match block:
        case TextContent(text=text):
            return text
        case ImageContent(mime_type=mime, data=data):
            return f"[image: {mime}, {_size(_decoded_size(data))}]"
        case AudioContent(mime_type=mime, data=data):
            return f"[audio: {mime}, {_size(_decoded_size(data))}]"
        case ResourceLink(uri=uri, mime_type=mime, size=size):
            details = ", ".join(filter(None, (mime, None if size is None else _size(size))))
            return f"[resource link: {uri}{f' ({details})' if details else ''}]"
        case EmbeddedResource(resource=contents):
            return f"[resource: {contents.uri}, {_described(contents)}]"
    return f"[{type(block).__name__}]"


def _contents(item: ResourceContents) -> str:
    if item.text is not None:
        return item.text
    return f"[blob: {_described(item)}]"


def _described(item: ResourceContents) -> str:
    """A resource's contents as ``MIME, SIZE`` (the size of its text in UTF-8, or of its blob)."""
    text = item.text
    size = len(text.encode()) if text is not None else _decoded_size(item.blob or "")
    return f"{item.mime_type or 'no mime type'}, {_size(size)}"


def _joined(parts: list[str]) -> str:
    return "".join(part if part.endswith("\n") else f"{part}\n" for part in parts)


def _is_json_of(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def _pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _decoded_size(data: str) -> int:
    """The number of bytes base64 ``data`` stands for, without decoding it."""
    data = data.rstrip()
    return len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))


def _size(count: int) -> str:
    if count < 1000:
        return f"{count} byte{'' if count == 1 else 's'}"
    for unit, scale in (("kB", 1e3), ("MB", 1e6)):
        if count < scale * 1000:
            return f"{count / scale:.1f} {unit}"
    return f"{count / 1e9:.1f} GB"


class ProgressLine:
    """The progress of a call as one line on a terminal, rewritten by each notification.

    ``__call__`` takes the client's ``on_progress`` arguments; :meth:`clear` wipes the line when
    the call ends, so that what the command prints next starts on a clean line. The line is cut
    to the terminal's width: a longer one would wrap, and ``\\r`` then rewrites only its end.
    """

    def __init__(self, stream: TextIO, label: str) -> None:
        self._stream = stream
        self._label = label
        self._shown = False

    def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        done = f"{progress:g}" if total is None else f"{progress:g}/{total:g}"
        if total:
            done += f" ({progress / total:.0%})"
        line = f"{self._label}: {done}{f' {message}' if message else ''}"
        width = shutil.get_terminal_size().columns - 1
        self._stream.write(f"\r\x1b[K{line[:width]}")
        self._stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
            self._shown = False
