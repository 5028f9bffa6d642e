"""The client side of the skills extension (SEP-2640): listing skills and reading them verified.

::

    async for skill in client.iter_skills():          # skills/list, page after page
        print(skill.uri, skill.name, skill.description)
    skill = await client.get_skill("skill://pdf-processing/SKILL.md")
    manifest = await client.load_skill(skill)          # SKILL.md, verified
    forms = await client.read_skill_file(skill, "references/FORMS.md")

Nothing is fetched ahead of need: connecting and listing read no file (the SEP's lazy
retrieval); a file is read when :meth:`~mcptrio.Client.load_skill` or
:meth:`~mcptrio.Client.read_skill_file` asks for it. Every file read through them is checked
against the entry it was read for, and its content is returned only if it passes:

- the file must be listed in the entry's ``resources`` (an unlisted file is a changed skill);
- its byte length must equal the entry's ``size``, then its SHA-256 its ``digest``;
- a ``SKILL.md`` must carry frontmatter equal, field by field, to the entry's ``frontmatter``.

Any failure raises :class:`SkillVerificationError` (the content is dropped); the way back is a
fresh entry (``get_skill``) and, for a host that binds approval to content, a fresh approval.
An entry whose ``resources`` is ``"dynamic"`` offers nothing to verify: its files are refused
unless the caller passes ``allow_dynamic=True`` (its ``SKILL.md`` frontmatter is still checked).

A client declares the extension when its user opts in (:func:`declare_skills`); the SEP asks
nothing of a client before it calls ``skills/*`` but the server's declaration, which the
connection checks (``CapabilityNotNegotiated`` otherwise).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import posixpath
from dataclasses import dataclass
from typing import Any

import msgspec

from ..protocol.skill_frontmatter import FrontmatterError, parse_frontmatter
from ..protocol.skills_extension import DYNAMIC, EXTENSION_ID, SKILL_FILE, Skill
from ..protocol.types import ClientCapabilities, ReadResourceResult
from .errors import ClientError

__all__ = [
    "SkillFile",
    "SkillVerificationError",
    "declare_skills",
    "skill_file_uri",
    "verified_file",
]


class SkillVerificationError(ClientError, default_message="A skill file failed verification"):
    """A skill file did not match the entry it was read for (unlisted, size, digest or
    frontmatter); its content was not returned. ``data`` names the ``uri`` and the check."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    """A verified file of a skill: its URI, raw bytes and MIME type."""

    uri: str
    data: bytes
    mime_type: str | None

    @property
    def text(self) -> str:
        """The content as UTF-8 text."""
        return self.data.decode("utf-8")


def declare_skills(capabilities: ClientCapabilities | None = None) -> ClientCapabilities:
    """``capabilities`` (or none) with the skills extension declared, for
    ``ClientIdentity(capabilities=...)``."""
    base = capabilities or ClientCapabilities()
    extensions = dict(base.extensions or {})
    extensions.setdefault(EXTENSION_ID, {})
    return msgspec.structs.replace(base, extensions=extensions)


def skill_root(skill: Skill) -> str:
    """The skill's root directory URI: its ``SKILL.md`` URI without ``/SKILL.md``."""
    suffix = "/" + SKILL_FILE
    if not skill.uri.endswith(suffix):
        raise SkillVerificationError(
            f"The skill entry's uri {skill.uri!r} does not name a {SKILL_FILE}",
            {"uri": skill.uri, "check": "uri"},
        )
    return skill.uri[: -len(suffix)]


def skill_file_uri(skill: Skill, path: str) -> str:
    """The URI of ``path`` in ``skill``: a URI as it is, a relative path resolved against the
    skill's root (``..`` may not climb out of it)."""
    if "://" in path:
        return path
    normal = posixpath.normpath(path)
    if normal.startswith(("/", "../")) or normal == "..":
        raise SkillVerificationError(
            f"{path!r} leads outside the skill {skill.uri}", {"uri": path, "check": "path"}
        )
    return f"{skill_root(skill)}/{normal}"


def _bytes_of(uri: str, result: ReadResourceResult) -> tuple[bytes, str | None]:
    matching = [c for c in result.contents if c.uri == uri]
    if len(matching) != 1:
        raise SkillVerificationError(
            f"resources/read of {uri} returned {len(matching)} contents for it, not one",
            {"uri": uri, "check": "contents"},
        )
    content = matching[0]
    if isinstance(content.text, str):
        return content.text.encode("utf-8"), content.mime_type
    try:
        return base64.b64decode(content.blob or "", validate=True), content.mime_type
    except (binascii.Error, ValueError):
        raise SkillVerificationError(
            f"resources/read of {uri} returned a blob that is not base64",
            {"uri": uri, "check": "contents"},
        ) from None


def _mismatch(uri: str, check: str, message: str, **data: Any) -> SkillVerificationError:
    return SkillVerificationError(
        f"{uri} failed verification ({check}): {message}; its content was not used",
        {"uri": uri, "check": check, **data},
    )


def verified_file(
    skill: Skill, uri: str, result: ReadResourceResult, *, allow_dynamic: bool = False
) -> SkillFile:
    """The file at ``uri`` from ``result`` (its ``resources/read``), checked against ``skill``
    (module docstring); :class:`SkillVerificationError` when a check fails."""
    listed = None
    if skill.resources == DYNAMIC:
        if not allow_dynamic:
            raise _mismatch(uri, "dynamic", "the skill publishes no digests (resources: dynamic)")
    else:
        listed = next((r for r in skill.resources if r.uri == uri), None)
        if listed is None:
            raise _mismatch(uri, "unlisted", f"the file is not in the entry of {skill.uri}")
    data, mime_type = _bytes_of(uri, result)
    if listed is not None:
        if len(data) != listed.size:
            raise _mismatch(
                uri, "size", f"{len(data)} bytes, the entry says {listed.size}", size=len(data)
            )
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if digest != listed.digest:
            raise _mismatch(uri, "digest", f"{digest}, the entry says {listed.digest}")
    if uri == skill.uri:
        _check_frontmatter(skill, uri, data)
    return SkillFile(uri=uri, data=data, mime_type=mime_type)


def _check_frontmatter(skill: Skill, uri: str, data: bytes) -> None:
    try:
        found = parse_frontmatter(data.decode("utf-8"))
    except (UnicodeDecodeError, FrontmatterError) as exc:
        raise _mismatch(uri, "frontmatter", str(exc)) from None
    expected = skill.frontmatter
    differing = sorted(
        key for key in found.keys() | expected.keys() if _json(found, key) != _json(expected, key)
    )
    if differing:
        raise _mismatch(
            uri,
            "frontmatter",
            f"the file's frontmatter differs from the entry's in {', '.join(differing)}",
            fields=differing,
        )


def _json(frontmatter: dict[str, Any], key: str) -> bytes | None:
    """A field as JSON with sorted keys (so that ``true`` never equals ``1``, as in Python);
    ``None`` for an absent one."""
    if key not in frontmatter:
        return None
    return msgspec.json.encode(frontmatter[key], order="sorted")
