"""The base classes every MCP wire type derives from.

Three kinds of typed message body exist on the wire, and each has a base here:

- :class:`Request` is the ``params`` of a request. The class knows its JSON-RPC ``METHOD`` and the
  :class:`Result` type its response decodes into (``RESULT``), so a caller never passes a
  ``result_type=`` argument: ``await session.request(CallToolRequest(name="add"))`` returns a
  ``CallToolResult``. A subclass sets ``METHOD``; ``RESULT`` is read from its generic
  parameter (``class CallToolRequest(Request[CallToolResult])``).
- :class:`Notification` is the ``params`` of a notification, with its ``METHOD``.
- :class:`Result` is the ``result`` of a successful response.

Every struct uses camelCase on the wire, leaves out fields that are at their default
(``omit_defaults``), and tolerates unknown fields when decoding, as the spec asks of receivers.
An optional member defaults to ``None``: absent on the wire is ``None`` in Python, and ``None``
is left out when encoding, so a result reads (and prints) as plain Python, never as a sentinel.
A ``null`` the peer sends for an optional member decodes as ``None`` too (no MCP member
distinguishes ``null`` from absent except ``Task.ttl``, which is required and nullable). The
JSON-RPC envelope (:mod:`.codec`), where an ``id`` of ``null`` differs from none, keeps
``msgspec.UNSET`` internally.
The ``_meta`` member (:class:`HasMeta`) is spelled out explicitly because ``rename="camel"`` would
not produce it.
msgspec applies ``kw_only`` only to the fields a class declares itself, so every subclass that
adds a required field repeats ``kw_only=True``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeAlias, TypeVar, get_args

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "UNSET",
    "EmptyResult",
    "HasMeta",
    "Meta",
    "Notification",
    "ProgressToken",
    "Request",
    "RequestId",
    "Result",
    "UnsetType",
    "WireStruct",
    "meta_field",
]

#: A JSON-RPC request id. MCP forbids ``null``.
RequestId: TypeAlias = int | str
#: A progress token, chosen by the sender of a request.
ProgressToken: TypeAlias = int | str
#: The free-form ``_meta`` object that most MCP types carry.
Meta: TypeAlias = dict[str, Any]


def meta_field() -> Any:
    """A ``_meta`` member, absent unless set."""
    return msgspec.field(default=None, name="_meta")


class WireStruct(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """Base of every MCP wire struct: camelCase names, absent fields left out."""


class HasMeta(WireStruct):
    """A struct with the free-form ``_meta`` member."""

    meta: Meta | None = meta_field()


ResultT = TypeVar("ResultT", bound="Result")


class Result(HasMeta):
    """The ``result`` member of a successful response.

    ``resultType`` (2026-07-28) tells a complete result from an input-required one; absent
    means complete.
    """

    result_type: str | None = None


class EmptyResult(Result):
    """A result with no content, such as the answer to ``ping``."""


class Request(HasMeta, Generic[ResultT]):
    """The ``params`` of a request; subclasses set ``METHOD`` (``RESULT`` follows from the
    generic parameter)."""

    METHOD: ClassVar[str]
    RESULT: ClassVar[type[Result]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in cls.__dict__.get("__orig_bases__", ()):
            for arg in get_args(base):
                if isinstance(arg, type) and issubclass(arg, Result):
                    cls.RESULT = arg

    def progress_token(self) -> ProgressToken | None:
        """The ``_meta.progressToken`` the requester asked progress for, if any."""
        if isinstance(self.meta, dict):
            token = self.meta.get("progressToken")
            if isinstance(token, int | str) and not isinstance(token, bool):
                return token
        return None


class Notification(HasMeta):
    """The ``params`` of a notification; subclasses set ``METHOD``."""

    METHOD: ClassVar[str]
