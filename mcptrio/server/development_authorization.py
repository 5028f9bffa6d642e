"""``--auth dev``: the development authorization server, run beside the endpoint it protects.

``mcptrio run app.py --transport http --auth dev`` (``ServingOptions(auth="dev")``) protects the
endpoint exactly as ``--auth jwt`` does, against a
:class:`~mcptrio.auth.dev_server.DevAuthorizationServer` that the same process serves on a free
port of the same loopback host. Clients find it as they would a real one (the endpoint's 401
names its Protected Resource Metadata, which names the issuer), register themselves, and log in;
``mcptrio call URL TOOL --login`` works against it as it is.

What it is for, and therefore its limits:

- It approves every authorization request at once, as the user ``dev`` (no login form, no
  consent): anyone who can reach it gets a token. So it is served on loopback only, and
  :meth:`~.serving_options.ServingOptions.check_served` refuses ``--auth dev`` with any other
  ``--host``.
- Its signing key and its registrations live in memory: a restart makes new ones, the tokens a
  client kept stop working, and the client logs in again (``mcptrio call --login`` does so by
  itself when its kept token is refused).
- Tokens name the endpoint's URL (their audience), so the port must be known before serving:
  ``--port 0`` needs ``--resource``.

With ``--workers`` the supervisor runs the authorization server, and tells each worker its
issuer in the environment variable :data:`DEV_ISSUER_ENV`; each worker verifies tokens against
its keys (:func:`options_in_worker`).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TextIO

import trio

from .serving_options import ServingOptions, ServingOptionsError

__all__ = [
    "DEV_ISSUER_ENV",
    "endpoint_resource",
    "open_development_authorization",
    "options_in_worker",
]

#: How a supervisor tells its workers where its development authorization server is.
DEV_ISSUER_ENV = "MCPTRIO_DEV_AUTH_ISSUER"

#: The scopes the development server grants besides those the endpoint requires.
_BASE_SCOPES = ("mcp", "offline_access")


def endpoint_resource(serving: ServingOptions, host: str, port: int) -> str:
    """The URL tokens are issued for: ``serving.resource``, or the endpoint on ``host:port``."""
    if serving.resource is not None:
        return serving.resource
    scheme = "http" if serving.certfile is None else "https"
    name = f"[{host.strip('[]')}]" if ":" in host else host
    return f"{scheme}://{name}:{port}{serving.path}"


@asynccontextmanager
async def open_development_authorization(
    serving: ServingOptions, host: str, port: int, out: TextIO
) -> AsyncIterator[ServingOptions]:
    """For ``serving.auth == "dev"``: serve a development authorization server on ``host``
    for the block, say where on ``out``, and give the options that use it (``auth="jwt"``).
    Any other options are given back as they are, and nothing is served."""
    if serving.auth != "dev":
        yield serving
        return
    # Imported here: a server without --auth dev does not load the authorization server.
    from ..auth.dev_server import DevAuthorizationServer

    scopes = tuple(dict.fromkeys((*_BASE_SCOPES, *serving.scopes)))
    authorization = DevAuthorizationServer(scopes=scopes, default_subject="dev")
    async with trio.open_nursery() as nursery:
        issuer = await nursery.start(authorization.serve, host.strip("[]"), 0)
        print(
            f"Development authorization server at {issuer} (it approves anyone; for local use)",
            file=out,
            flush=True,
        )
        yield serving.with_issuer(issuer, endpoint_resource(serving, host, port))
        nursery.cancel_scope.cancel()


def options_in_worker(
    serving: ServingOptions, host: str, port: int, environ: Mapping[str, str] | None = None
) -> ServingOptions:
    """A worker's options: with ``auth="dev"``, ``"jwt"`` against the supervisor's server."""
    if serving.auth != "dev":
        return serving
    issuer = (os.environ if environ is None else environ).get(DEV_ISSUER_ENV)
    if not issuer:
        raise ServingOptionsError(
            f"--auth dev in a worker needs its supervisor's issuer in {DEV_ISSUER_ENV}"
        )
    return serving.with_issuer(issuer, endpoint_resource(serving, host, port))
