"""The shipped lifespan example (``examples/lifespan.py``) prints what the how-to shows."""

from __future__ import annotations

from programs import ROOT, run_python


def test_the_lifespan_program_prints_what_the_howto_shows() -> None:
    done = run_python(ROOT / "examples" / "lifespan.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "counter: store opened",
        "visits: {'result': 1}",
        "visits: {'result': 2}",
        "counter: store closed, counts {'visits': 2}",
        "served and stopped",
    ]
