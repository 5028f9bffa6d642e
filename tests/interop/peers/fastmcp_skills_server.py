"""A FastMCP (4.1.2) server publishing a folder of skills over stdio, with its SEP-2640 support.

Run by tests/interop/test_fastmcp_skills.py (mcptrio's client lists, gets and reads them)::

    python fastmcp_skills_server.py FOLDER
"""

from __future__ import annotations

import sys
from pathlib import Path

from fastmcp import FastMCP
from fastmcp.server.providers.skills import SkillsDirectoryProvider
from fastmcp.skills.extension import SkillsExtension

provider = SkillsDirectoryProvider(
    roots=Path(sys.argv[1]), supporting_files="resources", experimental_skills=True
)
server = FastMCP("fastmcp-skills")
server.add_provider(provider)
server.add_extension(SkillsExtension(providers=[provider]))

if __name__ == "__main__":
    server.run("stdio", show_banner=False)
