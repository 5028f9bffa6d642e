"""DPoP on a protected server's side (RFC 9449): proof of possession of a token's key.

A token bound to a key carries that key's JWK SHA-256 thumbprint as ``cnf.jkt`` (RFC 9449 §6;
in the JWT, or in the introspection answer). :class:`~.bearer.BearerAuth` accepts such a token
only as ``Authorization: DPoP <token>`` with exactly one ``DPoP`` header holding a proof
(§4.3, §7.1), which must:

- be a JWT with ``typ: dpop+jwt``, an asymmetric ``alg`` from ``algorithms``, and a public key
  as ``jwk`` (no private members) with which its signature verifies;
- be made with the key the token is bound to: that key's thumbprint is ``cnf.jkt``;
- name the request: ``htm`` its method, ``htu`` its URL without query or fragment, compared
  with scheme and host case and default ports normalised. That URL is the configured resource's
  origin followed by the request's path (or the resource itself, for the MCP endpoint): never
  the request's ``Host``;
- be fresh: ``iat`` at most ``max_age`` seconds from now, either way;
- be for this token: ``ath`` is the base64url SHA-256 of the token;
- be new: its ``jti`` is remembered (per key) until the proof expires, and a second use is
  refused; see :mod:`.dpop_replay` for where (the stores' Redis when ``stores`` has one, else a
  bounded cache in memory).

A refused proof is answered 401 with ``WWW-Authenticate: DPoP error="invalid_dpop_proof"``.
Server-supplied nonces (§8, §9) are not used: a proof's freshness rests on ``iat`` and the
replay cache. The JOSE work (parsing, the signature, the thumbprint) is ``joserfc``'s.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Collection, Sequence
from dataclasses import InitVar, dataclass, field
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import JWKRegistry, OctKey

from .dpop_replay import MemoryReplayCache, RedisReplayCache, ReplayCache
from .verifier import AccessToken, InvalidToken

if TYPE_CHECKING:
    from ...stores.bundle import Stores

__all__ = ["DEFAULT_DPOP_ALGORITHMS", "DpopPolicy", "InvalidDpopProof", "bound_key_of"]

#: The proof signature algorithms accepted by default (asymmetric only, as RFC 9449 requires).
DEFAULT_DPOP_ALGORITHMS: Final = ("ES256", "ES384", "PS256", "RS256", "EdDSA")
#: A proof longer than this is refused before it is parsed.
MAX_PROOF_SIZE: Final = 8 * 1024
_MAX_JTI: Final = 256
# Members only a private (or symmetric) JWK has: a proof's key must be public.
_PRIVATE_MEMBERS: Final = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_WEBSOCKET_SCHEMES: Final = {"ws": "http", "wss": "https"}


class InvalidDpopProof(InvalidToken):
    """The request's DPoP proof is missing, malformed, or does not fit the request, the token or
    its key (answered 401 ``invalid_dpop_proof``)."""


def bound_key_of(token: AccessToken) -> str | None:
    """The thumbprint of the key ``token`` is bound to (``cnf.jkt``), ``None`` when unbound."""
    confirmation = token.claims.get("cnf")
    if not isinstance(confirmation, dict):
        return None
    jkt = confirmation.get("jkt")
    if jkt is None:
        return None
    if not isinstance(jkt, str) or not jkt:
        raise InvalidToken("token's cnf.jkt is not a thumbprint")
    return jkt


@dataclass(eq=False, kw_only=True)
class DpopPolicy:
    """How a :class:`~.bearer.BearerAuth` takes DPoP-bound tokens (see the module docstring).

    - ``required``: take DPoP-bound tokens only (a bearer token, or an unbound one, is refused);
      by default both kinds are taken, a bound one only with its proof.
    - ``algorithms``: the proof algorithms accepted, advertised in the metadata.
    - ``max_age``: seconds a proof's ``iat`` may be from now, either way.
    - ``replay_cache_size``: the most live proofs the in-memory replay cache holds (past it,
      503 until some expire).
    - ``stores``: the server's stores (:func:`mcptrio.open_stores`); with Redis, the replay cache
      is there, shared by every worker.
    """

    required: bool = False
    algorithms: Collection[str] = DEFAULT_DPOP_ALGORITHMS
    max_age: float = 60.0
    replay_cache_size: int = 100_000
    stores: InitVar[Stores | None] = None
    replays: ReplayCache = field(init=False, repr=False)

    def __post_init__(self, stores: Stores | None) -> None:
        if not self.algorithms:
            raise ValueError("DpopPolicy(algorithms=) names at least one algorithm")
        if any(alg == "none" or alg.startswith("HS") for alg in self.algorithms):
            raise ValueError("DpopPolicy(algorithms=) takes asymmetric algorithms only")
        if self.max_age <= 0:
            raise ValueError(f"DpopPolicy(max_age=) must be positive, got {self.max_age}")
        self.algorithms = tuple(self.algorithms)
        if stores is not None and stores.redis is not None:
            self.replays = RedisReplayCache(stores.redis, stores.prefix)
        else:
            self.replays = MemoryReplayCache(self.replay_cache_size)

    async def check(
        self, proofs: Sequence[bytes], *, method: str, urls: Collection[str], token: str, jkt: str
    ) -> None:
        """Check the request's ``DPoP`` header values for ``token`` bound to ``jkt``, on a
        ``method`` request to one of ``urls``; :class:`InvalidDpopProof` when they do not do."""
        if len(proofs) != 1:
            raise InvalidDpopProof("send exactly one DPoP header with a DPoP-bound token")
        claims = self._verified_claims(proofs[0], jkt)
        if claims.get("htm") != method:
            raise InvalidDpopProof(f"DPoP proof is for another method (htm), not {method}")
        htu = claims.get("htu")
        if not isinstance(htu, str) or normalized_url(htu) not in {
            normalized_url(url) for url in urls
        }:
            raise InvalidDpopProof("DPoP proof is for another URL (htu)")
        iat = claims.get("iat")
        if not isinstance(iat, int | float) or isinstance(iat, bool):
            raise InvalidDpopProof("DPoP proof has no iat")
        now = time.time()
        if abs(now - iat) > self.max_age:
            raise InvalidDpopProof("DPoP proof is too old or from the future (iat)")
        ath = claims.get("ath")
        if not isinstance(ath, str) or not hmac.compare_digest(ath, token_hash(token)):
            raise InvalidDpopProof("DPoP proof is for another access token (ath)")
        jti = claims.get("jti")
        if not isinstance(jti, str) or not 0 < len(jti) <= _MAX_JTI:
            raise InvalidDpopProof("DPoP proof has no jti")
        key = hashlib.sha256(f"{jkt}\0{jti}".encode()).digest()
        # Kept one second past the proof's own end, so that no clock rounding reopens it.
        if not await self.replays.first_use(key, iat + self.max_age - now + 1.0):
            raise InvalidDpopProof("DPoP proof was already used (jti)")

    def _verified_claims(self, proof: bytes, jkt: str) -> dict[str, Any]:
        if len(proof) > MAX_PROOF_SIZE:
            raise InvalidDpopProof("DPoP proof is too long")
        try:
            header = jws.extract_compact(proof).protected
        except (JoseError, ValueError, TypeError, UnicodeError):
            raise InvalidDpopProof("DPoP proof is not a JWT") from None
        if not isinstance(header, dict) or header.get("typ") != "dpop+jwt":
            raise InvalidDpopProof("DPoP proof's typ is not dpop+jwt")
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise InvalidDpopProof(f"DPoP proof algorithm {alg!r} is not accepted")
        jwk = header.get("jwk")
        if not isinstance(jwk, dict) or _PRIVATE_MEMBERS & jwk.keys():
            raise InvalidDpopProof("DPoP proof's jwk is not a public key")
        try:
            key = JWKRegistry.import_key(jwk)
        except (JoseError, ValueError, TypeError, KeyError):
            key = None
        if key is None or isinstance(key, OctKey):
            raise InvalidDpopProof("DPoP proof's jwk is not a public key")
        try:
            claims = jwt.decode(proof, key, algorithms=[str(alg)]).claims
        except JoseError as exc:
            raise InvalidDpopProof(f"DPoP proof signature is not valid ({exc.error})") from None
        except (ValueError, TypeError):
            raise InvalidDpopProof("DPoP proof is not a valid JWT") from None
        if not hmac.compare_digest(str(key.thumbprint()), jkt):
            raise InvalidDpopProof("DPoP proof is signed with a key the token is not bound to")
        return claims


def token_hash(token: str) -> str:
    """``ath``: the base64url SHA-256 of the access token, unpadded."""
    digest = hashlib.sha256(token.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def normalized_url(url: str) -> str | None:
    """``url`` without query or fragment, scheme and host in lower case, a default port left out,
    ``ws``/``wss`` as ``http``/``https`` (a WebSocket upgrade is an HTTP request); ``None``
    when it is no absolute URL."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    scheme = _WEBSOCKET_SCHEMES.get(scheme, scheme)
    host = parts.hostname
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return f"{scheme}://{netloc}{parts.path or '/'}"
