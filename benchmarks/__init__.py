"""Benchmarks comparing mcptrio with the official MCP Python SDK.

``python -m benchmarks`` runs every cell (library x workload x concurrent callers) in its own
subprocess (``python -m benchmarks.cell``), interleaving the libraries, and prints a table of
tool calls per second with the mcptrio/SDK ratio, and the decorator layer's cost (mcptrio's
decorator server next to a bare low-level session). See ``benchmarks/README.md``.
"""

from __future__ import annotations

from pathlib import Path

#: The repository root: cells and stdio servers are started with it as cwd and on PYTHONPATH.
REPO_ROOT = Path(__file__).resolve().parent.parent

#: Library keys as used on the cell command line and in the results. ``mcptrio-lowlevel`` serves
#: the same tool from a bare ``Session`` with a hand-written handler (no decorator layer); next
#: to ``mcptrio`` it measures what the decorator layer costs.
LIBS = ("mcptrio", "mcptrio-lowlevel", "sdk")

#: Workload name -> the numbers of concurrent callers measured for it.
WORKLOADS: dict[str, tuple[int, ...]] = {
    "in-memory": (1, 100),
    "stdio": (1, 32),
}

#: How the official SDK's ``Client`` negotiates: "auto" is its default.
SDK_MODES = ("auto", "legacy")
