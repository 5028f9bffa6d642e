"""The skills extension (``io.modelcontextprotocol/skills``, SEP-2640): its wire shapes.

A server publishes Agent Skills (a directory with a ``SKILL.md`` and its supporting files) as
ordinary resources, conventionally ``skill://<skill-path>/<file-path>``, and adds three methods:

- ``skills/list`` (paginated, cacheable): one :class:`Skill` entry per skill, a complete
  manifest (``resources``: every file with its ``sha256:`` digest and size, or ``"dynamic"``);
- ``skills/get``: the entry of one skill named by its ``SKILL.md`` URI (-32602 for a URI the
  server does not serve a skill at); cacheable, never paginated;
- ``resources/directory/read`` (when the server declares ``directoryRead: true``): the direct
  children of a directory resource (``mimeType: "inode/directory"``), paginated; -32602 for a
  URI that is not a directory.

Negotiation: the server declares ``capabilities.extensions["io.modelcontextprotocol/skills"]``
(``{}`` or ``{"directoryRead": true}``) and the ``resources`` capability. The SEP asks nothing
of the client: it calls the methods after seeing the server's declaration. So, unlike the tasks
extension, a request need not declare the extension (:data:`~.extensions.EXTENSIONS` holds that
rule); and since the suite and the SEP's reference implementations declare it in ``initialize``
too, the declaration also crosses handshake-era sessions (see ``docs/explanation/skills.md``).
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal, TypeAlias

from .base import Request, Result, WireStruct
from .types.common import CacheablePaginatedResult, CacheScope, PaginatedRequest, PaginatedResult
from .types.resources import Resource

__all__ = [
    "DIRECTORY_MIME_TYPE",
    "DIRECTORY_READ",
    "DYNAMIC",
    "EXTENSION_ID",
    "MAX_RESOURCES_PER_SKILL",
    "MAX_SKILL_BYTES",
    "SKILL_FILE",
    "GetSkillRequest",
    "GetSkillResult",
    "ListSkillsRequest",
    "ListSkillsResult",
    "ReadResourceDirectoryRequest",
    "ReadResourceDirectoryResult",
    "Skill",
    "SkillResource",
    "SkillResources",
    "valid_digest",
    "valid_skill_name",
]

#: The extension's identifier, under ``capabilities.extensions``.
EXTENSION_ID: Final = "io.modelcontextprotocol/skills"
#: The setting that promises ``resources/directory/read``.
DIRECTORY_READ: Final = "directoryRead"
#: The manifest file at the root of every skill.
SKILL_FILE: Final = "SKILL.md"
#: ``resources`` of a skill whose content is generated, so without stable digests.
DYNAMIC: Final = "dynamic"
#: The ``mimeType`` of a directory resource.
DIRECTORY_MIME_TYPE: Final = "inode/directory"
#: The per-skill limits every host accepts (SEP-2640 "Limits"): entries, and bytes summed.
MAX_RESOURCES_PER_SKILL: Final = 512
MAX_SKILL_BYTES: Final = 16 * 1024 * 1024

# Agent Skills naming rules: 1-64 characters, lowercase letters, digits and hyphens, no leading,
# trailing or doubled hyphen.
_NAME = re.compile(r"(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def valid_skill_name(name: str) -> bool:
    """Whether ``name`` satisfies the Agent Skills naming rules."""
    return _NAME.fullmatch(name) is not None


def valid_digest(digest: str) -> bool:
    """Whether ``digest`` is ``sha256:`` and 64 lowercase hexadecimal digits."""
    return _DIGEST.fullmatch(digest) is not None


class SkillResource(WireStruct, kw_only=True):
    """One file of a skill: its URI, ``sha256:{hex}`` digest and size in bytes (raw content)."""

    uri: str
    digest: str
    size: int


#: A complete list of a skill's files, or ``"dynamic"``.
SkillResources: TypeAlias = list[SkillResource] | Literal["dynamic"]


class Skill(WireStruct, kw_only=True):
    """A skill entry: the ``SKILL.md`` URI, its frontmatter verbatim, and its files."""

    uri: str
    frontmatter: dict[str, Any]
    resources: SkillResources

    @property
    def name(self) -> str:
        """The frontmatter ``name`` (a label; the URI is the identity)."""
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        return str(self.frontmatter.get("description", ""))


class ListSkillsResult(CacheablePaginatedResult, kw_only=True):
    """The result of ``skills/list``."""

    skills: list[Skill]


class ListSkillsRequest(PaginatedRequest[ListSkillsResult], kw_only=True):
    """``skills/list``: the entries of the skills the server serves (paginated)."""

    METHOD = "skills/list"


class GetSkillResult(Result, kw_only=True):
    """The result of ``skills/get``: one entry, with the cache hints and no cursor."""

    skill: Skill
    ttl_ms: int | None = None
    cache_scope: CacheScope | None = None


class GetSkillRequest(Request[GetSkillResult], kw_only=True):
    """``skills/get``: the entry of the skill whose ``SKILL.md`` is at ``uri``."""

    METHOD = "skills/get"

    uri: str


class ReadResourceDirectoryResult(PaginatedResult, kw_only=True):
    """The result of ``resources/directory/read``: the directory's direct children."""

    resources: list[Resource]


class ReadResourceDirectoryRequest(PaginatedRequest[ReadResourceDirectoryResult], kw_only=True):
    """``resources/directory/read``: the direct children of the directory resource ``uri``."""

    METHOD = "resources/directory/read"

    uri: str
