"""The skills extension (SEP-2640) between mcptrio and another implementation, FastMCP 4.1.2:
FastMCP's client lists, gets and reads the skills an mcptrio server publishes (validating each
entry with its own models), and mcptrio's client reads the skills FastMCP publishes, verified,
finding the same entries mcptrio publishes for the same folder."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import trio

import mcptrio
from mcptrio.client import ClientIdentity
from mcptrio.protocol.errors import CapabilityNotNegotiated
from mcptrio.testing import open_test_client

pytest.importorskip("fastmcp")

ROOT = Path(__file__).resolve().parents[2]
PEERS = Path(__file__).parent / "peers"
SKILLS = ROOT / "examples" / "skills"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
OPT_IN = ClientIdentity(capabilities=mcptrio.declare_skills())


async def test_fastmcp_client_reads_the_skills_of_an_mcptrio_server() -> None:
    server = mcptrio.Server("skills")
    server.add_skills(SKILLS)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(server.serve_http, "127.0.0.1", 0)
            result = await trio.run_process(
                [sys.executable, str(PEERS / "fastmcp_skills_client.py"), f"{url}/mcp"],
                capture_stdout=True,
                capture_stderr=True,
                env=ENV,
            )
            nursery.cancel_scope.cancel()
    seen = json.loads(result.stdout.decode().strip().splitlines()[-1])
    assert seen == {
        "protocol_version": "2026-07-28",
        "skills": [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://git-workflow/SKILL.md",
            "skill://pdf-processing/SKILL.md",
        ],
        "name": "pdf-processing",
        "digest_matches": True,
        "mime_type": "text/markdown",
    }


async def test_mcptrio_client_reads_fastmcp_skills_verified_and_finds_mcptrios_entries() -> None:
    command = [sys.executable, str(PEERS / "fastmcp_skills_server.py"), str(SKILLS)]
    ours = mcptrio.Server("skills")
    ours.add_skills(SKILLS)
    with trio.fail_after(60):
        async with mcptrio.open_client(command, identity=OPT_IN) as client:
            theirs = [skill async for skill in client.iter_skills()]
            read = 0
            for skill in theirs:
                await client.load_skill(skill)
                assert isinstance(skill.resources, list)
                for resource in skill.resources:
                    await client.read_skill_file(skill, resource.uri)
                    read += 1
            # FastMCP declares no directoryRead: the client does not ask.
            with pytest.raises(CapabilityNotNegotiated, match="directoryRead"):
                await client.read_directory("skill://pdf-processing")
        async with open_test_client(ours, identity=OPT_IN) as client:
            mine = [skill async for skill in client.iter_skills()]
    assert read == 8
    assert [s.uri for s in theirs] == [s.uri for s in mine]
    for a, b in zip(theirs, mine, strict=True):
        assert a.frontmatter == b.frontmatter
        assert isinstance(a.resources, list) and isinstance(b.resources, list)
        assert sorted((r.uri, r.digest, r.size) for r in a.resources) == sorted(
            (r.uri, r.digest, r.size) for r in b.resources
        )
