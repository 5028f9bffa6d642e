"""Images, audio and files a tool can return: :class:`Image`, :class:`Audio` and :class:`File`.

Each is built from bytes (``Image(data=png_bytes)``) or from a file (``Image(path="chart.png")``,
or ``await Image.from_file("chart.png")`` in an async tool, which reads the file in a worker
thread so the event loop never blocks on the disk). The mime type is the one given, else guessed
from the file name, else from the first bytes of the data (the usual magic numbers); an image or
audio clip whose type cannot be guessed is refused with ``ValueError`` when it is built, because
the protocol requires a mime type for them.

What they become in a tool result:

- :class:`Image` -> ``ImageContent`` (base64 ``data`` and ``mimeType``);
- :class:`Audio` -> ``AudioContent`` (2025-03-26 and later; an older client gets the clip as an
  embedded blob resource of the same mime type, see :mod:`mcptrio.server.tool_results`);
- :class:`File` -> an ``EmbeddedResource``: text contents when the mime type is textual and the
  bytes are UTF-8, a base64 blob otherwise. Its URI is the one given, else ``attachment:<name>``:
  such data has no address of its own, and the server's file-system paths are not the client's
  business.
"""

from __future__ import annotations

import abc
import base64
import mimetypes
import os
from pathlib import Path
from typing import Any, ClassVar, TypedDict, TypeVar, Unpack
from urllib.parse import quote

import trio

from ..protocol.types import (
    Annotations,
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceContents,
)

__all__ = ["Audio", "File", "Image", "Media", "MediaOptions", "attachment_uri", "guess_mime_type"]

MediaT = TypeVar("MediaT", bound="Media")

# Leading bytes of common formats: (offset, signature, mime type). Checked in order.
_SIGNATURES: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", "image/png"),
    (0, b"\xff\xd8\xff", "image/jpeg"),
    (0, b"GIF87a", "image/gif"),
    (0, b"GIF89a", "image/gif"),
    (8, b"WEBP", "image/webp"),
    (0, b"BM", "image/bmp"),
    (8, b"WAVE", "audio/wav"),
    (0, b"ID3", "audio/mpeg"),
    (0, b"\xff\xfb", "audio/mpeg"),
    (0, b"\xff\xf3", "audio/mpeg"),
    (0, b"\xff\xf2", "audio/mpeg"),
    (0, b"OggS", "audio/ogg"),
    (0, b"fLaC", "audio/flac"),
    (4, b"ftypM4A", "audio/mp4"),
    (0, b"%PDF-", "application/pdf"),
)

# Mime types whose contents are text even though they are not text/*.
_TEXTUAL = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "image/svg+xml",
    }
)


def guess_mime_type(data: bytes, name: str | None = None) -> str | None:
    """The mime type of ``data``: from ``name``'s extension if it tells one, else sniffed."""
    if name is not None:
        guessed, _ = mimetypes.guess_type(name, strict=False)
        if guessed is not None and guessed != "application/octet-stream":
            return guessed
    head = data[:16]
    for offset, signature, mime_type in _SIGNATURES:
        if head[offset : offset + len(signature)] == signature:
            if signature == b"WEBP" and not head.startswith(b"RIFF"):
                continue
            if signature == b"WAVE" and not head.startswith(b"RIFF"):
                continue
            return mime_type
    stripped = data[:256].lstrip()
    if stripped.startswith(b"<svg") or (stripped.startswith(b"<?xml") and b"<svg" in data[:1024]):
        return "image/svg+xml"
    return None


def attachment_uri(name: str) -> str:
    """The URI given to returned data that has no address of its own: ``attachment:<name>``."""
    return "attachment:" + quote(name, safe="")


class MediaOptions(TypedDict, total=False):
    """What every kind of media may be given besides its data or path."""

    #: The mime type; guessed from the name, else from the data, when left out.
    mime_type: str | None
    #: The name (a file's defaults to the file name of ``path``).
    name: str | None
    #: The content block's annotations.
    annotations: Annotations | None
    #: The content block's ``_meta``.
    meta: dict[str, Any] | None


class Media(abc.ABC):
    """Binary data with a mime type, returned by a tool (the base of Image, Audio and File)."""

    __slots__ = ("annotations", "data", "meta", "mime_type", "name")

    #: What the data is, for error messages ("image", "audio clip", "file").
    KIND: ClassVar[str] = "file"
    #: The mime type when none is given and none can be guessed (``None``: refuse).
    FALLBACK_MIME_TYPE: ClassVar[str | None] = "application/octet-stream"

    def __init__(
        self,
        data: bytes | bytearray | memoryview | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        **options: Unpack[MediaOptions],
    ) -> None:
        if (data is None) == (path is None):
            raise ValueError(f"give the {self.KIND}'s data or its path, not both or neither")
        name = options.get("name")
        if path is not None:
            file = Path(path)
            data = file.read_bytes()
            if name is None:
                name = file.name
        assert data is not None
        self.data = bytes(data)
        self.name = name
        self.annotations = options.get("annotations")
        self.meta = options.get("meta")
        mime_type = options.get("mime_type")
        guessed = mime_type or guess_mime_type(self.data, name) or self.FALLBACK_MIME_TYPE
        if guessed is None:
            raise ValueError(
                f"cannot tell the mime type of this {self.KIND}: pass mime_type=... explicitly"
            )
        self.mime_type = guessed

    @classmethod
    async def from_file(
        cls: type[MediaT], path: str | os.PathLike[str], **options: Unpack[MediaOptions]
    ) -> MediaT:
        """Read ``path`` in a worker thread (for async tools) and wrap its bytes."""
        data = await trio.Path(path).read_bytes()
        if options.get("name") is None:
            options["name"] = Path(path).name
        return cls(data, **options)

    @property
    def base64(self) -> str:
        """The data, base64-encoded as the protocol carries it."""
        return base64.b64encode(self.data).decode("ascii")

    @abc.abstractmethod
    def to_content(self) -> ContentBlock:
        """The content block this becomes in a tool result."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.mime_type}, {len(self.data)} bytes)"


class _Encoded(Media):
    """Media sent as base64 data in a content block of its own kind."""

    __slots__ = ()
    FALLBACK_MIME_TYPE = None
    #: The content block this becomes.
    CONTENT: ClassVar[type[ImageContent] | type[AudioContent]]

    def to_content(self) -> ImageContent | AudioContent:
        return self.CONTENT(
            data=self.base64,
            mime_type=self.mime_type,
            annotations=self.annotations,
            meta=self.meta,
        )


class Image(_Encoded):
    """An image a tool returns: becomes ``ImageContent``."""

    __slots__ = ()
    KIND = "image"
    CONTENT = ImageContent


class Audio(_Encoded):
    """An audio clip a tool returns: becomes ``AudioContent`` (2025-03-26+)."""

    __slots__ = ()
    KIND = "audio clip"
    CONTENT = AudioContent


class File(Media):
    """Any file a tool returns: becomes an embedded resource (text or base64 blob).

    ``uri`` names the resource; without one it is ``attachment:<name>`` (``name`` defaults to
    the file name of ``path``, else ``"file"``).
    """

    __slots__ = ("uri",)
    KIND = "file"

    def __init__(
        self,
        data: bytes | bytearray | memoryview | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        uri: str | None = None,
        **options: Unpack[MediaOptions],
    ) -> None:
        super().__init__(data, path=path, **options)
        self.uri = uri if uri is not None else attachment_uri(self.name or "file")

    def to_content(self) -> EmbeddedResource:
        text: str | None = None
        if self.mime_type.startswith("text/") or self.mime_type in _TEXTUAL:
            try:
                text = self.data.decode("utf-8")
            except UnicodeDecodeError:
                text = None
        contents = ResourceContents(
            uri=self.uri,
            mime_type=self.mime_type,
            text=text,
            blob=self.base64 if text is None else None,
        )
        return EmbeddedResource(
            resource=contents,
            annotations=self.annotations,
            meta=self.meta,
        )
