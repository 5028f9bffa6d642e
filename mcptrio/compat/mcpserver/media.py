"""``Image`` and ``Audio``: what a tool or prompt returns for binary media, as in the official
SDK (a file path or the bytes, and an optional format that names the MIME subtype)."""

from __future__ import annotations

import base64
from pathlib import Path

from ...protocol.types import AudioContent, ImageContent

__all__ = ["Audio", "Image"]

_IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
_AUDIO_TYPES = {
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".ogg": "audio/ogg",
    ".flac": "audio/flac",
    ".aac": "audio/aac",
    ".m4a": "audio/mp4",
}


class _Media:
    _kind = ""
    _suffixes: dict[str, str] = {}

    def __init__(
        self, path: str | Path | None = None, data: bytes | None = None, format: str | None = None
    ) -> None:
        if (path is None) == (data is None):
            raise ValueError("Either path or data must be provided, and only one of them")
        self.path = Path(path) if path else None
        self.data = data
        self._format = format
        self._mime_type = self._guess_mime_type()

    def _guess_mime_type(self) -> str:
        if self._format:
            return f"{self._kind}/{self._format.lower()}"
        if self.path:
            return self._suffixes.get(self.path.suffix.lower(), "application/octet-stream")
        return "image/png" if self._kind == "image" else "audio/wav"

    def _base64(self) -> str:
        raw = self.path.read_bytes() if self.path is not None else self.data
        assert raw is not None
        return base64.b64encode(raw).decode()


class Image(_Media):
    """An image for a tool's result or a prompt's message."""

    _kind = "image"
    _suffixes = _IMAGE_TYPES

    def to_image_content(self) -> ImageContent:
        return ImageContent(data=self._base64(), mime_type=self._mime_type)

    def to_content(self) -> ImageContent:
        return self.to_image_content()


class Audio(_Media):
    """An audio clip for a tool's result or a prompt's message."""

    _kind = "audio"
    _suffixes = _AUDIO_TYPES

    def to_audio_content(self) -> AudioContent:
        return AudioContent(data=self._base64(), mime_type=self._mime_type)

    def to_content(self) -> AudioContent:
        return self.to_audio_content()
