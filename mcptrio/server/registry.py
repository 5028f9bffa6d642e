"""What a server has registered, and the decorators that register it.

Tools, prompts, resources and templates share :class:`DescriptionOptions` (the options every
kind has, declared once) and :class:`Registered` (what those options become). A
:class:`Registry` keeps one kind of thing (tools, prompts, resources, resource templates) by
its key, in registration order. It is a read-only mapping to everyone but its owner, who adds
and removes through it; ``on_change`` runs after each change so the server can send
``notifications/<kind>/list_changed``.

:func:`decorator` gives every ``@server.<kind>`` decorator the same two forms: bare
(``@server.tool``) and with options (``@server.tool(title=...)``).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypedDict, TypeVar, overload

from ..protocol.errors import InvalidParams
from ..protocol.types import Icon
from .handler import Handler, docstring

__all__ = ["DescriptionOptions", "Registered", "Registry", "decorator", "with_first"]

T = TypeVar("T")
D_co = TypeVar("D_co", covariant=True)
D = TypeVar("D")
F = TypeVar("F", bound=Callable[..., Any])


class DescriptionOptions(TypedDict, total=False):
    """The options every kind of registered thing has (each kind's options extend these).

    Every one may be left out (or ``None``) for its default.
    """

    #: The name; defaults to the function's.
    name: str | None
    #: A human-readable title (sent from 2025-06-18).
    title: str | None
    #: What it is for; defaults to the function's cleaned docstring.
    description: str | None
    #: Icons for clients to show (sent from 2025-11-25).
    icons: Sequence[Icon] | None
    #: Its ``_meta`` (sent from 2025-06-18).
    meta: Mapping[str, Any] | None
    #: OAuth scopes a caller's token must carry to use it (over HTTP with an authenticator:
    #: a call without them is answered 403 ``insufficient_scope``; see
    #: ``docs/how-to/protect-your-server.md``). Not enforced where there is no principal.
    scopes: Iterable[str] | None
    #: Whether a plain ``def`` function (or generator) may block. ``True``, the default: it
    #: runs in a worker thread, so the server keeps answering while it runs. ``False``: its
    #: author knows it returns at once without waiting on anything (no I/O, no lock, no long
    #: computation), and it runs in the request's task, without the thread hop. No effect on an
    #: ``async def`` function, which always runs in the request's task.
    blocking: bool | None


class Registered(abc.ABC, Generic[D_co]):
    """What :class:`DescriptionOptions` become: the descriptive fields of a registered thing,
    its function as read at registration (``handler``; ``None`` for static contents), and its
    definition (a ``Tool``, ``Prompt``...) in the newest shape, made once: the session's
    connection fits it to the negotiated revision.

    The function's docstring is the description's default; an empty description is none.
    """

    __slots__ = (
        "_definition",
        "description",
        "handler",
        "icons",
        "meta",
        "name",
        "scopes",
        "title",
    )

    def __init__(self, name: str, handler: Handler | None, options: DescriptionOptions) -> None:
        self.name = name
        self.handler = handler
        if handler is not None and options.get("blocking") is False:
            handler.inline = True
        self.title = options.get("title")
        description = options.get("description")
        if description is None and handler is not None:
            description = docstring(handler.fn)
        self.description = description or None
        icons = options.get("icons")
        self.icons: list[Icon] | None = None if icons is None else list(icons)
        meta = options.get("meta")
        self.meta: dict[str, Any] | None = None if meta is None else dict(meta)
        scopes = options.get("scopes")
        if isinstance(scopes, str):
            raise TypeError(f"scopes must be a list of scope names, not the string {scopes!r}")
        #: The scopes a caller's token must carry (empty: none).
        self.scopes: frozenset[str] = frozenset(scopes or ())
        self._definition: D_co | None = None

    @property
    def fn(self) -> Callable[..., Any] | None:
        """The function (``None`` for static contents)."""
        return None if self.handler is None else self.handler.fn

    @property
    def definition(self) -> D_co:
        """The definition for ``*/list``, in the newest shape."""
        definition = self._definition
        if definition is None:
            definition = self._definition = self._describe()
        return definition

    @abc.abstractmethod
    def _describe(self) -> D_co:
        """The definition (called once)."""


class Registry(Mapping[str, T], Generic[T]):
    """Registered things of one kind by key, in registration order (a live, read-only view).

    ``what`` describes a key in messages (``"A tool named {key!r}"``), ``unknown`` what
    :meth:`require` says of a key that names nothing (``"Unknown tool: {key}"``).
    """

    __slots__ = ("_items", "_on_change", "_unknown", "_what")

    def __init__(
        self,
        what: str,
        unknown: str = "Unknown: {key!r}",
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self._items: dict[str, T] = {}
        self._what = what
        self._unknown = unknown
        self._on_change = on_change

    def __getitem__(self, key: str) -> T:
        return self._items[key]

    @overload
    def get(self, key: str, /) -> T | None: ...
    @overload
    def get(self, key: str, /, default: T | D) -> T | D: ...
    def get(self, key: str, /, default: Any = None) -> Any:
        # The dict's own get, not Mapping's try/except: a miss raises nothing.
        return self._items.get(key, default)

    def require(self, key: str) -> T:
        """What ``key`` names, or ``InvalidParams`` (-32602) for a client that named nothing."""
        item = self._items.get(key)
        if item is None:
            raise InvalidParams(self._unknown.format(key=key))
        return item

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __repr__(self) -> str:
        return f"<Registry {list(self._items)!r}>"

    def add(self, key: str, item: T) -> T:
        """Register ``item`` under ``key``; ``ValueError`` if that key is taken."""
        if key in self._items:
            raise ValueError(f"{self._what.format(key=key)} is already registered")
        self._items[key] = item
        self._changed()
        return item

    def remove(self, key: str) -> bool:
        """Unregister what ``key`` names; whether there was anything."""
        if self._items.pop(key, None) is None:
            return False
        self._changed()
        return True

    def snapshot(self) -> list[T]:
        """The registered things, in order, as a list (unaffected by later changes)."""
        return list(self._items.values())

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()


def decorator(register: Callable[..., object], fn: F | None, options: Mapping[str, Any]) -> Any:
    """The body of a ``@server.<kind>`` decorator, bare or with options.

    Used bare, the decorator receives the function itself (``fn``): it is registered at once.
    Called with options, it receives none, and returns the decorator that registers. Either way
    the function is returned unchanged, so it can still be called, or decorated again.
    """
    if fn is not None:
        register(fn, **options)
        return fn

    def decorate(fn: F) -> F:
        register(fn, **options)
        return fn

    return decorate


def with_first(key: str, value: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with a decorator's positional ``value`` as ``key`` (``@server.tool("add")``
    names the tool): ``TypeError`` if ``key`` is given as an option too."""
    if options.get(key) is not None:
        raise TypeError(f"The {key} is given twice: {value!r} and {options[key]!r}")
    return {**options, key: value}
