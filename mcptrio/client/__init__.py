"""The client API: :func:`open_client` and :class:`Client`."""

from .client import Client as Client
from .client import open_client as open_client
