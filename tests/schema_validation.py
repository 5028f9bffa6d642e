"""The tests' schema check: :mod:`mcptrio.testing.schema_check`, which users' tests use too.

Kept under this name so that the tests import it as they always have
(``from schema_validation import validate_message``).
"""

from __future__ import annotations

from mcptrio.testing.schema_check import (
    HANDSHAKE_REVISIONS,
    RESULT_TYPES,
    REVISIONS,
    SCHEMA_DIR,
    ValidationError,
    defined_methods,
    definition_names,
    method_type_name,
    union_members,
    validate_definition,
    validate_exchange,
    validate_message,
)

__all__ = [
    "HANDSHAKE_REVISIONS",
    "RESULT_TYPES",
    "REVISIONS",
    "SCHEMA_DIR",
    "ValidationError",
    "defined_methods",
    "definition_names",
    "method_type_name",
    "union_members",
    "validate_definition",
    "validate_exchange",
    "validate_message",
]
