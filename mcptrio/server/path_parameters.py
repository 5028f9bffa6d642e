"""Parameter types for values that name a file: a URI template variable is percent-decoded
before it reaches a handler, so ``files:///{+path}`` read as ``files:///..%2F..%2Fetc%2Fpasswd``
gives ``path == "../../etc/passwd"``, and ``{name}`` (which never spans a ``/`` in the URI)
gives ``"../secret"`` for ``..%2Fsecret``. Annotate such a parameter with one of these::

    @server.resource("files:///{+path}")
    def read(path: RelativePath) -> bytes:
        return (ROOT / path).read_bytes()     # path cannot climb out of ROOT

    @server.resource("notes://{name}")
    def note(name: PathSegment) -> str:
        return (NOTES / f"{name}.md").read_text()

A value that does not fit is refused before the function is called, with ``InvalidParams``
(-32602) naming the parameter and what it must be; nothing is normalised or silently cut.
Both are ``str`` at run time, and plain ``Annotated[str, msgspec.Meta(pattern=...)]`` types, so
they check tool arguments and prompt arguments the same way, and a tool's input schema carries
their pattern and description.

What both refuse: the empty string, control characters (NUL, newline...), a backslash (a
separator on Windows), a leading Windows drive (``C:``), ``..``. :data:`RelativePath` allows
``/`` between segments but refuses a leading one (an absolute path) and a ``..`` segment
anywhere; :data:`PathSegment` refuses ``/`` and is never ``.`` or ``..``. Symbolic links inside
your folder are yours to judge: these types check the name, not the disk.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

__all__ = ["PathSegment", "RelativePath"]

# Written for both Python's ``re.search`` (how msgspec checks) and ECMA-262 (how a client checks
# a tool's input schema): ``[\s\S]`` for "any character", and control characters refused by a
# lookahead, so that ``$`` (which Python also matches before a final newline) cannot be used
# to pass one.
_NOTHING_HOSTILE = r"(?![\s\S]*[\x00-\x1f\x7f\\])(?![A-Za-z]:)"

RelativePath = Annotated[
    str,
    msgspec.Meta(
        pattern=rf"^{_NOTHING_HOSTILE}(?!/)(?![\s\S]*(?:^|/)\.\.(?:/|$))[\s\S]+$",
        description=(
            "a relative path inside its folder: '/'-separated names, none of them '..',"
            " no leading '/' or drive, no backslash or control character"
        ),
    ),
]
"""A relative path that stays below the folder it is joined to: ``/`` between names, none of
them ``..``; no leading ``/`` or drive, no backslash or control character. ``InvalidParams``
(-32602) for any other value (see :mod:`mcptrio.server.path_parameters`)."""

PathSegment = Annotated[
    str,
    msgspec.Meta(
        pattern=rf"^{_NOTHING_HOSTILE}(?![\s\S]*/)(?!\.\.?$)[\s\S]+$",
        description=(
            "a single file name: not '.' or '..', no '/', backslash, drive or control character"
        ),
    ),
]
"""One file or folder name: no ``/``, backslash, drive or control character, never ``.`` or
``..``. ``InvalidParams`` (-32602) for any other value (see
:mod:`mcptrio.server.path_parameters`)."""
