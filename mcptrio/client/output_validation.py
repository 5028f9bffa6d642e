"""Checking a tool's ``structuredContent`` against its ``outputSchema`` (2025-06-18+).

The spec says clients SHOULD validate structured results against the tool's output schema.
:class:`OutputSchemas` remembers the schema of every tool the client has listed, compiles each
once with :mod:`jsonschema` (Draft 2020-12 unless the schema names another ``$schema``), and
raises :class:`~mcptrio.client.errors.OutputValidationError` naming the first failing path.

A schema that refers to another document is never fetched: :mod:`jsonschema`'s ``referencing``
resolves only what the schema itself contains, and an unresolvable reference is reported as a
validation failure rather than a network request.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# jsonschema ships no type information (and types-jsonschema is not a dependency).
import jsonschema  # type: ignore[import-untyped]
import jsonschema.exceptions  # type: ignore[import-untyped]
import jsonschema.validators  # type: ignore[import-untyped]
from msgspec import UNSET

from ..protocol.types import CallToolResult, Tool
from .errors import OutputValidationError

__all__ = ["OutputSchemas", "validate_structured_content"]


class OutputSchemas:
    """The ``outputSchema`` of each known tool, with its compiled validator.

    ``complete`` is true once a full listing (every page) has been seen since the last change:
    a tool missing from it has no schema to check against, and is not looked up again.
    """

    def __init__(self) -> None:
        self._schemas: dict[str, dict[str, Any] | None] = {}
        self._validators: dict[str, Any] = {}
        self.complete = False
        #: Bumped by :meth:`forget`, so a listing that straddles a change is not "complete".
        self.generation = 0

    def learn(self, tools: Iterable[Tool]) -> None:
        """Remember the schemas of ``tools`` (a page or a whole listing)."""
        for tool in tools:
            schema = tool.output_schema if isinstance(tool.output_schema, dict) else None
            if self._schemas.get(tool.name, UNSET) != schema:
                self._validators.pop(tool.name, None)
            self._schemas[tool.name] = schema

    def forget(self) -> None:
        """The server's tool list changed: every schema may be stale."""
        self._schemas.clear()
        self._validators.clear()
        self.complete = False
        self.generation += 1

    def knows(self, name: str) -> bool:
        """Whether the schema of ``name`` is known (or known to be absent)."""
        return name in self._schemas or self.complete

    def check(self, name: str, result: CallToolResult) -> None:
        """Raise :class:`OutputValidationError` if ``result`` does not fit the schema of ``name``.

        Error results (``isError``) and tools without a known ``outputSchema`` pass unchecked.
        """
        schema = self._schemas.get(name)
        if schema is None or result.is_error is True:
            return
        validator = self._validators.get(name)
        if validator is None:
            validator = self._validators[name] = _compile(name, schema, result)
        validate_structured_content(name, validator, result)


def _compile(name: str, schema: dict[str, Any], result: CallToolResult) -> Any:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        raise OutputValidationError(
            name, result, f"Tool {name!r} has an outputSchema that is not valid: {exc.message}"
        ) from None
    return cls(schema)


def validate_structured_content(name: str, validator: Any, result: CallToolResult) -> None:
    """Check ``result.structuredContent`` with a compiled ``validator`` for tool ``name``."""
    content = result.structured_content
    if content is None:
        raise OutputValidationError(
            name, result, f"Tool {name!r} has an outputSchema but returned no structuredContent"
        )
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(content))
    except jsonschema.exceptions.SchemaError as exc:
        error_message = f"its outputSchema could not be applied: {exc.message}"
    except Exception as exc:  # an unresolvable $ref, for instance
        error_message = f"its outputSchema could not be applied: {type(exc).__name__}: {exc}"
    else:
        if error is None:
            return
        error_message = f"at {error.json_path}: {error.message}"
    raise OutputValidationError(
        name,
        result,
        f"Tool {name!r} returned structuredContent that does not match its outputSchema "
        + error_message,
    )
