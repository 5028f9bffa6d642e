"""What ``ctx.read_resource`` and ``MCPServer.read_resource`` give back, as in the SDK."""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["ReadResourceContents"]


@dataclasses.dataclass(slots=True)
class ReadResourceContents:
    """One item of a resource's contents: text or bytes, with its MIME type and ``_meta``."""

    content: str | bytes
    mime_type: str | None = None
    meta: dict[str, Any] | None = None
