"""The benchmark's report: the Markdown table, the JSON file and the PNG charts of one run.

``write_results(results, out_dir)`` writes all of them from the orchestrator's Results document
(``.helpers/bench_contract.md`` has its shape); ``python -m benchmarks.report results.json``
writes them again from a saved ``results.json``. matplotlib (the ``bench`` extra) is imported
only when the charts are drawn, so ``format_markdown`` works without it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.report.document import Results
from benchmarks.report.markdown import format_markdown

__all__ = ["format_markdown", "results_json", "write_results"]

#: Keys written first, in this order, wherever they occur; the others follow sorted, so that two
#: runs' files compare line by line.
_KEY_ORDER = ("meta", "cells", "capacity", "lib", "transport", "workload", "load")


def write_results(results: Results, out_dir: Path) -> list[Path]:
    """Write ``results.json``, ``results.md`` and the charts into ``out_dir``; return the paths."""
    from benchmarks.report.charts import write_charts

    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "results.json"
    json_path.write_text(results_json(results), encoding="utf-8")
    markdown_path = out_dir / "results.md"
    markdown_path.write_text(format_markdown(results), encoding="utf-8")
    return [json_path, markdown_path, *write_charts(results, out_dir)]


def results_json(results: Results) -> str:
    """The document as indented JSON, keys in a stable order."""
    return json.dumps(_in_key_order(results), indent=2, ensure_ascii=False) + "\n"


def _in_key_order(value: Any) -> Any:
    if isinstance(value, dict):
        rank = {key: i for i, key in enumerate(_KEY_ORDER)}
        keys = sorted(value, key=lambda k: (rank.get(k, len(rank)), str(k)))
        return {k: _in_key_order(value[k]) for k in keys}
    if isinstance(value, list | tuple):
        return [_in_key_order(v) for v in value]
    return value
