"""The wrk scripts' answer check (benchmarks/http/check.lua), run in wrk's own Lua.

wrk runs a script as soon as it loads it, before it connects: a script that runs the checker
over the cases, prints one verdict per line and exits is a test of check.lua in the interpreter
the benchmark uses.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks.http.wrk import WRK

CHECK_LUA = Path(__file__).resolve().parents[2] / "benchmarks" / "http" / "check.lua"

JSON = "application/json"
READ_100K_TEXT = "y" * 102_400


def _read_answer(text: str, spaced: bool = False) -> str:
    colon = " : " if spaced else ":"
    return (
        f'{{"jsonrpc":"2.0","id":7,"result"{colon}{{"contents":[{{"uri":"bench://blob/100k",'
        f'"mimeType":"text/plain","text"{colon}"{text}"}}]}}}}'
    )


def _call_answer(text: str, is_error: str) -> str:
    return (
        '{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"'
        + text
        + '"}],"isError"'
        + is_error
        + "}}"
    )


#: (name, (content_types, kind, arg1, arg2), status, content type, body, verdict)
CASES: list[tuple[str, tuple[str, str, str, str], int, str, str, str]] = [
    ("read", (JSON, "text", "y", "102400"), 200, JSON, _read_answer(READ_100K_TEXT), "ok"),
    (
        "read, spaces around the colons",
        (JSON, "text", "y", "102400"),
        200,
        JSON,
        _read_answer(READ_100K_TEXT, spaced=True),
        "ok",
    ),
    (
        "read, one character short",
        (JSON, "text", "y", "102400"),
        200,
        JSON,
        _read_answer(READ_100K_TEXT[:-1]),
        "wrong text content",
    ),
    (
        "read, another character",
        (JSON, "text", "y", "3"),
        200,
        JSON,
        _read_answer("yzy"),
        "wrong text content",
    ),
    (
        # "text" is first the value of "type", then the key: the key's value is checked.
        "call, text after type text",
        (JSON, "text", "x", "3"),
        200,
        JSON,
        _call_answer("xxx", ":false"),
        "ok",
    ),
    (
        "call, a tool error",
        (JSON, "text", "x", "3"),
        200,
        JSON,
        _call_answer("xxx", " :  true"),
        "a tool error",
    ),
    (
        "call, isError only inside a string",
        (JSON, "text", "x", "3"),
        200,
        JSON,
        _call_answer("xxx", ':false,"_meta":{"note":"\\"isError\\": true"}'),
        "ok",
    ),
    (
        "a JSON-RPC error",
        (JSON, "text", "x", "3"),
        200,
        JSON,
        '{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no \\"result\\": here"}}',
        "no JSON-RPC result",
    ),
    (
        "no text block",
        (JSON, "text", "x", "3"),
        200,
        JSON,
        '{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"image","data":"xxx"}]}}',
        "no text content",
    ),
    (
        "tools",
        (JSON, "tools", "2", "0"),
        200,
        JSON,
        '{"jsonrpc":"2.0","id":7,"result":{"tools" : [{"name":"a","inputSchema":{}},'
        '{"name":"b","inputSchema":{}}]}}',
        "ok",
    ),
    (
        "tools, one missing",
        (JSON, "tools", "2", "0"),
        200,
        JSON,
        '{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a","inputSchema":{}}]}}',
        "1 tools listed",
    ),
    (
        "tools, no list",
        (JSON, "tools", "2", "0"),
        200,
        JSON,
        '{"jsonrpc":"2.0","id":7,"result":{"tools":{}}}',
        "no tools list",
    ),
    (
        "SSE accepted",
        ("application/json,text/event-stream", "text", "x", "3"),
        200,
        "text/event-stream",
        "event: message\ndata: " + _call_answer("xxx", ":false") + "\n\n",
        "ok",
    ),
    ("status", (JSON, "text", "x", "3"), 500, JSON, _call_answer("xxx", ":false"), "status 500"),
    (
        "content type",
        (JSON, "text", "x", "3"),
        200,
        "text/html",
        _call_answer("xxx", ":false"),
        "content type text/html",
    ),
]


def _lua_string(value: str) -> str:
    """``value`` as a Lua long string (no escapes are read inside one)."""
    level = "=" * 4
    assert f"]{level}]" not in value
    # A long string drops a newline that directly follows its opening bracket.
    return f"[{level}[\n{value}]{level}]"


def _script() -> str:
    lines = [f"local check = dofile({_lua_string(str(CHECK_LUA))})"]
    for _name, (types, kind, arg1, arg2), status, content_type, body, _verdict in CASES:
        checker_args = ", ".join(_lua_string(arg) for arg in (types, kind, arg1, arg2))
        lines.append(
            f"do local problem = check.answer_checker({checker_args})({status}, "
            f'{{["content-type"] = {_lua_string(content_type)}}}, {_lua_string(body)}) '
            'io.write(problem or "ok", "\\n") end'
        )
    lines.append("os.exit(0)")
    return "\n".join(lines) + "\n"


def lines_printed_by_wrk(script_text: str, tmp_path: Path) -> list[str]:
    """What a Lua script prints when wrk loads it (it runs before wrk connects anywhere)."""
    if shutil.which(WRK) is None:
        # .ci/run installs wrk: its absence is a broken environment, not a reason to skip.
        pytest.fail(f"wrk not found ({WRK}): the HTTP benchmark needs it (apt-get install wrk)")
    script = tmp_path / "cases.lua"
    script.write_text(script_text)
    done = subprocess.run(
        [WRK, "-t1", "-c1", "-d1s", "-s", str(script), "http://127.0.0.1:9/"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_answer_check_accepts_good_answers_and_names_what_is_wrong_with_bad_ones(
    tmp_path: Path,
) -> None:
    verdicts = lines_printed_by_wrk(_script(), tmp_path)
    assert len(verdicts) == len(CASES), verdicts
    for (name, *_rest, expected), verdict in zip(CASES, verdicts, strict=True):
        assert verdict == expected, name
