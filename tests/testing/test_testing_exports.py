"""mcptrio.testing's public names: every one resolves, nothing else leaks in, and importing the
package does not import pytest (mcptrio does not depend on it)."""

from __future__ import annotations

import subprocess
import sys

import mcptrio.testing

PUBLIC = {
    "CHECKS",
    "IN_MEMORY",
    "REVISIONS",
    "Entry",
    "Oversized",
    "SchemaViolation",
    "ScriptedElicitation",
    "ScriptedSampling",
    "SuiteCase",
    "Transcript",
    "TransportUnderTest",
    "ValidationError",
    "open_test_client",
    "roots",
    "transport_suite_params",
    "validate_exchange",
    "validate_message",
}


def test_public_names_are_exactly_the_curated_list() -> None:
    assert set(mcptrio.testing.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(mcptrio.testing, name) is not None


def test_importing_the_testing_package_does_not_import_pytest() -> None:
    code = "import mcptrio.testing, sys; assert 'pytest' not in sys.modules, 'pytest was imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
