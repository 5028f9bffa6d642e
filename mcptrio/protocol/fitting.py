"""Fitting messages to a revision: one step out, one step in.

mcptrio builds every message in the newest shape. :func:`fit_outgoing` turns one (the params of
a request or notification, or a result) into what the negotiated revision defines;
:func:`check_incoming` reads one from the peer as that revision means it. The
:class:`~mcptrio.protocol.connection.Connection` applies both to everything it sends and
receives, so nothing above it (``server/``, ``client/``) looks at revisions to shape messages.

What a revision lacks is declared here, per wire type, as the :class:`Revision` feature that
brought it (:data:`MEMBERS`, :data:`TYPES`):

- a **member** the revision lacks (``title``, ``icons``, ``_meta`` on data, ``outputSchema``,
  ``structuredContent``, ``annotations.lastModified``, ``task``, ...) is left out, both ways:
  out, so the peer never sees what its schema does not define; in, so a handler sees the
  message as the revision means it (the spec has receivers ignore members they do not know);
- a **type** the revision lacks is turned into one it has when sent: audio content and resource
  links become a text block saying what they were (see ``docs/explanation/revisions.md`` for
  why one text note everywhere); tool-use and tool-result content cannot be, and are refused.
  Received, such a block is kept: mcptrio can read it, whatever the peer's revision;
- a few rules need more than leaving a member out (:data:`_OUT_RULES`, :data:`_IN_RULES`): a tool
  title goes into ``annotations.title`` where only that exists (2025-03-26); a sampling message
  with a list of blocks keeps its one block; URL-mode elicitation, sampling with tools and
  string-array answers are refused where the revision lacks them, since leaving the member out
  would change what is asked; a client declaring only URL-mode elicitation declares no
  elicitation to a revision without modes.

What cannot be fitted raises :class:`~mcptrio.protocol.errors.CapabilityNotNegotiated` going
out and :class:`~mcptrio.protocol.errors.InvalidParams` coming in.

Cost. The step of a revision that lacks nothing that shapes a message (the newest) is ``None``:
the connection skips it. Otherwise a :class:`Step` first asks, per message type (cached),
whether any struct the type can hold is touched by a feature the revision lacks, and hands back
the message itself when none is; only then does it walk the message, rebuilding just the
structs that change.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, TypeVar

import msgspec
import msgspec.inspect as mi

from .base import Request
from .errors import CapabilityNotNegotiated, InvalidParams
from .extensions import HANDSHAKE_ERA_EXTENSIONS
from .revisions import FEATURES, REVISIONS, Revision
from .skills_extension import GetSkillResult
from .types import (
    AnnotatedBlock,
    Annotations,
    AudioContent,
    BaseMetadata,
    CacheablePaginatedResult,
    CallToolResult,
    ClientCapabilities,
    CompleteRequest,
    CreateMessageRequest,
    CreateMessageResult,
    Described,
    ElicitationCapability,
    ElicitRequest,
    ElicitResult,
    Implementation,
    InputRequiredResult,
    InputResponseRequest,
    ProgressNotification,
    ReadResourceResult,
    ResourceContents,
    ResourceLink,
    Root,
    RootsCapability,
    SamplingCapability,
    SamplingMessage,
    ServerCapabilities,
    TextContent,
    Tool,
    ToolAnnotations,
    ToolResultContent,
    ToolUseContent,
)

__all__ = [
    "MEMBERS",
    "TYPES",
    "Step",
    "check_incoming",
    "fit_outgoing",
    "incoming_step",
    "members_of",
    "outgoing_step",
]

M = TypeVar("M")
Direction = Literal["out", "in"]

#: Members that not every revision defines, by the struct that declares them, with the feature
#: that brought them (``dict.fromkeys`` where several came with one feature). Subclasses
#: inherit the entries of their bases.
MEMBERS: Final[Mapping[type, Mapping[str, str]]] = {
    BaseMetadata: {"title": "titles"},
    Described: {"icons": "icons", "meta": "data_meta"},
    Implementation: dict.fromkeys(("description", "icons", "website_url"), "icons"),
    Tool: {
        "output_schema": "structured_output",
        "annotations": "tool_annotations",
        "execution": "tasks",
    },
    Annotations: {"last_modified": "last_modified"},
    AnnotatedBlock: {"meta": "data_meta"},
    ResourceContents: {"meta": "data_meta"},
    Root: {"meta": "data_meta"},
    # A sampling message got ``_meta`` with sampling with tools, not in 2025-06-18.
    SamplingMessage: {"meta": "sampling_tools"},
    CallToolResult: {"structured_content": "structured_output"},
    CreateMessageRequest: dict.fromkeys(("tools", "tool_choice"), "sampling_tools"),
    ElicitRequest: {
        "mode": "url_elicitation",
        "url": "url_elicitation",
        "elicitation_id": "elicitation_ids",
    },
    # ``task`` on tools/call, sampling/createMessage and elicitation/create.
    Request: {"task": "tasks"},
    CompleteRequest: {"context": "completion_context"},
    ProgressNotification: {"message": "progress_message"},
    # ``extensions`` stays in every revision: _handshake_extensions keeps the extensions that
    # exist in a revision without the extensions capability (skills, see .extensions).
    ClientCapabilities: {"elicitation": "elicitation", "tasks": "tasks"},
    RootsCapability: {"list_changed": "roots_list_changed"},
    SamplingCapability: dict.fromkeys(("context", "tools"), "sampling_tools"),
    ElicitationCapability: dict.fromkeys(("form", "url"), "url_elicitation"),
    ServerCapabilities: {"completions": "completions_capability", "tasks": "tasks"},
    CacheablePaginatedResult: dict.fromkeys(("ttl_ms", "cache_scope"), "cache_hints"),
    ReadResourceResult: dict.fromkeys(("ttl_ms", "cache_scope"), "cache_hints"),
    GetSkillResult: dict.fromkeys(("ttl_ms", "cache_scope"), "cache_hints"),
    InputResponseRequest: dict.fromkeys(("input_responses", "request_state"), "input_required"),
}

#: Wire types that not every revision defines, with the feature that brought them.
TYPES: Final[Mapping[type, str]] = {
    AudioContent: "audio",
    ResourceLink: "resource_links",
    ToolUseContent: "sampling_tools",
    ToolResultContent: "sampling_tools",
    InputRequiredResult: "input_required",
}

_Rule = Callable[[Any, Revision], Any]


# ---------------------------------------------------------------------------- the rules


def _audio_note(block: AudioContent, revision: Revision) -> TextContent:
    return TextContent(
        text=f"[audio ({block.mime_type}) left out: protocol revision {revision.version}"
        " has no audio]",
        annotations=block.annotations,
    )


def _link_note(link: ResourceLink, revision: Revision) -> TextContent:
    label = link.title if isinstance(link.title, str) else link.name
    kind = f" ({link.mime_type})" if isinstance(link.mime_type, str) else ""
    text = f"[resource link: {label} <{link.uri}>{kind}]"
    if isinstance(link.description, str):
        text += "\n" + link.description
    return TextContent(text=text, annotations=link.annotations)


#: How a type the revision lacks is sent instead (absent: it cannot be sent).
_STAND_INS: Final[Mapping[type, _Rule]] = {AudioContent: _audio_note, ResourceLink: _link_note}


def _tool_title(tool: Tool, revision: Revision) -> Tool:
    """2025-03-26 has ``annotations.title`` but no ``title``: carry it there."""
    if tool.title is None or not revision.tool_annotations or revision.titles:
        return tool
    annotations = tool.annotations
    if annotations is None:
        return msgspec.structs.replace(tool, annotations=ToolAnnotations(title=tool.title))
    if annotations.title is None:
        annotations = msgspec.structs.replace(annotations, title=tool.title)
        return msgspec.structs.replace(tool, annotations=annotations)
    return tool


def _single_block(message: Any, revision: Revision) -> Any:
    """Before sampling with tools a message's content is one block, not a list."""
    content = message.content
    if revision.sampling_tools or not isinstance(content, list):
        return message
    if len(content) != 1:
        raise CapabilityNotNegotiated(
            f"{len(content)} content blocks in one sampling message: protocol revision"
            f" {revision.version} allows exactly one"
        )
    return msgspec.structs.replace(message, content=content[0])


def _no_sampling_tools(request: CreateMessageRequest, revision: Revision) -> None:
    if not revision.sampling_tools and (
        request.tools is not None or request.tool_choice is not None
    ):
        raise CapabilityNotNegotiated(
            f"sampling with tools does not exist in protocol revision {revision.version}"
        )


def _no_url_mode(request: ElicitRequest, revision: Revision) -> None:
    if request.mode == "url" and not revision.url_elicitation:
        raise CapabilityNotNegotiated(
            f"URL-mode elicitation does not exist in protocol revision {revision.version}"
        )


def _no_string_arrays(result: ElicitResult, revision: Revision) -> ElicitResult:
    if revision.multi_select_elicitation or not isinstance(result.content, dict):
        return result
    for name, value in result.content.items():
        if isinstance(value, list):
            raise CapabilityNotNegotiated(
                f"a list answer for {name!r}: string arrays are new in 2025-11-25 (this session"
                f" speaks {revision.version})"
            )
    return result


def _elicitation_without_modes(caps: ClientCapabilities, revision: Revision) -> Any:
    """Without modes, ``elicitation: {}`` means form mode: a URL-only client declares none."""
    elicitation = caps.elicitation
    if (
        revision.url_elicitation
        or elicitation is None
        or elicitation.url is None
        or elicitation.form is not None
    ):
        return caps
    return msgspec.structs.replace(caps, elicitation=None)


def _handshake_extensions(caps: Any, revision: Revision) -> Any:
    """Before the ``extensions`` capability, only the extensions that exist in handshake-era
    revisions are declared (as the suite and SEP-2640's implementations do in ``initialize``)."""
    extensions = caps.extensions
    if revision.extensions or extensions is None:
        return caps
    kept = {key: value for key, value in extensions.items() if key in HANDSHAKE_ERA_EXTENSIONS}
    if len(kept) == len(extensions):
        return caps
    return msgspec.structs.replace(caps, extensions=kept or None)


def _client_capabilities(caps: ClientCapabilities, revision: Revision) -> Any:
    return _handshake_extensions(_elicitation_without_modes(caps, revision), revision)


def _checked(check: Callable[[Any, Revision], None]) -> _Rule:
    def rule(message: Any, revision: Revision) -> Any:
        check(message, revision)
        return message

    return rule


#: Rules beyond leaving members out, by type, with the features they act on; run before the
#: members the revision lacks are left out.
_OUT_RULES: Final[Mapping[type, tuple[_Rule, tuple[str, ...]]]] = {
    Tool: (_tool_title, ("titles",)),
    SamplingMessage: (_single_block, ("sampling_tools",)),
    CreateMessageResult: (_single_block, ("sampling_tools",)),
    CreateMessageRequest: (_checked(_no_sampling_tools), ("sampling_tools",)),
    ElicitRequest: (_checked(_no_url_mode), ("url_elicitation",)),
    ElicitResult: (_no_string_arrays, ("multi_select_elicitation",)),
    ClientCapabilities: (_client_capabilities, ("url_elicitation", "extensions")),
    ServerCapabilities: (_handshake_extensions, ("extensions",)),
}
_IN_RULES: Final[Mapping[type, tuple[_Rule, tuple[str, ...]]]] = {
    CreateMessageRequest: (_checked(_no_sampling_tools), ("sampling_tools",)),
    ElicitRequest: (_checked(_no_url_mode), ("url_elicitation",)),
    ClientCapabilities: (_client_capabilities, ("url_elicitation", "extensions")),
    ServerCapabilities: (_handshake_extensions, ("extensions",)),
}


# ---------------------------------------------------------------------------- the walk


_MEMBERS_OF: Final[dict[type, Mapping[str, str]]] = {}


def members_of(cls: type) -> Mapping[str, str]:
    """The feature-gated members ``cls`` has, with those its bases declare."""
    members = _MEMBERS_OF.get(cls)
    if members is None:
        merged: dict[str, str] = {}
        for klass in reversed(cls.__mro__):
            merged.update(MEMBERS.get(klass, {}))
        fields = getattr(cls, "__struct_fields__", ())
        members = {name: feature for name, feature in merged.items() if name in fields}
        _MEMBERS_OF[cls] = members
    return members


@functools.cache
def _reachable(cls: type) -> tuple[type, ...]:
    """``cls`` and every struct type a value of it can hold, at any depth."""
    found: dict[type, None] = {}
    pending: list[mi.Type] = [mi.type_info(cls)]
    while pending:
        info = pending.pop()
        if isinstance(info, mi.StructType):
            if info.cls in found:
                continue
            found[info.cls] = None
            pending.extend(field.type for field in info.fields)
        elif isinstance(info, mi.UnionType):
            pending.extend(info.types)
        elif isinstance(info, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
            pending.append(info.item_type)
        elif isinstance(info, mi.DictType):
            pending.append(info.value_type)
        elif isinstance(info, mi.TupleType):
            pending.extend(info.item_types)
    return tuple(found)


def _features_touching(cls: type, direction: Direction) -> frozenset[str]:
    """The features that can change a message of type ``cls`` going ``direction``."""
    rules = _OUT_RULES if direction == "out" else _IN_RULES
    touched: set[str] = set()
    for struct in _reachable(cls):
        touched.update(members_of(struct).values())
        if struct in TYPES:
            touched.add(TYPES[struct])
        if struct in rules:
            touched.update(rules[struct][1])
    return frozenset(touched)


@dataclasses.dataclass(slots=True, eq=False)
class Step:
    """Fits messages to one revision, one direction (see the module docstring)."""

    revision: Revision
    direction: Direction
    _lacking: frozenset[str] = dataclasses.field(init=False)
    _rules: Mapping[type, tuple[_Rule, tuple[str, ...]]] = dataclasses.field(init=False)
    _needs: dict[type, bool] = dataclasses.field(init=False, default_factory=dict)
    _plans: dict[type, _Plan] = dataclasses.field(init=False, default_factory=dict)
    # The types whose plan only leaves fields out (a newer revision's members, say): most
    # messages of those have none of them set, which one getattr per field tells.
    _drop_only: dict[type, tuple[str, ...]] = dataclasses.field(init=False, default_factory=dict)
    #: The types whose messages this step leaves as they are, once each was seen. A type's
    #: plan depends only on the type and the revision, so it never leaves this set: a
    #: caller may skip the step for a message whose type is here, as the step itself does.
    unchanged: set[type] = dataclasses.field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        self._lacking = frozenset(name for name in FEATURES if not getattr(self.revision, name))
        self._rules = _OUT_RULES if self.direction == "out" else _IN_RULES

    def __repr__(self) -> str:
        return f"<Step {self.direction} {self.revision.version}>"

    def __call__(self, message: M) -> M:
        """``message`` fitted to the revision (``message`` itself when nothing changes)."""
        # Most messages need nothing (one dict lookup, known once their type was seen), and
        # most of the rest only have fields to leave out, which they do not set.
        cls = type(message)
        if cls in self.unchanged:
            return message
        dropped = self._drop_only.get(cls)
        if dropped is not None:
            for name in dropped:
                if getattr(message, name) is not None:
                    break
            else:
                return message
        if self.direction == "out":
            fitted: M = self._value(message)
            return fitted
        # Received, what the revision cannot carry is the peer's mistake: -32602.
        try:
            received: M = self._value(message)
        except CapabilityNotNegotiated as exc:
            raise InvalidParams(exc.message) from None
        return received

    def needs(self, cls: type) -> bool:
        """Whether a message of type ``cls`` can change in this revision."""
        needs = self._needs.get(cls)
        if needs is None:
            needs = self._needs[cls] = bool(_features_touching(cls, self.direction) & self._lacking)
        return needs

    def _plan(self, cls: type) -> _Plan:
        """How the walk fits a struct of type ``cls``, worked out once per type: whether the
        type itself is one the revision lacks, the rule it goes through, the fields it leaves
        out, and those whose values can change (what their type can hold needs fitting); the
        other fields cannot change, and are not looked at."""
        if not self.needs(cls):
            plan: _Plan = _UNCHANGED
        else:
            feature = TYPES.get(cls)
            lacked = feature is not None and not getattr(self.revision, feature)
            rule = self._rules.get(cls)
            members = members_of(cls)
            dropped = tuple(name for name, feature in members.items() if feature in self._lacking)
            info = mi.type_info(cls)
            assert isinstance(info, mi.StructType)
            walked = tuple(
                field.name
                for field in info.fields
                if field.name not in dropped and self._may_change(field.type)
            )
            plan = (lacked, None if rule is None else rule[0], dropped, walked)
            if plan == _UNCHANGED:
                # A type that the revision touches only in members it has no value for here.
                plan = _UNCHANGED
            elif not lacked and rule is None and not walked:
                self._drop_only[cls] = dropped
        if plan is _UNCHANGED:
            self.unchanged.add(cls)
        self._plans[cls] = plan
        return plan

    def _may_change(self, info: mi.Type) -> bool:
        """Whether a value of type ``info`` can change: the walk goes into structs and lists
        only, and a value typed ``Any`` may be either."""
        if isinstance(info, mi.StructType):
            return self.needs(info.cls)
        if isinstance(info, mi.UnionType):
            return any(self._may_change(member) for member in info.types)
        if isinstance(info, mi.ListType):
            return self._may_change(info.item_type)
        return isinstance(info, mi.AnyType | mi.CustomType)

    def _value(self, value: Any) -> Any:
        if isinstance(value, msgspec.Struct):
            return self._struct(value)
        if type(value) is list:
            # A list whose items are all of types in ``unchanged`` (a tool's text blocks, say)
            # is left as it is without a call per item: a type never leaves that set.
            unchanged = self.unchanged
            for item in value:
                if item.__class__ not in unchanged:
                    break
            else:
                return value
            items = [self._value(item) for item in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        return value

    def _struct(self, obj: Any) -> Any:
        cls: type[Any] = type(obj)
        plan = self._plans.get(cls)
        if plan is None:
            plan = self._plan(cls)
        if plan is _UNCHANGED:
            return obj
        lacked, rule, dropped, walked = plan
        revision = self.revision
        if lacked and self.direction == "out":
            stand_in = _STAND_INS.get(cls)
            if stand_in is None:
                raise CapabilityNotNegotiated(
                    f"{cls.__name__} does not exist in protocol revision {revision.version}"
                )
            return self._struct(stand_in(obj, revision))
        if rule is not None:
            obj = rule(obj, revision)
        changes: dict[str, Any] = {}
        for name in dropped:
            if getattr(obj, name) is not None:
                changes[name] = None
        for name in walked:
            value = getattr(obj, name)
            if value is None:
                continue
            fitted = self._value(value)
            if fitted is not value:
                changes[name] = fitted
        return msgspec.structs.replace(obj, **changes) if changes else obj


#: How the walk fits one struct type (see ``Step._plan``): (the type is one the revision lacks,
#: its rule, the fields left out, the fields walked into); or ``_UNCHANGED``.
_Plan = tuple[bool, "_Rule | None", tuple[str, ...], tuple[str, ...]]
#: The plan of a type no message of which changes in the revision.
_UNCHANGED: Final[_Plan] = (False, None, (), ())


_OUTGOING: Final[dict[Revision, Step | None]] = {}
_INCOMING: Final[dict[Revision, Step | None]] = {}


def _shaping_features(direction: Direction) -> frozenset[str]:
    """The features that can change the shape of a message going ``direction``."""
    rules = _OUT_RULES if direction == "out" else _IN_RULES
    return frozenset(
        [feature for members in MEMBERS.values() for feature in members.values()]
        + list(TYPES.values())
        + [feature for _, features in rules.values() for feature in features]
    )


def _make_step(revision: Revision, direction: Direction) -> Step | None:
    """Make and keep the step of ``revision`` going ``direction`` (``None``: the revision lacks
    nothing that shapes a message going that way)."""
    lacking = {name for name in _shaping_features(direction) if not getattr(revision, name)}
    step = Step(revision, direction) if lacking else None
    (_OUTGOING if direction == "out" else _INCOMING)[revision] = step
    return step


# Every revision's steps are made at import (below): asked per stateless-era request and
# answer, these are lookups.


def outgoing_step(revision: Revision) -> Step | None:
    """The step that fits what is sent in ``revision``; ``None`` when nothing needs fitting."""
    try:
        return _OUTGOING[revision]
    except KeyError:
        return _make_step(revision, "out")


def incoming_step(revision: Revision) -> Step | None:
    """The step that reads what is received in ``revision``; ``None`` when nothing needs it."""
    try:
        return _INCOMING[revision]
    except KeyError:
        return _make_step(revision, "in")


def fit_outgoing(message: M, revision: Revision) -> M:
    """``message`` (params or a result, built in the newest shape) as ``revision`` defines it.

    Raises :class:`~mcptrio.protocol.errors.CapabilityNotNegotiated` for what it cannot carry.
    """
    step = outgoing_step(revision)
    return message if step is None else step(message)


def check_incoming(message: M, revision: Revision) -> M:
    """``message`` (params or a result, from the peer) as ``revision`` means it.

    Raises :class:`~mcptrio.protocol.errors.InvalidParams` for what it cannot mean.
    """
    step = incoming_step(revision)
    return message if step is None else step(message)


for _revision in REVISIONS:
    _make_step(_revision, "out")
    _make_step(_revision, "in")
