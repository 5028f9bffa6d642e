"""Benchmarks comparing mcptrio with the official MCP Python SDK and FastMCP.

``python -m benchmarks`` runs every cell of ``benchmarks/matrix.py`` (library x transport x
workload x load) on long-lived worker processes and the HTTP runners, interleaving the
libraries, then the capacity figures, and writes the report. See ``benchmarks/README.md``.
"""

from __future__ import annotations

from pathlib import Path

#: The repository root: workers and servers are started with it as cwd and on PYTHONPATH.
REPO_ROOT = Path(__file__).resolve().parent.parent
