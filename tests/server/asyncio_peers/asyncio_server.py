"""A server whose tool, resource template and prompt are written against asyncio (aiohttp,
aiosqlite), served over stdio for tests/server/test_asyncio_handlers.py:
``python asyncio_server.py URL DATABASE``."""

from __future__ import annotations

import asyncio
import sys

import aiohttp
import aiosqlite

import mcptrio

URL, DATABASE = sys.argv[1], sys.argv[2]
server = mcptrio.Server("asyncio-peer")


@server.tool
@mcptrio.asyncio_handler
async def fetch(path: str) -> str:
    """Fetch a page from the local aiohttp server."""
    async with aiohttp.ClientSession() as http, http.get(URL + path) as response:
        response.raise_for_status()
        return await response.text()


@server.tool
@mcptrio.asyncio_handler
async def pets(species: str) -> list[str]:
    """The names of the pets of a species, from the sqlite file."""
    async with aiosqlite.connect(DATABASE) as db:
        query = "SELECT name FROM pets WHERE species = ? ORDER BY name"
        async with db.execute(query, (species,)) as cursor:
            return [row[0] async for row in cursor]


@server.resource("pets://{species}")
@mcptrio.asyncio_handler
async def pet_count(species: str) -> str:
    async with aiosqlite.connect(DATABASE) as db:
        query = "SELECT count(*) FROM pets WHERE species = ?"
        async with db.execute(query, (species,)) as cursor:
            row = await cursor.fetchone()
    return f"{row[0] if row else 0} {species}s"


@server.prompt
@mcptrio.asyncio_handler
async def greet(name: str) -> str:
    await asyncio.sleep(0)
    return f"Hello {name}, from {type(asyncio.get_running_loop()).__name__}"


if __name__ == "__main__":
    server.run("stdio")
