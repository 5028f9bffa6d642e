"""The two small mcptrio servers the multiplexed samples serve: ``weather`` and ``notes``.

Imported by ``by_path.py``, ``mounted.py`` and ``gateway_demo.py``; not run on its own.
"""

from __future__ import annotations

import mcptrio

weather = mcptrio.Server("weather", instructions="Forecasts for a few cities.")
FORECASTS = {"oslo": "snow", "lyon": "sun", "lima": "fog"}


@weather.tool
async def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    return f"{city}: {FORECASTS.get(city.lower(), 'unknown')}"


@weather.resource("weather://cities", mime_type="text/plain")
def cities() -> str:
    return " ".join(sorted(FORECASTS))


notes = mcptrio.Server("notes", instructions="A notepad.")
NOTES: dict[str, str] = {"welcome": "Hello from the notes server."}


@notes.tool
async def add_note(name: str, text: str) -> str:
    """Save a note."""
    NOTES[name] = text
    notes.notify_resource_updated(f"notes://{name}")
    return f"saved {name}"


@notes.resource("notes://{name}", mime_type="text/plain")
def note(name: str) -> str:
    return NOTES.get(name, "")


@notes.prompt
def summarize(name: str) -> str:
    """Ask for a summary of a note."""
    return f"Summarize this note: {NOTES.get(name, '')}"
