"""A transcript of the messages a client and a server exchanged, each checked against the
official JSON schema of the revision they spoke.

:class:`Transcript` records every frame that crosses the client's transport, both ways, decoded
as JSON, in the order the client's side saw them (a 2025-03-26 batch is one entry holding a
list). :meth:`Transcript.check` validates each against the schema of the revision in use
(:mod:`.schema_check`):

- the revision is the one ``initialize`` negotiated, or, for a stateless-era exchange
  (2026-07-28), the one each request names in its ``_meta``; the stateless probe a client
  sends before it falls back to ``initialize`` is checked at the revision it names;
- requests and notifications are checked with their sender's side (a method sent the wrong way
  fails), responses against the result type of the request they answer (an input-required
  result as ``InputRequiredResult``), errors against the JSON-RPC error envelope.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..protocol.codec import CarriedResult
from ..protocol.request_meta import PROTOCOL_VERSION_KEY
from ..runtime.transport import FailedRequest, Frame, Outgoing, Transport, TransportAbilities
from .schema_check import (
    EXTENSION_PARTS,
    RESULT_TYPES,
    REVISIONS,
    ValidationError,
    result_key,
    validate_extension_result,
    validate_message,
)

__all__ = ["Entry", "RecordingTransport", "SchemaViolation", "Transcript"]

Sender = Literal["client", "server"]


@dataclass(frozen=True, slots=True)
class Entry:
    """One frame: who sent it, and its JSON (a dict, or a list for a batch)."""

    sender: Sender
    message: Any

    @property
    def method(self) -> str | None:
        """The method of a request or notification; ``None`` for a response or a batch."""
        method = self.message.get("method") if isinstance(self.message, dict) else None
        return method if isinstance(method, str) else None

    @property
    def is_request(self) -> bool:
        return isinstance(self.message, dict) and "method" in self.message and "id" in self.message

    @property
    def is_notification(self) -> bool:
        return (
            isinstance(self.message, dict) and "method" in self.message and "id" not in self.message
        )

    @property
    def is_response(self) -> bool:
        return isinstance(self.message, dict) and (
            "result" in self.message or "error" in self.message
        )


class SchemaViolation(AssertionError):
    """Messages of a transcript broke the official schema of their revision.

    ``problems`` lists each as ``(entry, revision, message)``.
    """

    def __init__(self, problems: Sequence[tuple[Entry, str, str]]) -> None:
        self.problems = list(problems)
        lines = [f"{len(self.problems)} message(s) break the MCP schema:"]
        for entry, revision, message in self.problems:
            shown = json.dumps(entry.message)
            if len(shown) > 300:
                shown = shown[:297] + "..."
            lines.append(f"- {entry.sender} sent, at {revision}: {shown}\n  {message}")
        super().__init__("\n".join(lines))


class Transcript:
    """The messages of one connection, in order; see the module docstring."""

    def __init__(self) -> None:
        #: Every frame, in the order the client's side sent or received it.
        self.entries: list[Entry] = []

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def record(self, sender: Sender, data: bytes) -> None:
        """Add one frame (its bytes, as on the wire)."""
        self.entries.append(Entry(sender, json.loads(data)))

    def sent_by(self, sender: Sender) -> list[Any]:
        """The messages ``sender`` sent, in order."""
        return [entry.message for entry in self.entries if entry.sender == sender]

    def methods(self, sender: Sender = "client") -> list[str]:
        """The methods of the requests and notifications ``sender`` sent, in order."""
        return [e.method for e in self.entries if e.sender == sender and e.method is not None]

    def requests(self, method: str | None = None, *, sender: Sender = "client") -> list[Any]:
        """The requests ``sender`` sent (of ``method`` only, when given)."""
        return [
            e.message
            for e in self.entries
            if e.sender == sender and e.is_request and method in (None, e.method)
        ]

    def notifications(self, method: str | None = None, *, sender: Sender = "server") -> list[Any]:
        """The notifications ``sender`` sent (of ``method`` only, when given)."""
        return [
            e.message
            for e in self.entries
            if e.sender == sender and e.is_notification and method in (None, e.method)
        ]

    def response_to(self, request: Any) -> Any | None:
        """The response to ``request`` (a request of this transcript), if one came."""
        sender = next((e.sender for e in self.entries if e.message is request), None)
        answerer = "client" if sender == "server" else "server"
        for entry in self.entries:
            message = entry.message
            if entry.sender == answerer and entry.is_response and message["id"] == request["id"]:
                return message
        return None

    @property
    def revision(self) -> str | None:
        """The revision ``initialize`` negotiated, else the last one a request's ``_meta``
        named (stateless era); ``None`` before either."""
        negotiated = self._negotiated()
        if negotiated is not None:
            return negotiated
        named = [_named_revision(e.message) for e in self.entries if e.sender == "client"]
        found = [revision for revision in named if revision is not None]
        return found[-1] if found else None

    def violations(self) -> list[tuple[Entry, str, str]]:
        """Each message that breaks its revision's schema: ``(entry, revision, message)``."""
        negotiated = self._negotiated()
        asked: dict[tuple[Sender, Any], tuple[str, str | None]] = {}
        problems: list[tuple[Entry, str, str]] = []
        for entry in self.entries:
            message = entry.message
            items = message if isinstance(message, list) else [message]
            revision = negotiated or self._revision_of(items) or REVISIONS[-1]
            try:
                if isinstance(message, list):
                    validate_message(message, revision)
                for item in items:
                    self._check_one(entry.sender, item, revision, asked)
            except ValidationError as exc:
                problems.append((entry, revision, _short(exc)))
            except ValueError as exc:
                problems.append((entry, revision, str(exc)))
        return problems

    def check(self) -> int:
        """Validate every message; returns how many. Raises :class:`SchemaViolation` listing
        every one that breaks the schema of its revision."""
        problems = self.violations()
        if problems:
            raise SchemaViolation(problems)
        return len(self.entries)

    # ------------------------------------------------------------------ internals

    def _negotiated(self) -> str | None:
        for entry in self.entries:
            message = entry.message
            if entry.sender != "server" or not isinstance(message, dict):
                continue
            result = message.get("result")
            if (
                isinstance(result, dict)
                and isinstance(result.get("protocolVersion"), str)
                and _answers_initialize(self.entries, message.get("id"))
            ):
                return str(result["protocolVersion"])
        return None

    def _revision_of(self, items: list[Any]) -> str | None:
        for item in items:
            named = _named_revision(item)
            if named is not None:
                return named
        return None

    def _check_one(
        self,
        sender: Sender,
        message: Any,
        revision: str,
        asked: dict[tuple[Sender, Any], tuple[str, str | None]],
    ) -> None:
        if not isinstance(message, dict):
            validate_message(message, revision)
            return
        if "method" in message:
            if "id" in message:
                named = _named_revision(message)
                asked[(sender, message["id"])] = (result_key(message), named)
                validate_message(message, named or revision, sender)
            else:
                validate_message(message, revision, sender)
            return
        asker: Sender = "server" if sender == "client" else "client"
        method, named = asked.pop((asker, message.get("id")), ("", None))
        revision = named or revision
        if "result" in message and method in EXTENSION_PARTS:
            validate_extension_result(message, revision, method)
        elif "result" in message:
            result = message["result"]
            if isinstance(result, dict) and result.get("resultType") == "input_required":
                hint: str | None = "InputRequiredResult"
            else:
                hint = RESULT_TYPES.get(method)
            validate_message(message, revision, hint)
        else:
            validate_message(message, revision)


class RecordingTransport:
    """A transport that records every frame it carries into a :class:`Transcript`: wrap the
    client's end of a connection (the client sends what the server receives)."""

    def __init__(self, inner: Transport, transcript: Transcript, *, local: Sender = "client"):
        self.inner = inner
        self.transcript = transcript
        self._local: Sender = local
        self._peer: Sender = "server" if local == "client" else "client"

    async def receive(self) -> Frame | FailedRequest | CarriedResult:
        frame = await self.inner.receive()
        if isinstance(frame, bytes):
            self.transcript.record(self._peer, frame)
        elif isinstance(frame, CarriedResult):
            # An in-process peer's unencoded result: recorded as the frame it stands for.
            self.transcript.record(self._peer, frame.encoded())
        return frame

    async def send(self, frames: Sequence[Outgoing]) -> None:
        for frame in frames:
            self.transcript.record(self._local, frame.data)
        await self.inner.send(frames)

    def abilities(self) -> TransportAbilities:
        # Every frame goes through send, where it is recorded: no way around it is declared.
        return TransportAbilities(
            request_ended_unanswered=self.inner.abilities().request_ended_unanswered
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


def _named_revision(message: Any) -> str | None:
    """The revision a stateless-era request names in its ``_meta``."""
    if not isinstance(message, dict):
        return None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    named = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    return named if isinstance(named, str) and named in REVISIONS else None


def _answers_initialize(entries: list[Entry], rid: Any) -> bool:
    return any(
        e.sender == "client" and e.method == "initialize" and e.message.get("id") == rid
        for e in entries
    )


def _short(exc: ValidationError) -> str:
    where = "/".join(str(part) for part in exc.absolute_path)
    return f"{exc.message} (at {where or 'the top'})"
