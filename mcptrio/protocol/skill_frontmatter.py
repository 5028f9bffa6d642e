"""The YAML frontmatter of a ``SKILL.md`` (SEP-2640), read the same way on both sides.

A server puts a skill's frontmatter in its entry as written; a client compares the frontmatter
of the ``SKILL.md`` it fetched with the entry's, field by field. Both use :func:`parse_frontmatter`
so that they agree on what "as written" means:

- the block is the text between a first line ``---`` (after an optional byte-order mark) and the
  next line ``---``;
- it is read with YAML's safe loader, except that a date stays the string the author wrote (a
  timestamp type would not render to JSON as written);
- it must be a mapping of plain JSON data with non-empty string ``name`` and ``description``.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import yaml

__all__ = ["FrontmatterError", "parse_frontmatter"]

_BLOCK = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class FrontmatterError(ValueError):
    """A ``SKILL.md`` without usable frontmatter (the message says what is wrong)."""


class _Loader(yaml.SafeLoader):  # type: ignore[misc]
    """YAML's safe loader without the timestamp type."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter at the start of ``text`` as a JSON-ready ``dict`` (module docstring);
    :class:`FrontmatterError` when there is none or it is not usable."""
    found = _BLOCK.match(text)
    if found is None:
        raise FrontmatterError("SKILL.md must begin with '---' delimited YAML frontmatter")
    try:
        data = yaml.load(found.group(1) or "", Loader=_Loader)  # a safe loader
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"the frontmatter is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise FrontmatterError("the frontmatter must be a YAML mapping")
    try:
        # Plain JSON data: a round trip through JSON gives it back unchanged.
        plain = msgspec.json.decode(msgspec.json.encode(data))
    except (TypeError, msgspec.EncodeError) as exc:
        raise FrontmatterError(f"the frontmatter is not plain JSON data: {exc}") from None
    if plain != data:
        raise FrontmatterError("the frontmatter does not render to JSON unchanged")
    for key in ("name", "description"):
        if not isinstance(plain.get(key), str) or not plain[key]:
            raise FrontmatterError(f"the frontmatter needs a non-empty string {key!r}")
    return plain  # type: ignore[no-any-return]
