"""The client API: :func:`open_client`, :class:`Client`, its targets, options and errors.

The modules, one concept each:

- :mod:`.connect`: :func:`open_client`, running the session and the handshake;
- :mod:`.targets`: what a client connects to (:func:`stdio`, :func:`http`, :func:`websocket`,
  :func:`in_memory`, or the plain forms: a list, a URL, a server), told apart by type;
- :mod:`.options`: what a client is configured with, per call (:class:`CallOptions`) and per
  connection (:class:`ClientOptions`: :class:`ClientIdentity`, :class:`Revisions`,
  :class:`Timeouts`, :class:`Handlers`, :class:`NotificationCallbacks`);
- :mod:`.client`: :class:`Client`, a typed call per server feature;
- :mod:`.sending`: how a client's requests reach the server (cache, send hook, input rounds);
- :mod:`.client_streams`: the client's notification streams: ``subscribe``, ``listen``,
  ``list_changes``, ``log_messages``;
- :mod:`.pages`: every item of a paginated list (the ``iter_*`` methods);
- :mod:`.listen`, :mod:`.listen_actor`: ``subscriptions/listen`` streams (2026-07-28), the
  block's own (:class:`ListenStream`) and the client's own;
- :mod:`.cache`: the stateless era's cache of results (:class:`CachePolicy`, ``cache=``);
- :mod:`.group`: :func:`~mcptrio.open_client_group`, several servers at once;
- :mod:`.server_requests`: the application's sampling, elicitation and roots handlers, and the
  capabilities derived from them;
- :mod:`.notifications`: callbacks and bounded streams for the server's notifications;
- :mod:`.output_validation`: checking ``structuredContent`` against a tool's ``outputSchema``;
- :mod:`.errors`: :class:`ClientError`, :class:`OutputValidationError`, :class:`RepeatedCursor`,
  :class:`SubscriptionRefused`.
"""

from .cache import CacheMode as CacheMode
from .cache import CachePolicy as CachePolicy
from .client import Client as Client
from .connect import open_client as open_client
from .errors import ClientError as ClientError
from .errors import OutputValidationError as OutputValidationError
from .errors import RepeatedCursor as RepeatedCursor
from .errors import SubscriptionRefused as SubscriptionRefused
from .listen import ListenStream as ListenStream
from .notifications import ListKind as ListKind
from .notifications import LogMessages as LogMessages
from .notifications import MergedUpdates as MergedUpdates
from .notifications import NotificationCallbacks as NotificationCallbacks
from .options import DEFAULT_CLIENT_INFO as DEFAULT_CLIENT_INFO
from .options import HANDSHAKE_ERA as HANDSHAKE_ERA
from .options import CallOptions as CallOptions
from .options import ClientIdentity as ClientIdentity
from .options import ClientOptions as ClientOptions
from .options import Revisions as Revisions
from .options import Timeouts as Timeouts
from .server_requests import ElicitationHandler as ElicitationHandler
from .server_requests import ElicitationMode as ElicitationMode
from .server_requests import Handlers as Handlers
from .server_requests import SamplingHandler as SamplingHandler
from .targets import HttpTarget as HttpTarget
from .targets import InMemoryTarget as InMemoryTarget
from .targets import SessionServer as SessionServer
from .targets import StdioTarget as StdioTarget
from .targets import Target as Target
from .targets import WebSocketTarget as WebSocketTarget
from .targets import http as http
from .targets import in_memory as in_memory
from .targets import stdio as stdio
from .targets import websocket as websocket
