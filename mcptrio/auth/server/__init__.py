"""What a protected MCP server needs: metadata, challenges, and bearer-token verification.

::

    verifier = JwtVerifier("https://auth.example.com", "https://auth.example.com/jwks")
    auth = BearerAuth(
        verifier,
        authorization_servers=["https://auth.example.com"],
        resource="https://mcp.example.com/mcp",
    )
    await server.serve_http(security=HttpSecurity(authenticator=auth))

See ``docs/how-to/protect-your-server.md`` and ``docs/explanation/authorization.md``.
"""

from .bearer import BearerAuth as BearerAuth
from .dpop import DpopPolicy as DpopPolicy
from .dpop import InvalidDpopProof as InvalidDpopProof
from .introspection import IntrospectionVerifier as IntrospectionVerifier
from .jwt_verifier import JwtVerifier as JwtVerifier
from .verifier import AccessToken as AccessToken
from .verifier import InvalidToken as InvalidToken
from .verifier import TokenVerifier as TokenVerifier
from .verifier import VerifierUnavailable as VerifierUnavailable

__all__ = [
    "AccessToken",
    "BearerAuth",
    "DpopPolicy",
    "IntrospectionVerifier",
    "InvalidDpopProof",
    "InvalidToken",
    "JwtVerifier",
    "TokenVerifier",
    "VerifierUnavailable",
]
