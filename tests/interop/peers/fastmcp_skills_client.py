"""FastMCP's client (4.1.2, its SEP-2640 skills support) against an mcptrio server.

Run by tests/interop/test_fastmcp_skills.py::

    python fastmcp_skills_client.py URL

Lists the skills (FastMCP validates every entry with its own models: the URI ends in the
frontmatter name, resources are complete and within the skill), gets one, reads its SKILL.md
and checks it against the entry's digest, and prints one JSON object with what it saw.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from typing import Any

from fastmcp import Client
from fastmcp.skills import SkillsClientExtension


async def main(url: str) -> None:
    seen: dict[str, Any] = {}
    async with Client(url, extensions=[SkillsClientExtension()]) as client:
        seen["protocol_version"] = client.protocol_version
        skills = await client.list_skills()
        seen["skills"] = [skill.uri for skill in skills]
        skill = await client.get_skill("skill://pdf-processing/SKILL.md")
        seen["name"] = skill.frontmatter.name
        contents = await client.read_resource(skill.uri)
        text = getattr(contents[0], "text", "")
        digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
        assert isinstance(skill.resources, list)
        listed = {resource.uri: resource.digest for resource in skill.resources}
        seen["digest_matches"] = listed[skill.uri] == digest
        seen["mime_type"] = getattr(contents[0], "mime_type", None)
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
