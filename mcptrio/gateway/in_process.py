"""An upstream that is a :class:`~mcptrio.Server` in this process: mounted, not connected."""

from __future__ import annotations

from dataclasses import dataclass, field

import trio

from ..server import Server
from ..server.mount import Mount
from .upstream import Upstream, UpstreamState

__all__ = ["InProcessUpstream"]


@dataclass(eq=False)
class InProcessUpstream:
    """An upstream that is a :class:`~mcptrio.Server` in this process, mounted rather than
    connected (:meth:`~mcptrio.Server.mount`, with the upstream's names and filters): no
    transport and no encoding between the gateway and it; its handlers get the downstream
    request's context, so progress, logging, sampling, elicitation and cancellation are the
    downstream client's directly. It cannot fail apart from the gateway, so it is always up."""

    spec: Upstream
    gateway: Server
    state: UpstreamState = field(init=False, default="connecting")
    #: Always ``None``: it cannot fail apart from the gateway.
    error: BaseException | None = field(init=False, default=None)
    connections: int = field(init=False, default=0)
    tool_names: set[str] = field(init=False, default_factory=set)
    _mount: Mount | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        assert isinstance(self.spec.target, Server)

    def __repr__(self) -> str:
        return f"<InProcessUpstream {self.spec.name!r} {self.state}>"

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Mount the server until cancelled."""
        spec = self.spec
        assert isinstance(spec.target, Server)
        self._mount = Mount(
            self.gateway,
            spec.target,
            spec.prefix,
            rename=spec.exposed,
            wants=spec.wants,
        )
        self.state, self.connections = "up", 1
        self.tool_names = set(self._mount.tool_names)
        task_status.started()
        try:
            await trio.sleep_forever()
        finally:
            self.close()

    def close(self) -> None:
        """Unmount (the gateway is dropping it)."""
        if self._mount is not None:
            self._mount.close()
            self._mount = None
        self.state = "down"

    def unavailable(self) -> str:
        return f"The upstream server {self.spec.name!r} is not running"
