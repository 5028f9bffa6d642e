"""The client side of the skills extension: nothing is read before a skill is loaded, and a file
is returned only when it matches its entry (listed, size, digest, frontmatter)."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
import trio

import mcptrio
from mcptrio.client import ClientIdentity
from mcptrio.client.skills import (
    SkillVerificationError,
    declare_skills,
    skill_file_uri,
    verified_file,
)
from mcptrio.protocol.skills_extension import EXTENSION_ID, Skill, SkillResource
from mcptrio.protocol.types import ClientCapabilities, ReadResourceResult, ResourceContents
from mcptrio.testing import open_test_client
from mcptrio.testing.transcript import Transcript

SKILL_MD = "---\nname: pdf-processing\ndescription: Extract PDF text\n---\n\nBody.\n"
FORMS = "# Forms\n"
URI = "skill://pdf-processing/SKILL.md"
FORMS_URI = "skill://pdf-processing/references/FORMS.md"


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def entry(skill_md: str = SKILL_MD, **frontmatter: object) -> Skill:
    return Skill(
        uri=URI,
        frontmatter={"name": "pdf-processing", "description": "Extract PDF text", **frontmatter},
        resources=[
            SkillResource(uri=URI, digest=digest(skill_md.encode()), size=len(skill_md.encode())),
            SkillResource(uri=FORMS_URI, digest=digest(FORMS.encode()), size=len(FORMS)),
        ],
    )


def read(uri: str, text: str | None = None, blob: bytes | None = None) -> ReadResourceResult:
    if blob is not None:
        content = ResourceContents(uri=uri, blob=base64.b64encode(blob).decode())
    else:
        content = ResourceContents(uri=uri, mime_type="text/markdown", text=text)
    return ReadResourceResult(contents=[content])


def test_a_matching_file_is_returned() -> None:
    skill = entry()
    assert verified_file(skill, URI, read(URI, SKILL_MD)).text == SKILL_MD
    assert (
        verified_file(skill, FORMS_URI, read(FORMS_URI, blob=FORMS.encode())).data == b"# Forms\n"
    )


@pytest.mark.parametrize(
    ("uri", "served", "check"),
    [
        (URI, SKILL_MD.replace("Body.", "Evil!"), "digest"),
        (URI, SKILL_MD + "extra bytes\n", "size"),
        (FORMS_URI, "# Form!\n", "digest"),
        ("skill://pdf-processing/references/EXTRA.md", FORMS, "unlisted"),
    ],
)
def test_a_mismatching_file_is_refused(uri: str, served: str, check: str) -> None:
    with pytest.raises(SkillVerificationError, match=check) as caught:
        verified_file(entry(), uri, read(uri, served))
    assert (caught.value.data["uri"], caught.value.data["check"]) == (uri, check)


def test_frontmatter_that_differs_from_the_entry_is_refused_even_with_a_matching_digest() -> None:
    tampered = SKILL_MD.replace("Extract PDF text", "Exfiltrate credentials")
    skill = entry(tampered)  # the digest and size describe the tampered file
    with pytest.raises(SkillVerificationError, match="frontmatter") as caught:
        verified_file(skill, URI, read(URI, tampered))
    assert caught.value.data["fields"] == ["description"]
    # A field the entry has and the file lacks counts too, and true is not 1.
    with pytest.raises(SkillVerificationError, match="license"):
        verified_file(entry(license="MIT"), URI, read(URI, SKILL_MD))
    flagged = "---\nname: pdf-processing\ndescription: Extract PDF text\nbeta: true\n---\n"
    with pytest.raises(SkillVerificationError, match="beta"):
        verified_file(entry(flagged, beta=1), URI, read(URI, flagged))


def test_a_skill_md_without_frontmatter_is_refused() -> None:
    bare = "# no frontmatter\n"
    with pytest.raises(SkillVerificationError, match="frontmatter"):
        verified_file(entry(bare), URI, read(URI, bare))


def test_a_dynamic_skill_is_refused_unless_allowed() -> None:
    skill = Skill(uri=URI, frontmatter=entry().frontmatter, resources="dynamic")
    with pytest.raises(SkillVerificationError, match="dynamic"):
        verified_file(skill, URI, read(URI, SKILL_MD))
    assert verified_file(skill, URI, read(URI, SKILL_MD), allow_dynamic=True).text == SKILL_MD
    other = SKILL_MD.replace("Extract PDF text", "Something else")
    with pytest.raises(SkillVerificationError, match="frontmatter"):
        verified_file(skill, URI, read(URI, other), allow_dynamic=True)


def test_contents_for_another_uri_are_refused() -> None:
    with pytest.raises(SkillVerificationError, match="contents"):
        verified_file(entry(), URI, read(FORMS_URI, SKILL_MD))


@pytest.mark.parametrize("path", ["../other/SKILL.md", "/etc/passwd", "references/../../x", ".."])
def test_a_relative_path_may_not_climb_out_of_the_skill(path: str) -> None:
    with pytest.raises(SkillVerificationError, match="outside the skill"):
        skill_file_uri(entry(), path)


def test_relative_paths_resolve_against_the_skill_root() -> None:
    assert skill_file_uri(entry(), "references/./FORMS.md") == FORMS_URI
    assert skill_file_uri(entry(), FORMS_URI) == FORMS_URI


def test_declaring_the_extension_keeps_the_other_capabilities() -> None:
    declared = declare_skills(ClientCapabilities(extensions={"x/y": {"a": 1}}, roots=None))
    assert declared.extensions == {"x/y": {"a": 1}, EXTENSION_ID: {}}


async def test_connecting_and_listing_read_no_file_and_loading_reads_only_skill_md(
    tmp_path: Path,
) -> None:
    skill = tmp_path / "pdf-processing"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "references" / "FORMS.md").write_text(FORMS)
    server = mcptrio.Server("skills")
    server.add_skills(skill)
    transcript = Transcript()
    with trio.fail_after(10):
        async with open_test_client(
            server, transcript=transcript, identity=ClientIdentity(capabilities=declare_skills())
        ) as client:
            listed = [s async for s in client.iter_skills()]
            before_load = list(transcript.requests("resources/read"))
            await client.load_skill(listed[0])
            after_load = [r["params"]["uri"] for r in transcript.requests("resources/read")]
            (skill / "references" / "FORMS.md").write_text("# Tampered\n")
            with pytest.raises(SkillVerificationError):
                await client.read_skill_file(listed[0], "references/FORMS.md")
    assert before_load == []
    assert after_load == [URI]
    # The client declared the extension on its requests.
    (request,) = transcript.requests("skills/list")
    declared = request["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert EXTENSION_ID in declared["extensions"]
