"""Reading ``WWW-Authenticate`` (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1, RFC 9449 §7.1).

Sans-IO. A header holds one or more challenges, each a scheme followed by ``name=value``
parameters (a value is a token or a quoted string), all separated by commas; a response may
also carry several ``WWW-Authenticate`` fields. A challenge written as ``token68`` (no ``=``
parameters) keeps the token in :attr:`Challenge.token68`. Malformed pieces are skipped rather
than raised: a server's odd header must never crash the client, and a challenge that cannot be
read is simply one the client does not act on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["Challenge", "parse_challenges", "scope_of"]

_TOKEN_CHARS = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
#: A header longer than this is not read at all (no real challenge comes close).
MAX_HEADER = 8192


@dataclass(frozen=True, slots=True)
class Challenge:
    """One challenge: its scheme (lower-case) and parameters (names lower-case)."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None

    @property
    def error(self) -> str | None:
        return self.params.get("error")

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata")


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def skip_space(self) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t":
            self.i += 1

    def peek(self) -> str:
        return self.text[self.i] if self.i < len(self.text) else ""

    def token(self) -> str:
        start = self.i
        while self.i < len(self.text) and self.text[self.i] in _TOKEN_CHARS:
            self.i += 1
        return self.text[start : self.i]

    def quoted(self) -> str | None:
        # At the opening quote.
        self.i += 1
        out: list[str] = []
        while self.i < len(self.text):
            c = self.text[self.i]
            self.i += 1
            if c == "\\" and self.i < len(self.text):
                out.append(self.text[self.i])
                self.i += 1
            elif c == '"':
                return "".join(out)
            else:
                out.append(c)
        return None

    def skip_to_comma(self) -> None:
        while self.i < len(self.text) and self.text[self.i] != ",":
            self.i += 1


def _parse_one_header(text: str) -> list[Challenge]:
    reader = _Reader(text)
    challenges: list[Challenge] = []
    current: Challenge | None = None
    while True:
        reader.skip_space()
        if reader.peek() == ",":
            reader.i += 1
            continue
        if not reader.peek():
            break
        start = reader.i
        name = reader.token()
        if not name:
            # Not a token where one must be: skip this piece.
            reader.i += 1
            reader.skip_to_comma()
            continue
        reader.skip_space()
        if reader.peek() == "=" and current is not None:
            reader.i += 1
            reader.skip_space()
            if reader.peek() == '"':
                value = reader.quoted()
                if value is None:
                    break
            else:
                value = reader.token()
            current.params.setdefault(name.lower(), value)
            continue
        # A new challenge: ``scheme`` then a parameter, a token68 or nothing.
        current = Challenge(scheme=name.lower())
        challenges.append(current)
        after_scheme = reader.i
        word = reader.token()
        reader.skip_space()
        if word and reader.peek() == "=":
            # Either a parameter or a token68 ending in '='; look past the '='s.
            j = reader.i
            while j < len(text) and text[j] == "=":
                j += 1
            rest = text[j:].lstrip(" \t")
            if reader.i + 1 == j and rest[:1] not in ("", ","):
                reader.i = after_scheme
                continue
            token68 = text[after_scheme:j].strip()
            challenges[-1] = current = Challenge(current.scheme, {}, token68)
            reader.i = j
        elif word:
            challenges[-1] = current = Challenge(current.scheme, {}, word)
        elif reader.i == start:
            reader.i += 1
    return challenges


def parse_challenges(values: Iterable[str | bytes]) -> list[Challenge]:
    """Every challenge in the ``WWW-Authenticate`` field values ``values``, in order."""
    found: list[Challenge] = []
    for value in values:
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        if len(text) <= MAX_HEADER:
            found.extend(_parse_one_header(text))
    return found


def scope_of(challenge: Challenge) -> list[str] | None:
    """The scopes a challenge names (``scope="a b"``), or ``None`` when it names none."""
    scope = challenge.params.get("scope")
    if scope is None:
        return None
    scopes = scope.split()
    return scopes or None
