"""The server the attacks run against, in a child process: ``python -m stress.server MODE``.

``MODE`` is ``stdio`` (serve stdin/stdout), or ``http-h11`` / ``http-httptools`` /
``hypercorn`` (serve HTTP, Streamable HTTP, legacy SSE and WebSocket on one loopback port,
printing the base URL as the first line of stdout). Limits can be narrowed with
``--limit name=value`` (``ServerLimits`` fields), so that short runs reach them quickly.
``--skill-mib N`` publishes a skill with an N MiB file, ``skill://large/data.txt``, written to a
temporary folder for the run.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any, Literal

import trio

import mcptrio
from mcptrio.server.context import Context
from mcptrio.transports.http.engine.builtin_server import ServerLimits


def build_server() -> mcptrio.Server:
    """A server with what the attacks need: a cheap tool, one that elicits, one that sleeps (also
    as a task), a template."""
    server = mcptrio.Server("stress")

    @server.tool(structured_output=False)
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool(structured_output=False)
    async def ask(ctx: Context) -> str:
        """Ask the client something, and wait (the elicitation's own timeout bounds it)."""
        answer: Any = await ctx.elicit("Go on?", {"type": "object", "properties": {}})
        return str(answer.action)

    @server.tool(structured_output=False)
    async def sleep(seconds: float) -> str:
        """Sleep, then answer."""
        await trio.sleep(seconds)
        return "slept"

    @server.tool(structured_output=False, task="required")
    async def hold(seconds: float) -> str:
        """Run as a task for ``seconds``: what a ``tasks/result`` long poll waits for."""
        await trio.sleep(seconds)
        return "held"

    @server.tool(structured_output=False, task="optional")
    async def forever() -> str:
        """Run until cancelled (as a task, it stays working for its TTL)."""
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    @server.resource("item://{n}")
    def item(n: str) -> str:
        return f"item {n}"

    return server


def publish_large_skill(server: mcptrio.Server, folder: Path, mib: int) -> None:
    """``skill://large/data.txt``: ``mib`` MiB of text, in a skill of its own under ``folder``."""
    skill = folder / "large"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: large\ndescription: One large file\n---\n")
    line = b"All work and no play makes a large skill file.\n"
    with (skill / "data.txt").open("wb") as out:
        for _ in range(mib):
            out.write((line * (1024 * 1024 // len(line) + 1))[: 1024 * 1024])
    server.add_skills(folder)


def parse_limits(pairs: list[str]) -> ServerLimits:
    fields: dict[str, Any] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        fields[name] = float(value) if "." in value else int(value)
    return ServerLimits(**fields)


async def serve_http_printing_url(mode: str, limits: ServerLimits, skill_mib: int) -> None:
    server = build_server()
    with tempfile.TemporaryDirectory(prefix="stress-skills-") as folder:
        if skill_mib:
            publish_large_skill(server, Path(folder), skill_mib)
        await serve_http_until_cancelled(server, mode, limits)


async def serve_http_until_cancelled(
    server: mcptrio.Server, mode: str, limits: ServerLimits
) -> None:
    front_end: Literal["builtin", "hypercorn"] = "hypercorn" if mode == "hypercorn" else "builtin"
    parser: Literal["auto", "h11", "httptools"] = "auto"
    if mode in ("http-h11", "http-httptools"):
        parser = "h11" if mode == "http-h11" else "httptools"
    async with trio.open_nursery() as nursery:
        url = await nursery.start(
            partial(
                server.serve_http,
                front_end=front_end,
                parser=parser,
                limits=limits,
            )
        )
        sys.stdout.write(f"{url}\n")
        sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", choices=["stdio", "http-h11", "http-httptools", "hypercorn"])
    parser.add_argument("--limit", action="append", default=[])
    parser.add_argument("--skill-mib", type=int, default=0)
    parser.add_argument(
        "--log-errors", action="store_true", help="log errors with tracebacks to stderr"
    )
    args = parser.parse_args()
    if args.log_errors:
        logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    if args.mode == "stdio":
        build_server().run_stdio()
    else:
        trio.run(serve_http_printing_url, args.mode, parse_limits(args.limit), args.skill_mib)


if __name__ == "__main__":
    main()
