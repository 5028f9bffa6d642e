"""Opaque cursors for the list methods.

A cursor encodes which list it belongs to and the offset of the next page, base64url-encoded so
that clients treat it as the opaque token the spec says it is. A cursor that does not decode or
belongs to another list gets -32602 (invalid params), as the spec asks; one pointing past the end
of a list that has since shrunk gets an empty last page.

Offsets into a list that changes between pages can skip or repeat an item; the list-changed
notification is how a client learns to start over. That is the same guarantee the spec's own
examples give, and it keeps cursors stateless: any worker can serve the next page.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import TypeVar

from ..protocol.errors import InvalidParams

__all__ = ["paginate"]

T = TypeVar("T")


def _encode(kind: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{offset}".encode()).decode().rstrip("=")


def _decode(kind: str, cursor: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidParams(f"Invalid cursor: {cursor!r}") from None
    prefix, sep, number = raw.partition(":")
    if not sep or prefix != kind or not number.isdigit():
        raise InvalidParams(f"Invalid cursor: {cursor!r}")
    return int(number)


def paginate(
    kind: str, items: Sequence[T], cursor: str | None, page_size: int | None
) -> tuple[Sequence[T], str | None]:
    """One page of ``items`` starting at ``cursor``, and the cursor of the next page (if any)."""
    start = 0 if cursor is None else _decode(kind, cursor)
    if page_size is None:
        return items[start:], None
    end = start + page_size
    return items[start:end], (_encode(kind, end) if end < len(items) else None)
