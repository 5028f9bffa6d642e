"""The skills extension (SEP-2640) on a server: a published folder over memory and HTTP in both
eras (every message checked against the revision's schema where it defines it), its errors,
publish-time refusals, hostile URIs and files that change on disk."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

import mcptrio
from mcptrio.client import HANDSHAKE_ERA, ClientIdentity, Revisions
from mcptrio.client.skills import SkillVerificationError, declare_skills
from mcptrio.protocol.errors import (
    CapabilityNotNegotiated,
    InvalidParams,
    ResourceNotFound,
)
from mcptrio.protocol.request_meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcptrio.protocol.revisions import SUPPORTED
from mcptrio.protocol.skills_extension import (
    EXTENSION_ID,
    GetSkillRequest,
    ListSkillsRequest,
    ReadResourceDirectoryRequest,
)
from mcptrio.runtime.transport import Outgoing
from mcptrio.server.skill_files import SkillsError
from mcptrio.testing import open_test_client
from mcptrio.testing.transcript import RecordingTransport, Transcript
from mcptrio.transports.http.client.transport import open_http_client_transport
from mcptrio.transports.memory import memory_transport_pair

ERAS = {"stateless": Revisions(supported=SUPPORTED), "handshake": HANDSHAKE_ERA}

PDF_SKILL = """---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
metadata:
  version: "2.1.0"
released: 2026-01-02
---

# PDF processing

See `references/FORMS.md` and the templates in `templates/`.
"""

NESTED_SKILL = """---
name: eu
description: European invoices
---
Use regional/eu/invoice.md.
"""


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write(root / "pdf-processing" / "SKILL.md", PDF_SKILL)
    write(root / "pdf-processing" / "references" / "FORMS.md", "# Forms\n")
    write(root / "pdf-processing" / "templates" / "invoice.md", "Invoice {n}\n")
    write(root / "pdf-processing" / "templates" / "regional" / "eu" / "SKILL.md", NESTED_SKILL)
    write(root / "pdf-processing" / "templates" / "regional" / "eu" / "invoice.md", "EU {n}\n")
    write(root / "pdf-processing" / "assets" / "logo.bin", bytes(range(256)))
    write(root / "pdf-processing" / ".hidden", "not published")
    write(root / "git-workflow" / "SKILL.md", "---\nname: git-workflow\ndescription: Git\n---\n")
    return root


def make_server(folder: Path, **options: Any) -> mcptrio.Server:
    server = mcptrio.Server("skills", **options)
    server.add_skills(folder)
    return server


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@asynccontextmanager
async def skills_client(
    server: mcptrio.Server, era: str, transcript: Transcript | None = None
) -> AsyncIterator[mcptrio.Client]:
    async with open_test_client(
        server,
        transcript=transcript,
        revisions=ERAS[era],
        identity=ClientIdentity(capabilities=declare_skills()),
    ) as client:
        yield client


@pytest.mark.parametrize("era", ERAS)
async def test_a_published_folder_is_listed_got_read_and_browsed_over_memory(
    folder: Path, era: str
) -> None:
    server = make_server(folder, page_size=2)
    transcript = Transcript()
    with trio.fail_after(10):
        async with skills_client(server, era, transcript) as client:
            declared = client.server_capabilities.extensions
            skills = [skill async for skill in client.iter_skills()]
            got = await client.get_skill("skill://pdf-processing/SKILL.md")
            manifest = await client.load_skill(got)
            logo = await client.read_skill_file(got, "assets/logo.bin")
            forms = await client.read_skill_file(got, "references/FORMS.md")
            root = await client.read_directory("skill://pdf-processing")
            rest = await client.read_directory("skill://pdf-processing", root.next_cursor)
            regional = await client.read_directory("skill://pdf-processing/templates/regional")
            resources = [r async for r in client.iter_resources()]
    assert declared == {EXTENSION_ID: {"directoryRead": True}}
    assert [s.uri for s in skills] == [
        "skill://git-workflow/SKILL.md",
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/templates/regional/eu/SKILL.md",
    ]
    # The frontmatter as written (a date stays a string), every file listed once, nested too.
    assert got.frontmatter == {
        "name": "pdf-processing",
        "description": "Extract, fill, and assemble PDF documents",
        "metadata": {"version": "2.1.0"},
        "released": "2026-01-02",
    }
    assert isinstance(got.resources, list)
    listed = {r.uri: r for r in got.resources}
    assert sorted(listed) == [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/assets/logo.bin",
        "skill://pdf-processing/references/FORMS.md",
        "skill://pdf-processing/templates/invoice.md",
        "skill://pdf-processing/templates/regional/eu/SKILL.md",
        "skill://pdf-processing/templates/regional/eu/invoice.md",
    ]
    assert listed["skill://pdf-processing/assets/logo.bin"].digest == sha(bytes(range(256)))
    assert manifest.text == PDF_SKILL
    assert logo.data == bytes(range(256))
    assert forms.text == "# Forms\n"
    children = [*root.resources, *rest.resources]
    assert [(c.uri.rsplit("/", 1)[-1], c.mime_type) for c in children] == [
        ("SKILL.md", "text/markdown"),
        ("assets", "inode/directory"),
        ("references", "inode/directory"),
        ("templates", "inode/directory"),
    ]
    assert children[0].name == "pdf-processing"
    assert children[0].description == "Extract, fill, and assemble PDF documents"
    assert [c.uri for c in regional.resources] == ["skill://pdf-processing/templates/regional/eu"]
    by_uri = {r.uri: r for r in resources}
    assert by_uri["skill://pdf-processing/templates/regional/eu/SKILL.md"].name == "eu"
    assert "skill://pdf-processing/.hidden" not in by_uri
    # open_test_client checked every message against the schema; these are the skills ones.
    assert transcript.requests("skills/list")
    assert transcript.requests("resources/directory/read")


@pytest.mark.parametrize("era", ERAS)
async def test_cache_hints_and_no_cursor_on_skills_get(folder: Path, era: str) -> None:
    server = make_server(folder, cache_ttl_ms=60_000, cache_scope="public")
    transcript = Transcript()
    with trio.fail_after(10):
        async with skills_client(server, era, transcript) as client:
            await client.get_skill("skill://git-workflow/SKILL.md")
    (request,) = transcript.requests("skills/get")
    result = transcript.response_to(request)["result"]
    assert "nextCursor" not in result
    if era == "stateless":
        assert (result["ttlMs"], result["cacheScope"]) == (60_000, "public")
    else:
        assert "ttlMs" not in result


@pytest.mark.parametrize("era", ERAS)
async def test_skills_over_http(folder: Path, era: str) -> None:
    server = make_server(folder)
    transcript = Transcript()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(server.serve_http, "127.0.0.1", 0)
            async with (
                open_http_client_transport(f"{url}/mcp") as transport,
                mcptrio.open_client(
                    RecordingTransport(transport, transcript),
                    revisions=ERAS[era],
                    identity=ClientIdentity(capabilities=declare_skills()),
                ) as client,
            ):
                revision = client.protocol_version
                await client.list_skills()
                skill = await client.get_skill("skill://pdf-processing/SKILL.md")
                manifest = await client.load_skill(skill)
                directory = await client.read_directory("skill://pdf-processing/templates")
                with pytest.raises(InvalidParams):
                    await client.get_skill("skill://nope/SKILL.md")
            nursery.cancel_scope.cancel()
    assert (revision == "2026-07-28") == (era == "stateless")
    assert manifest.text == PDF_SKILL
    assert [c.mime_type for c in directory.resources] == ["text/markdown", "inode/directory"]
    assert transcript.check() > 0
    assert {"skills/list", "skills/get", "resources/directory/read"} <= set(transcript.methods())


async def test_unknown_skill_and_non_directory_uris_are_invalid_params(folder: Path) -> None:
    server = make_server(folder)
    with trio.fail_after(10):
        async with skills_client(server, "stateless") as client:
            with pytest.raises(InvalidParams, match="No skill is served"):
                await client.request(GetSkillRequest(uri="skill://pdf-processing/nope/SKILL.md"))
            with pytest.raises(InvalidParams, match="No skill is served"):
                # A supporting file is not a skill.
                await client.request(GetSkillRequest(uri="skill://pdf-processing/assets/logo.bin"))
            for uri in ("skill://pdf-processing/SKILL.md", "skill://elsewhere"):
                with pytest.raises(InvalidParams):
                    await client.request(ReadResourceDirectoryRequest(uri=uri))
            with pytest.raises(InvalidParams, match="Invalid cursor"):
                await client.request(ListSkillsRequest(cursor="bogus"))


@pytest.mark.parametrize(
    "uri",
    [
        "skill://pdf-processing/../git-workflow/SKILL.md",
        "skill://pdf-processing/%2e%2e/git-workflow/SKILL.md",
        "skill://pdf-processing/references/..%2F..%2F..%2Fsecret.txt",
        "skill://pdf-processing/references/../../../secret.txt",
        "skill://pdf-processing/./SKILL.md",
        "skill://pdf-processing//SKILL.md",
        "skill://pdf-processing/.hidden",
        "skill:///etc/passwd",
    ],
)
async def test_hostile_uris_name_nothing(folder: Path, uri: str) -> None:
    write(folder.parent / "secret.txt", "secret")
    server = make_server(folder)
    with trio.fail_after(10):
        async with skills_client(server, "stateless") as client:
            with pytest.raises(ResourceNotFound):
                await client.read_resource(uri)
            with pytest.raises(InvalidParams):
                await client.request(ReadResourceDirectoryRequest(uri=uri))


async def test_a_file_swapped_for_a_link_out_of_the_folder_is_not_served(folder: Path) -> None:
    secret = write(folder.parent / "secret.txt", "# Forms\n")  # same bytes: digest would pass
    server = make_server(folder)
    forms = folder / "pdf-processing" / "references" / "FORMS.md"
    forms.unlink()
    os.symlink(secret, forms)
    with trio.fail_after(10):
        async with skills_client(server, "stateless") as client:
            with pytest.raises(ResourceNotFound):
                await client.read_resource("skill://pdf-processing/references/FORMS.md")
            # The skill no longer scans (a link leads out of the folder): it is withdrawn.
            with pytest.raises(InvalidParams, match="No skill is served"):
                await client.get_skill("skill://pdf-processing/SKILL.md")


async def test_a_link_out_of_the_folder_is_refused_at_publish(folder: Path) -> None:
    secret = write(folder.parent / "secret.txt", "secret")
    os.symlink(secret, folder / "pdf-processing" / "references" / "secret.md")
    with pytest.raises(SkillsError, match="outside the published folder"):
        make_server(folder)


async def test_a_link_inside_the_folder_is_published(folder: Path) -> None:
    os.symlink(
        folder / "pdf-processing" / "references" / "FORMS.md",
        folder / "pdf-processing" / "references" / "ALIAS.md",
    )
    server = make_server(folder)
    assert "skill://pdf-processing/references/ALIAS.md" in server.resources


@pytest.mark.parametrize(
    ("directory", "skill_md", "message"),
    [
        ("PDF_Tools", "---\nname: PDF_Tools\ndescription: x\n---\n", "not a valid skill name"),
        ("-pdf", "---\nname: -pdf\ndescription: x\n---\n", "not a valid skill name"),
        ("pdf--x", "---\nname: pdf--x\ndescription: x\n---\n", "not a valid skill name"),
        ("a" * 65, f"---\nname: {'a' * 65}\ndescription: x\n---\n", "not a valid skill name"),
        ("pdf", "---\nname: other\ndescription: x\n---\n", "must equal the skill's directory"),
        ("pdf", "# no frontmatter\n", "must begin with"),
        ("pdf", "---\nname: pdf\n---\n", "non-empty string 'description'"),
        ("pdf", "---\nname: pdf\ndescription: [unclosed\n---\n", "not valid YAML"),
        ("pdf", "---\n- a list\n---\n", "must be a YAML mapping"),
        ("pdf", "---\nname: pdf\ndescription: x\n1: numeric key\n---\n", "JSON"),
    ],
)
def test_publishing_refuses_what_a_client_would_reject(
    tmp_path: Path, directory: str, skill_md: str, message: str
) -> None:
    write(tmp_path / "skills" / directory / "SKILL.md", skill_md)
    server = mcptrio.Server("bad")
    with pytest.raises(SkillsError, match=message):
        server.add_skills(tmp_path / "skills")
    assert server.skills is None
    assert server.capabilities().extensions is None


def test_publishing_refuses_a_skill_over_the_limits(tmp_path: Path) -> None:
    skill = tmp_path / "many"
    write(skill / "SKILL.md", "---\nname: many\ndescription: x\n---\n")
    for number in range(512):
        write(skill / "files" / f"{number}.txt", "x")
    with pytest.raises(SkillsError, match="at most 512 files"):
        mcptrio.Server("s").add_skills(skill)
    big = tmp_path / "big"
    write(big / "SKILL.md", "---\nname: big\ndescription: x\n---\n")
    write(big / "blob.bin", b"\0" * (16 * 1024 * 1024))
    with pytest.raises(SkillsError, match="16777216 bytes"):
        mcptrio.Server("s").add_skills(big)


def test_publishing_needs_a_skill_and_plain_segments(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(SkillsError, match=r"no SKILL\.md"):
        mcptrio.Server("s").add_skills(tmp_path / "empty")
    write(tmp_path / "odd" / "my skill" / "SKILL.md", "---\nname: x\ndescription: x\n---\n")
    with pytest.raises(SkillsError, match="URI path segment"):
        mcptrio.Server("s").add_skills(tmp_path / "odd")
    with pytest.raises(SkillsError, match="URI path segment"):
        mcptrio.Server("s").add_skills(tmp_path / "odd", prefix="a b")


def test_a_single_skill_folder_and_a_prefix(folder: Path) -> None:
    server = mcptrio.Server("s")
    server.add_skills(folder / "git-workflow", prefix="acme/dev")
    server.add_skills(folder / "pdf-processing")
    assert server.skills is not None
    assert server.skills.uris == [
        "skill://acme/dev/git-workflow/SKILL.md",
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/templates/regional/eu/SKILL.md",
    ]
    with pytest.raises(SkillsError, match="already published"):
        server.add_skills(folder / "pdf-processing")


@pytest.mark.parametrize("era", ERAS)
async def test_a_changed_file_changes_its_digest_and_a_stale_entry_fails(
    folder: Path, era: str
) -> None:
    server = make_server(folder)
    forms = folder / "pdf-processing" / "references" / "FORMS.md"
    with trio.fail_after(10):
        async with skills_client(server, era) as client:
            before = await client.get_skill("skill://pdf-processing/SKILL.md")
            write(forms, "# Forms, second edition\n")
            os.utime(forms, ns=(1, 1))  # a new stamp even on a coarse clock
            with pytest.raises(SkillVerificationError, match="size"):
                await client.read_skill_file(before, "references/FORMS.md")
            after = await client.get_skill("skill://pdf-processing/SKILL.md")
            fresh = await client.read_skill_file(after, "references/FORMS.md")
            write(folder / "pdf-processing" / "references" / "NEW.md", "new\n")
            added = await client.get_skill("skill://pdf-processing/SKILL.md")
    assert isinstance(before.resources, list) and isinstance(after.resources, list)
    old = {r.uri: r.digest for r in before.resources}
    new = {r.uri: r.digest for r in after.resources}
    uri = "skill://pdf-processing/references/FORMS.md"
    assert new[uri] == sha(b"# Forms, second edition\n") != old[uri]
    assert fresh.text == "# Forms, second edition\n"
    assert isinstance(added.resources, list)
    assert "skill://pdf-processing/references/NEW.md" in {r.uri for r in added.resources}


async def test_a_skill_whose_manifest_breaks_on_disk_is_withdrawn(folder: Path) -> None:
    server = make_server(folder)
    (folder / "git-workflow" / "SKILL.md").write_text("no frontmatter now\n")
    with trio.fail_after(10):
        async with skills_client(server, "stateless") as client:
            uris = [s.uri async for s in client.iter_skills()]
            with pytest.raises(InvalidParams):
                await client.get_skill("skill://git-workflow/SKILL.md")
            with pytest.raises(ResourceNotFound):
                await client.read_resource("skill://git-workflow/SKILL.md")
    assert "skill://git-workflow/SKILL.md" not in uris


async def test_reload_publishes_new_skills_and_check_disk_off_keeps_the_snapshot(
    folder: Path,
) -> None:
    server = mcptrio.Server("s")
    skills = server.add_skills(folder, check_disk=False)
    forms = folder / "pdf-processing" / "references" / "FORMS.md"
    write(forms, "changed\n")
    write(folder / "new-skill" / "SKILL.md", "---\nname: new-skill\ndescription: n\n---\n")
    with trio.fail_after(10):
        async with skills_client(server, "stateless") as client:
            stale = await client.get_skill("skill://pdf-processing/SKILL.md")
            await skills.reload()
            fresh = await client.get_skill("skill://pdf-processing/SKILL.md")
            new = await client.get_skill("skill://new-skill/SKILL.md")
    assert isinstance(stale.resources, list) and isinstance(fresh.resources, list)
    uri = "skill://pdf-processing/references/FORMS.md"
    assert {r.uri: r.digest for r in fresh.resources}[uri] == sha(b"changed\n")
    assert {r.uri: r.digest for r in stale.resources}[uri] != sha(b"changed\n")
    assert new.name == "new-skill"


@pytest.mark.parametrize("era", ERAS)
async def test_a_client_does_not_ask_a_server_that_did_not_declare_skills(era: str) -> None:
    server = mcptrio.Server("plain")
    server.add_resource("x", "note://x")
    with trio.fail_after(10):
        async with skills_client(server, era) as client:
            assert not client.server_capabilities.extensions
            with pytest.raises(CapabilityNotNegotiated, match=EXTENSION_ID):
                await client.list_skills()


async def test_a_server_that_did_not_declare_skills_answers_method_not_found() -> None:
    server = mcptrio.Server("plain")
    server.add_resource("x", "note://x")
    client_end, server_end = memory_transport_pair()
    meta = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {}}
    answers = []
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.serve_session, server_end)
            for rid, method in enumerate(("skills/list", "resources/directory/read")):
                params = {"_meta": meta, "uri": "skill://x"}
                body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
                await client_end.send([Outgoing(json.dumps(body).encode())])
                frame = await client_end.receive()
                assert isinstance(frame, bytes)
                answers.append(json.loads(frame))
            nursery.cancel_scope.cancel()
    assert [a["error"]["code"] for a in answers] == [-32601, -32601]


async def test_directory_read_needs_the_directory_read_setting(folder: Path) -> None:
    server = make_server(folder)
    assert server.skills is not None
    server.skills.capability = dict  # type: ignore[method-assign]
    with trio.fail_after(10):
        async with skills_client(server, "stateless") as client:
            assert client.server_capabilities.extensions == {EXTENSION_ID: {}}
            await client.list_skills()
            with pytest.raises(CapabilityNotNegotiated, match="directoryRead"):
                await client.read_directory("skill://pdf-processing")


@pytest.mark.parametrize("era", ERAS)
async def test_subscribers_hear_of_a_skill_file_that_changed(folder: Path, era: str) -> None:
    server = make_server(folder)
    forms = folder / "pdf-processing" / "references" / "FORMS.md"
    uri = "skill://pdf-processing/references/FORMS.md"
    with trio.fail_after(10):
        async with (
            skills_client(server, era) as client,
            client.subscribe(uri) as updates,
        ):
            write(forms, "# Forms, edited\n")
            os.utime(forms, ns=(2, 2))
            await client.get_skill("skill://pdf-processing/SKILL.md")
            updated = await updates.__anext__()
            text = (await client.read_resource(updated)).contents[0].text
    assert updated == uri
    assert text == "# Forms, edited\n"


def test_a_skill_file_may_not_take_a_uri_already_served(folder: Path) -> None:
    server = mcptrio.Server("s")
    server.add_resource("mine", "skill://git-workflow/SKILL.md")
    with pytest.raises(SkillsError, match="already published"):
        server.add_skills(folder)
    assert server.skills is None
    assert server.resources["skill://git-workflow/SKILL.md"].definition.name != "git-workflow"


async def test_a_file_grown_past_the_limit_is_withdrawn_not_served_cut(folder: Path) -> None:
    server = make_server(folder)
    with trio.fail_after(20):
        async with skills_client(server, "stateless") as client:
            write(folder / "pdf-processing" / "assets" / "logo.bin", b"\1" * (16 * 1024 * 1024))
            with pytest.raises(ResourceNotFound):
                await client.read_resource("skill://pdf-processing/assets/logo.bin")
            with pytest.raises(InvalidParams, match="No skill is served"):
                await client.get_skill("skill://pdf-processing/SKILL.md")
            # The other skills are still served.
            await client.get_skill("skill://git-workflow/SKILL.md")
