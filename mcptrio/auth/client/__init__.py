"""OAuth 2.1 for MCP clients: one component every HTTP client transport uses.

::

    from mcptrio.auth.client import AuthorizationCode, LoopbackBrowser, OAuthClient

    oauth = OAuthClient(AuthorizationCode(LoopbackBrowser()))
    async with mcptrio.open_client(mcptrio.client.http(url, auth=oauth)) as client:
        ...

- :class:`OAuthClient` (:mod:`.oauth`): tokens on requests; discovery, login, refresh, step-up
  and DPoP nonces when the server refuses.
- Grants (:mod:`.grants`): :class:`AuthorizationCode`, :class:`ClientCredentials`,
  :class:`JwtBearer`, :class:`EnterpriseManaged`.
- Redirect handlers (:mod:`.redirect`): :class:`LoopbackBrowser`, :class:`HeadlessUserAgent`.
- Stores (:mod:`.store`): :class:`InMemoryTokenStore`, :class:`FileTokenStore`.
- Registration (:mod:`.registration`): :class:`ClientMetadata`, :class:`ClientRegistration`
  (pre-registered credentials), :class:`ClientKey` (``private_key_jwt``).
- Errors (:mod:`.errors`): :class:`AuthorizationError` and its branches.

Needs the ``auth`` extra (``pip install 'mcptrio[auth]'``: ``joserfc``, for DPoP proofs and
``private_key_jwt`` assertions).
"""

try:
    import joserfc as _joserfc  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        "mcptrio.auth.client needs the 'auth' extra: pip install 'mcptrio[auth]'"
    ) from exc

from .discovery import AuthorizationServer as AuthorizationServer
from .discovery import ProtectedResource as ProtectedResource
from .dpop import DpopKey as DpopKey
from .errors import AuthorizationError as AuthorizationError
from .errors import AuthorizationResponseError as AuthorizationResponseError
from .errors import DiscoveryError as DiscoveryError
from .errors import InsufficientScope as InsufficientScope
from .errors import RegistrationError as RegistrationError
from .errors import TokenError as TokenError
from .grants import AuthorizationCode as AuthorizationCode
from .grants import ClientCredentials as ClientCredentials
from .grants import EnterpriseManaged as EnterpriseManaged
from .grants import Grant as Grant
from .grants import GrantContext as GrantContext
from .grants import JwtBearer as JwtBearer
from .oauth import OAuthClient as OAuthClient
from .redirect import HeadlessUserAgent as HeadlessUserAgent
from .redirect import LoopbackBrowser as LoopbackBrowser
from .redirect import RedirectHandler as RedirectHandler
from .redirect import RedirectSession as RedirectSession
from .registration import ClientMetadata as ClientMetadata
from .store import ClientRegistration as ClientRegistration
from .store import FileTokenStore as FileTokenStore
from .store import InMemoryTokenStore as InMemoryTokenStore
from .store import Tokens as Tokens
from .store import TokenStore as TokenStore
from .token_endpoint import ClientKey as ClientKey
