"""OAuth 2.1 for MCP: the protected resource server, the client flows, a development server.

- :mod:`mcptrio.auth.server`: what a protected mcptrio server needs (Protected Resource Metadata,
  ``WWW-Authenticate``, bearer verification by JWT/JWKS or token introspection, scopes).
- :mod:`mcptrio.auth.client`: the client side, one component that every HTTP client transport
  uses (discovery, registration, PKCE, tokens, refresh, step-up, DPoP).
- :mod:`mcptrio.auth.dev_server`: a development authorization server on trio, for examples and
  tests.

Cryptography and token formats come from kept libraries; this package writes the flows.
"""
