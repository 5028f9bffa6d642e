"""The protocol revisions: one table of what each one has, and version negotiation.

Every revision is a row of :data:`REVISIONS`: a frozen :class:`Revision` whose members say which
features it has. Code asks the row (``revision.structured_output``), never the date: revisions
are compared through the table, not as strings. :func:`revision_of` finds the row of a version
string as it comes off the wire.

The wire types describe the newest shape of every message. What a revision lacks is taken out
(or turned into what it has) in one place, :mod:`mcptrio.protocol.fitting`, which reads the
features from these rows.

**Adding a revision** is adding a row here (newest first), the message types it brings in
:mod:`mcptrio.protocol.types`, their methods in :mod:`mcptrio.protocol.methods`, and, for each
member or type that not every revision has, the feature it belongs to in
:mod:`mcptrio.protocol.fitting`. A feature the new revision brings is a new member of
:class:`Revision` (false in every older row).

The handshake-era revisions negotiate once, in ``initialize``: the client offers the revision it
prefers (its latest); a server that speaks it echoes it, otherwise it answers with its own latest.
A client that does not speak the server's answer refuses it and disconnects.

The stateless-era revision (2026-07-28, ``era="stateless"``) is never negotiated: each request
names it in its own ``_meta`` (:mod:`mcptrio.protocol.request_meta`), so
:data:`HANDSHAKE_SUPPORTED` and :data:`STATELESS_SUPPORTED` split the table by era.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from .errors import UnsupportedProtocolVersion

__all__ = [
    "ASSUMED_WITHOUT_VERSION_HEADER",
    "FEATURES",
    "HANDSHAKE_SUPPORTED",
    "LATEST",
    "REVISIONS",
    "STATELESS_SUPPORTED",
    "SUPPORTED",
    "Era",
    "Revision",
    "accept_server_answer",
    "choose_server_revision",
    "handshake_versions",
    "revision_of",
    "stateless_versions",
]

#: ``handshake``: ``initialize`` opens a session; ``stateless``: every request stands alone.
Era: TypeAlias = Literal["handshake", "stateless"]


@dataclass(frozen=True, slots=True, eq=False)
class Revision:
    """What one protocol revision has. Rows are singletons: compare them with ``is``.

    Each boolean member is a feature: true where the revision has it (false unless its row says
    so). The comment above each says where it came from (CHECKLIST sections and SEPs in the
    spec folder).
    """

    #: The version string, as in ``protocolVersion`` and the ``MCP-Protocol-Version`` header.
    version: str
    era: Era
    #: The ``initialize`` POST statuses after which a client tries the HTTP+SSE transport
    #: (any 4xx until 2025-11-25 narrowed it to 400, 404 and 405).
    http_sse_fallback_statuses: frozenset[int]

    #: JSON-RPC batch arrays (2025-03-26 only; removed in 2025-06-18).
    batches: bool = False
    #: ``AudioContent`` (2025-03-26).
    audio: bool = False
    #: ``Tool.annotations`` (``ToolAnnotations``, 2025-03-26).
    tool_annotations: bool = False
    #: ``message`` on ``notifications/progress`` (2025-03-26).
    progress_message: bool = False
    #: The server capability ``completions``, which gates ``completion/complete`` (2025-03-26).
    completions_capability: bool = False
    #: ``title`` on tools, prompts, prompt arguments, resources, templates, resource links,
    #: prompt references and implementations (``BaseMetadata``, 2025-06-18).
    titles: bool = False
    #: ``_meta`` on tools, prompts, resources, templates, content blocks, resource contents and
    #: roots (2025-06-18; requests, notifications and results always had it).
    data_meta: bool = False
    #: ``annotations.lastModified`` (2025-06-18).
    last_modified: bool = False
    #: ``Tool.outputSchema`` and ``CallToolResult.structuredContent`` (2025-06-18).
    structured_output: bool = False
    #: ``ResourceLink`` content blocks (2025-06-18).
    resource_links: bool = False
    #: ``context`` on ``completion/complete`` (2025-06-18).
    completion_context: bool = False
    #: ``elicitation/create`` and the client capability ``elicitation`` (2025-06-18).
    elicitation: bool = False
    #: URL-mode elicitation: ``mode``, ``url``, ``elicitationId``, the capability members
    #: ``form`` / ``url``, ``notifications/elicitation/complete`` (2025-11-25, SEP-1036).
    url_elicitation: bool = False
    #: Multi-select enums in forms, so string-array answers (2025-11-25, SEP-1330).
    multi_select_elicitation: bool = False
    #: Tasks: ``tasks/*``, ``task`` on requests, ``Tool.execution``, the ``tasks`` capabilities
    #: (2025-11-25, SEP-1686).
    tasks: bool = False
    #: Sampling with tools: ``tools`` / ``toolChoice``, tool-use and tool-result content, a list
    #: of blocks as a message's content, ``_meta`` on sampling messages, the capabilities
    #: ``sampling.tools`` and ``sampling.context`` (2025-11-25, SEP-1577).
    sampling_tools: bool = False
    #: ``icons``, and ``description`` / ``websiteUrl`` on implementations (2025-11-25, SEP-973).
    icons: bool = False
    #: An error response may leave out an ``id`` it could not read (2025-11-25).
    error_id_optional: bool = False
    #: SSE polling: priming events, ``retry``, resumption by GET (2025-11-25, SEP-1699).
    sse_polling: bool = False
    #: ``elicitationId`` on URL-mode elicitations and ``notifications/elicitation/complete``
    #: (2025-11-25; removed in 2026-07-28).
    elicitation_ids: bool = False
    #: ``roots.listChanged`` and ``notifications/roots/list_changed`` (removed in 2026-07-28).
    roots_list_changed: bool = False
    #: ``resultType`` on every result (2026-07-28, SEP-2322). The connection adds it to what it
    #: answers in this revision; nothing else sets it, so the fitting step need not remove it.
    result_type: bool = False
    #: ``ttlMs`` / ``cacheScope`` on discover, list and read results (2026-07-28, SEP-2549).
    cache_hints: bool = False
    #: Input-required results: ``inputResponses`` / ``requestState`` on ``tools/call``,
    #: ``prompts/get`` and ``resources/read`` (2026-07-28, SEP-2322).
    input_required: bool = False
    #: The ``extensions`` capability (2026-07-28, SEP-2133).
    extensions: bool = False

    def __repr__(self) -> str:
        return f"<Revision {self.version}>"


#: The names of the boolean features of :class:`Revision`.
FEATURES: Final[frozenset[str]] = frozenset(
    field.name for field in dataclasses.fields(Revision) if field.type == "bool"
)


def _successor(
    previous: Revision, version: str, *, gains: str, loses: str = "", **changes: Any
) -> Revision:
    """The row of ``version``: ``previous`` with the features named in ``gains`` and without
    those in ``loses`` (names separated by spaces), and any other ``changes``."""
    features: dict[str, Any] = dict.fromkeys(gains.split(), True)
    features |= dict.fromkeys(loses.split(), False)
    unknown = features.keys() - FEATURES
    if unknown:
        raise ValueError(f"Not features of a revision: {sorted(unknown)}")
    return dataclasses.replace(previous, version=version, **features, **changes)


_ANY_4XX = frozenset(range(400, 500))

#: The first public revision has none of the later features; each row after it says what its
#: revision brought and took away.
_R_2024_11_05 = Revision(
    version="2024-11-05",
    era="handshake",
    http_sse_fallback_statuses=_ANY_4XX,
    roots_list_changed=True,
)
_R_2025_03_26 = _successor(
    _R_2024_11_05,
    "2025-03-26",
    gains="batches audio tool_annotations progress_message completions_capability",
)
_R_2025_06_18 = _successor(
    _R_2025_03_26,
    "2025-06-18",
    gains="titles data_meta last_modified structured_output resource_links completion_context"
    " elicitation",
    loses="batches",
)
_R_2025_11_25 = _successor(
    _R_2025_06_18,
    "2025-11-25",
    gains="url_elicitation multi_select_elicitation tasks sampling_tools icons error_id_optional"
    " sse_polling elicitation_ids",
    http_sse_fallback_statuses=frozenset({400, 404, 405}),
)
#: The stateless era: no handshake, ``_meta`` on every request (CHECKLIST 6.2). Tasks moved to
#: an extension; server-to-client requests became input-required results (the method table
#: keys those on ``era``).
_R_2026_07_28 = _successor(
    _R_2025_11_25,
    "2026-07-28",
    gains="result_type cache_hints input_required extensions",
    loses="tasks sse_polling elicitation_ids roots_list_changed",
    era="stateless",
)

#: Every revision mcptrio speaks, newest first.
REVISIONS: Final[tuple[Revision, ...]] = (
    _R_2026_07_28,
    _R_2025_11_25,
    _R_2025_06_18,
    _R_2025_03_26,
    _R_2024_11_05,
)
#: Their version strings, newest first.
SUPPORTED: Final[tuple[str, ...]] = tuple(revision.version for revision in REVISIONS)
#: The newest version string.
LATEST: Final[str] = SUPPORTED[0]
#: The versions negotiated by ``initialize``, newest first.
HANDSHAKE_SUPPORTED: Final[tuple[str, ...]] = tuple(
    revision.version for revision in REVISIONS if revision.era == "handshake"
)
#: The versions a request names in its own ``_meta``, newest first.
STATELESS_SUPPORTED: Final[tuple[str, ...]] = tuple(
    revision.version for revision in REVISIONS if revision.era == "stateless"
)
#: The revision a Streamable HTTP server assumes for a request without ``MCP-Protocol-Version``
#: when it has no other way to tell (2025-06-18 transport rules).
ASSUMED_WITHOUT_VERSION_HEADER: Final[str] = "2025-03-26"

_BY_VERSION: Final[dict[str, Revision]] = {revision.version: revision for revision in REVISIONS}


def revision_of(version: str) -> Revision:
    """The row of ``version``; ``ValueError`` if mcptrio does not speak it."""
    try:
        return _BY_VERSION[version]
    except KeyError:
        raise ValueError(f"Unknown protocol revision {version!r}") from None


def choose_server_revision(requested: str, supported: tuple[str, ...] = SUPPORTED) -> str:
    """The revision a server answers ``initialize`` with: the requested one, else its latest.

    Only handshake-era revisions are negotiated this way.
    """
    offered = handshake_versions(supported)
    return requested if requested in offered else offered[0]


def handshake_versions(supported: tuple[str, ...]) -> tuple[str, ...]:
    """The versions of ``supported`` that ``initialize`` negotiates, newest first."""
    return tuple(v for v in supported if revision_of(v).era == "handshake")


@functools.cache
def stateless_versions(supported: tuple[str, ...]) -> tuple[str, ...]:
    """The versions of ``supported`` that a request names in its own ``_meta``, newest first.

    Cached: a server asks on every stateless-era request, always with the same tuple."""
    return tuple(v for v in supported if revision_of(v).era == "stateless")


def accept_server_answer(answered: str, supported: tuple[str, ...] = SUPPORTED) -> str:
    """Check the revision a server answered with; raise if the client does not speak it."""
    if answered not in handshake_versions(supported):
        raise UnsupportedProtocolVersion(
            f"Server answered with protocol version {answered!r}, which this client does not speak",
            {"supported": list(supported), "requested": answered},
        )
    return answered
