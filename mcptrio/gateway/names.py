"""Keeping the names upstreams expose apart: two upstreams whose tool or prompt names could meet
are refused when added (:meth:`.Gateway.add_upstream`) or when a configuration file is read.

A name met twice is served by the upstream that listed it first, and calls meant for the other,
arguments and all, go there; an upstream chooses its own tool names, so it could choose them to
capture another's calls. See "The gateway: no tool shadowing through the namespace separator" in
``docs/explanation/hostile-peers.md`` for why these are refused rather than the separator encoded.
"""

from __future__ import annotations

from .upstream import Upstream

__all__ = ["check_apart"]


def check_apart(earlier: Upstream, later: Upstream) -> None:
    """Raise ``ValueError`` (one line naming both) when a tool or prompt name ``later`` exposes
    could be one ``earlier`` exposes: whichever upstream listed it first would serve it, and calls
    meant for the other, arguments and all, would go there.

    ``<namespace>_<name>`` names of two upstreams can only meet when one namespace followed by the
    separator begins the other (``a`` with tool ``b_c``, ``a_b`` with tool ``c``), or when the
    namespaces are the same; a rename can meet anything in the other's namespace, or the other's
    rename.
    """
    if earlier.prefix == later.prefix:
        raise ValueError(
            f"Upstreams {earlier.name!r} and {later.name!r} have the same namespace"
            f" {later.prefix!r}; give one of them another namespace"
        )
    for short, long in ((earlier, later), (later, earlier)):
        if long.prefix.startswith(f"{short.prefix}_"):
            rest = long.prefix[len(short.prefix) + 1 :]
            raise ValueError(
                f"Upstreams {short.name!r} and {long.name!r}: the namespace {long.prefix!r} begins"
                f" with {short.prefix + '_'!r}, so a tool '{rest}_c' of {short.name!r} and a tool"
                f" 'c' of {long.name!r} would both be '{long.prefix}_c'; give one of them a"
                " namespace that does not begin the other's"
            )
    for renaming, other in ((earlier, later), (later, earlier)):
        for original, renamed in renaming.rename.items():
            if renamed.startswith(f"{other.prefix}_"):
                raise ValueError(
                    f"Upstream {renaming.name!r} renames {original!r} to {renamed!r}, a name in"
                    f" the namespace {other.prefix!r} of upstream {other.name!r}"
                )
    both = set(earlier.rename.values()) & set(later.rename.values())
    if both:
        raise ValueError(
            f"Upstreams {earlier.name!r} and {later.name!r} both rename a tool to {min(both)!r}"
        )
