"""``multipart/form-data`` bodies (RFC 7578): fields and files, with a random boundary."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

__all__ = ["Part", "encode_multipart"]


@dataclass(frozen=True, slots=True)
class Part:
    """One part: a field ``name`` and its ``data``; a file has a ``filename`` and a
    ``content_type``."""

    name: str
    data: bytes
    filename: str | None = None
    content_type: str | None = None


def _quoted(text: str) -> str:
    # RFC 7578 4.2: quotes and line breaks are percent-encoded in these values.
    return text.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


def encode_multipart(parts: list[Part]) -> tuple[bytes, str]:
    """The body holding ``parts``, and its ``Content-Type`` (with the boundary)."""
    boundary = f"mcptrio-{secrets.token_hex(16)}"
    chunks: list[bytes] = []
    for part in parts:
        disposition = f'form-data; name="{_quoted(part.name)}"'
        if part.filename is not None:
            disposition += f'; filename="{_quoted(part.filename)}"'
        head = f"--{boundary}\r\ncontent-disposition: {disposition}\r\n"
        if part.content_type is not None:
            head += f"content-type: {part.content_type}\r\n"
        chunks.append(head.encode("utf-8") + b"\r\n" + part.data + b"\r\n")
    chunks.append(f"--{boundary}--\r\n".encode("ascii"))
    return b"".join(chunks), f"multipart/form-data; boundary={boundary}"
