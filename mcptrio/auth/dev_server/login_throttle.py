"""How many wrong passwords the development authorization server's login form takes:
:class:`LoginThrottle`.

A failed login counts against the user name tried and against the client's address; once either
has ``per_name`` / ``per_client`` failures within ``window`` seconds, every login for that name or
from that address is refused (429, with ``Retry-After``), the right password included (or a
guesser would learn it from the answer), until the oldest of them is ``window`` old. A successful
login clears its name's count, not its address's (an attacker with one account of their own
cannot reset their address's count by logging in). The defaults (5 per name, 20 per address, in
15 minutes) suit a server reachable by others; a server only you use can raise them.

Memory is bounded: at most ``per_name`` (or ``per_client``) failure times per key, and
``max_keys`` keys of each kind, the least recently failed forgotten first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .state import Remembered

__all__ = ["LoginThrottle"]


@dataclass(slots=True)
class LoginThrottle:
    """The failed-login limits of a :class:`~mcptrio.auth.dev_server.DevAuthorizationServer`
    (module docstring), and the failures it has seen."""

    #: Failed logins for one user name within ``window`` before that name is refused.
    per_name: int = 5
    #: Failed logins from one client address within ``window`` before it is refused.
    per_client: int = 20
    #: Seconds a failure counts for.
    window: float = 15 * 60.0
    #: How many names (and addresses) it remembers failures of.
    max_keys: int = 10_000
    _names: Remembered[str, list[float]] = field(init=False, repr=False)
    _clients: Remembered[str, list[float]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        for setting in ("per_name", "per_client", "max_keys"):
            if getattr(self, setting) < 1:
                raise ValueError(f"LoginThrottle({setting}=...) must be at least 1")
        if not self.window > 0:
            raise ValueError("LoginThrottle(window=...) must be a positive number of seconds")
        self._names = Remembered(self.max_keys)
        self._clients = Remembered(self.max_keys)

    def wait(self, name: str, client: str, *, now: float) -> float:
        """Seconds until a login for ``name`` from ``client`` may be tried; ``0.0``: now."""
        return max(
            _wait(self._names.get(name), self.per_name, self.window, now),
            _wait(self._clients.get(client), self.per_client, self.window, now),
        )

    def failed(self, name: str, client: str, *, now: float) -> None:
        """Count a wrong password for ``name`` from ``client``."""
        _count(self._names, name, self.per_name, now)
        _count(self._clients, client, self.per_client, now)

    def succeeded(self, name: str) -> None:
        """Forget ``name``'s failures (its address's still count)."""
        self._names.pop(name)


def _wait(failures: list[float] | None, limit: int, window: float, now: float) -> float:
    if failures is None:
        return 0.0
    recent = [at for at in failures if now - at < window]
    if len(recent) < limit:
        return 0.0
    return recent[-limit] + window - now


def _count(memory: Remembered[str, list[float]], key: str, limit: int, now: float) -> None:
    # Only the newest ``limit`` failures can decide a wait: older ones are dropped.
    failures = [*(memory.get(key) or ()), now][-limit:]
    memory.put(key, failures)
