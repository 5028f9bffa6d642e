"""The extensions mcptrio speaks, and the one rule each has about where it is declared.

SEP-2133 extensions are declared under ``capabilities.extensions`` by identifier. The methods an
extension defines are in :data:`~.methods.EXTENSION_METHODS` (``MethodSpec.extension`` names the
extension); what differs between extensions is read here, by the gate (:mod:`.gating`,
:mod:`.stateless`) and the fitting step (:mod:`.fitting`), so that no other module asks which
extension it is looking at:

- ``declared_per_request``: a stateless-era request for one of its methods must declare the
  extension in its own ``_meta`` ``clientCapabilities`` (-32021 otherwise). The tasks extension
  asks this (SEP-2663); the skills extension does not (SEP-2640: a client calls ``skills/*``
  once it has seen the *server's* declaration).
- ``handshake_era``: the extension is also declared in ``initialize`` capabilities, and its
  methods exist, in handshake-era sessions. The skills extension is (its methods and resources
  rely on nothing of 2026-07-28; the conformance suite and the SEP's reference implementations
  use it over ``initialize``); the tasks extension is not (2025-11-25 has core tasks instead).
  MCP Apps (SEP-1865) is too, and has no method of its own (its SEP negotiates it in
  ``initialize``).

Every extension method needs the *server's* declaration: a server that did not declare it
answers -32601, and a client does not send it (``CapabilityNotNegotiated``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from . import apps_extension, skills_extension, tasks_extension

__all__ = ["EXTENSIONS", "HANDSHAKE_ERA_EXTENSIONS", "ExtensionRule", "declared_per_request"]


@dataclass(frozen=True, slots=True)
class ExtensionRule:
    """Where one extension is declared (module docstring)."""

    id: str
    declared_per_request: bool
    handshake_era: bool


#: The extensions mcptrio speaks, by identifier.
EXTENSIONS: Final[dict[str, ExtensionRule]] = {
    rule.id: rule
    for rule in (
        ExtensionRule(tasks_extension.EXTENSION_ID, declared_per_request=True, handshake_era=False),
        ExtensionRule(
            skills_extension.EXTENSION_ID, declared_per_request=False, handshake_era=True
        ),
        ExtensionRule(apps_extension.EXTENSION_ID, declared_per_request=False, handshake_era=True),
    )
}

#: The identifiers of the extensions that cross handshake-era sessions too.
HANDSHAKE_ERA_EXTENSIONS: Final[frozenset[str]] = frozenset(
    rule.id for rule in EXTENSIONS.values() if rule.handshake_era
)


def declared_per_request(extension: str) -> bool:
    """Whether a stateless-era request must declare ``extension`` itself (unknown: yes)."""
    rule = EXTENSIONS.get(extension)
    return rule is None or rule.declared_per_request
