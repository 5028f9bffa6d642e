"""The catalogue the composition tests (``server.mount`` and the gateway) serve under a
namespace: a weather server's resources and prompt, and a notes server's tool."""

from __future__ import annotations

import mcptrio

__all__ = ["add_weather_catalogue", "notes_server"]


def add_weather_catalogue(server: mcptrio.Server) -> None:
    """The station list, a station per city, and a question about a city (both complete the
    city)."""

    @server.resource("weather://stations", mime_type="text/plain")
    def stations() -> str:
        return "oslo bergen"

    @server.resource("weather://city/{city}", completions={"city": ["oslo", "bergen"]})
    def city(city: str) -> str:
        return f"station at {city}"

    @server.prompt(completions={"city": ["oslo", "ottawa"]})
    def ask(city: str) -> str:
        return f"What is the weather in {city}?"


def notes_server() -> mcptrio.Server:
    """A server named ``notes`` with one tool, ``add``."""
    server = mcptrio.Server("notes")

    @server.tool
    def add(text: str) -> str:
        return f"added {text}"

    return server
