"""Small helpers the checks share: the text a call answered, the error it raised, and an
equality that says what differs (the checks' asserts are not rewritten by pytest)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ...protocol.errors import McpError
from ...protocol.types import CallToolResult, TextContent

__all__ = ["expect_equal", "failure_of", "text_of"]


def text_of(result: CallToolResult) -> str:
    """The text a tool answered (its one text content); ``AssertionError`` for anything else,
    such as a tool error."""
    assert not result.is_error, f"the tool failed: {result.content}"
    (content,) = result.content
    assert isinstance(content, TextContent), f"expected text, got {content!r}"
    return content.text


def expect_equal(actual: Any, expected: Any, what: str) -> None:
    """``AssertionError`` naming ``what``, and both values (shortened), unless they are equal."""
    if actual != expected:
        raise AssertionError(f"{what}: expected {_short(expected)}, got {_short(actual)}")


async def failure_of(
    call: Callable[[], Awaitable[Any]], expected: tuple[type[McpError], ...], what: str
) -> McpError:
    """The error ``call()`` raises, which must be one of ``expected``; ``AssertionError``
    (naming ``what``) when it answers instead, or raises something else."""
    names = " or ".join(error.__name__ for error in expected)
    try:
        answer = await call()
    except expected as error:
        return error
    except McpError as error:
        raise AssertionError(f"{what}: expected {names}, got {error!r}") from error
    raise AssertionError(f"{what}: expected {names}, but it answered {_short(answer)}")


def _short(value: Any, limit: int = 400) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"
