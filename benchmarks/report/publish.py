"""Putting a run's figures in the docs: the charts in ``docs/benchmarks/`` and the tables in the
marked section of ``docs/benchmarks.md`` (``python -m benchmarks.report results.json --publish``).

Only the text between the two markers changes, so the rest of the page stays as written.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks import REPO_ROOT
from benchmarks.report.document import Results
from benchmarks.report.markdown import format_markdown

DOCS_PAGE = REPO_ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- latest-results: begin"
END = "<!-- latest-results: end -->"
#: The charts shown inside the section (the headline chart heads the page already).
SECTION_CHARTS = (
    ("latency.png", "Latency percentiles of the trivial tool call, 32 callers, per transport"),
    ("memory.png", "Server memory per idle session and per session with an open GET stream"),
)


class PublishError(Exception):
    """The run or the page is not fit to publish (a quick run; the markers are missing)."""


def publish(results: Results, page: Path = DOCS_PAGE) -> list[Path]:
    """Draw the charts into ``<page's folder>/benchmarks/`` and replace the page's section."""
    from benchmarks.report.charts import write_charts

    if results.get("meta", {}).get("quick"):
        raise PublishError("a --quick run's figures are not a measurement: not published")
    text = page.read_text(encoding="utf-8")
    begin = text.find(BEGIN)
    end = text.find(END)
    if begin < 0 or end < begin:
        raise PublishError(f"{page} has no {BEGIN} ... {END} section")
    comment_end = text.index("-->", begin) + len("-->")
    charts_dir = page.parent / page.stem
    charts_dir.mkdir(parents=True, exist_ok=True)
    written = write_charts(results, charts_dir)
    section = latest_results_section(results, f"{page.stem}/")
    page.write_text(text[:comment_end] + "\n\n" + section + "\n" + text[end:], encoding="utf-8")
    return [page, *written]


def latest_results_section(results: Results, charts_prefix: str) -> str:
    """The report's Markdown one heading level down, its title dropped, the charts after the
    meta."""
    lines = format_markdown(results).splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    lines = ["#" + line if line.startswith("## ") else line for line in lines]
    first_table = next((i for i, line in enumerate(lines) if line.startswith("### ")), len(lines))
    charts = [f"![{alt}]({charts_prefix}{name})\n" for name, alt in SECTION_CHARTS]
    return "\n".join([*lines[:first_table], *charts, *lines[first_table:]]).strip() + "\n"
