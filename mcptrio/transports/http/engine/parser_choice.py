"""Which HTTP/1.1 parser the server and the client use: httptools when installed, h11 otherwise.

Both sides take the same ``parser`` setting (:data:`ParserName`): ``"auto"`` parses with
httptools (llhttp, in C) when it can be imported and with h11 (pure Python, always installed)
otherwise, as uvicorn does; ``"httptools"`` insists on it (an ``ImportError`` where it is
missing); ``"h11"`` forces the fallback. Either parser sits behind the same interface and keeps
the same bounds, so the choice changes the cost, never the answers.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["ParserName", "httptools_chosen"]

ParserName = Literal["auto", "h11", "httptools"]


def httptools_chosen(parser: ParserName) -> bool:
    """Whether ``parser`` means httptools here (see the module docstring).

    Raises ``ImportError`` for ``"httptools"`` where httptools cannot be imported, and
    ``ValueError`` for a name that is none of the three.
    """
    if parser == "h11":
        return False
    if parser not in ("auto", "httptools"):
        raise ValueError(f"unknown parser {parser!r}: use 'auto', 'h11' or 'httptools'")
    try:
        import httptools  # noqa: F401
    except ImportError:
        if parser == "httptools":
            raise
        return False
    return True
