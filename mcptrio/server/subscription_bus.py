"""The subscription bus, as the server sees it (it lives in :mod:`mcptrio.stores.subscription_bus`,
below the server, so that a bus shared through Redis can be built on it)."""

from ..stores.subscription_bus import DEFAULT_MAX_LISTENERS as DEFAULT_MAX_LISTENERS
from ..stores.subscription_bus import DEFAULT_MAX_URIS_PER_LISTENER as DEFAULT_MAX_URIS_PER_LISTENER
from ..stores.subscription_bus import Change as Change
from ..stores.subscription_bus import Listener as Listener
from ..stores.subscription_bus import LocalSubscriptionBus as LocalSubscriptionBus
from ..stores.subscription_bus import SubscriptionBus as SubscriptionBus
from ..stores.subscription_bus import TooManyListeners as TooManyListeners
