"""The client API: :func:`open_client`, :class:`Client` and the client's own errors.

The modules, one concept each:

- :mod:`.connect`: :func:`open_client`, choosing the transport, the session and the handshake;
- :mod:`.client`: :class:`Client`, a typed call per server feature, pagination, subscriptions;
- :mod:`.server_requests`: the application's sampling, elicitation and roots handlers, and the
  capabilities derived from them;
- :mod:`.notifications`: callbacks and bounded streams for the server's notifications;
- :mod:`.output_validation`: checking ``structuredContent`` against a tool's ``outputSchema``;
- :mod:`.errors`: :class:`ClientError`, :class:`OutputValidationError`, :class:`RepeatedCursor`.
"""

from .client import Client as Client
from .connect import DEFAULT_CLIENT_INFO as DEFAULT_CLIENT_INFO
from .connect import open_client as open_client
from .errors import ClientError as ClientError
from .errors import OutputValidationError as OutputValidationError
from .errors import RepeatedCursor as RepeatedCursor
from .notifications import ListKind as ListKind
from .notifications import LogMessages as LogMessages
from .notifications import MergedUpdates as MergedUpdates
from .server_requests import ElicitationHandler as ElicitationHandler
from .server_requests import ElicitationMode as ElicitationMode
from .server_requests import SamplingHandler as SamplingHandler
