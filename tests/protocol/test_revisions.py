"""The revision table: one row per revision, features as the spec and its schemas say."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import msgspec
import pytest

from mcptrio.protocol import types as t
from mcptrio.protocol.errors import UnsupportedProtocolVersion
from mcptrio.protocol.fitting import MEMBERS, TYPES, fit_outgoing, members_of
from mcptrio.protocol.methods import METHODS
from mcptrio.protocol.revisions import (
    FEATURES,
    HANDSHAKE_SUPPORTED,
    LATEST,
    REVISIONS,
    STATELESS_SUPPORTED,
    SUPPORTED,
    Revision,
    accept_server_answer,
    choose_server_revision,
    revision_of,
)

from schema_validation import SCHEMA_DIR, definition_names

#: Where each feature first appeared (CHECKLIST sections 1 and 11), and where it went again.
FIRST_IN = {
    "batches": "2025-03-26",
    "audio": "2025-03-26",
    "tool_annotations": "2025-03-26",
    "progress_message": "2025-03-26",
    "completions_capability": "2025-03-26",
    "titles": "2025-06-18",
    "data_meta": "2025-06-18",
    "last_modified": "2025-06-18",
    "structured_output": "2025-06-18",
    "resource_links": "2025-06-18",
    "completion_context": "2025-06-18",
    "elicitation": "2025-06-18",
    "url_elicitation": "2025-11-25",
    "multi_select_elicitation": "2025-11-25",
    "tasks": "2025-11-25",
    "sampling_tools": "2025-11-25",
    "icons": "2025-11-25",
    "error_id_optional": "2025-11-25",
    "sse_polling": "2025-11-25",
    "elicitation_ids": "2025-11-25",
    "roots_list_changed": "2024-11-05",
    "result_type": "2026-07-28",
    "cache_hints": "2026-07-28",
    "input_required": "2026-07-28",
    "extensions": "2026-07-28",
}
GONE_IN = {
    "batches": "2025-06-18",
    "tasks": "2026-07-28",
    "sse_polling": "2026-07-28",
    "elicitation_ids": "2026-07-28",
    "roots_list_changed": "2026-07-28",
}
OLDEST_FIRST = tuple(reversed(SUPPORTED))


def has(feature: str, version: str) -> bool:
    position = OLDEST_FIRST.index
    gone = GONE_IN.get(feature)
    return position(FIRST_IN[feature]) <= position(version) and (
        gone is None or position(version) < position(gone)
    )


def test_the_table_lists_every_revision_newest_first() -> None:
    assert SUPPORTED == ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
    assert tuple(revision.version for revision in REVISIONS) == SUPPORTED
    assert SUPPORTED[0] == LATEST
    assert SUPPORTED[1:] == HANDSHAKE_SUPPORTED
    assert STATELESS_SUPPORTED == ("2026-07-28",)
    assert [revision.era for revision in REVISIONS] == ["stateless"] + ["handshake"] * 4


def test_every_revision_has_its_official_schema() -> None:
    for version in SUPPORTED:
        assert (SCHEMA_DIR / version / "schema.json").is_file()


def test_each_row_has_the_features_the_spec_gives_it() -> None:
    assert set(FIRST_IN) == FEATURES
    for revision in REVISIONS:
        for feature in FEATURES:
            assert getattr(revision, feature) is has(feature, revision.version), (
                revision,
                feature,
            )


def test_http_sse_fallback_narrowed_in_2025_11_25() -> None:
    assert revision_of("2025-11-25").http_sse_fallback_statuses == {400, 404, 405}
    for version in ("2025-06-18", "2025-03-26", "2024-11-05"):
        assert revision_of(version).http_sse_fallback_statuses == frozenset(range(400, 500))


def test_rows_are_found_by_version_and_compared_by_identity() -> None:
    for revision in REVISIONS:
        assert revision_of(revision.version) is revision
    copy = dataclasses.replace(REVISIONS[0])
    assert copy != REVISIONS[0]
    with pytest.raises(ValueError, match="Unknown protocol revision '2099-01-01'"):
        revision_of("2099-01-01")


def test_negotiation_echoes_a_spoken_revision_and_offers_the_latest_otherwise() -> None:
    assert choose_server_revision("2025-03-26") == "2025-03-26"
    assert choose_server_revision("2099-01-01") == HANDSHAKE_SUPPORTED[0]
    # A stateless-era revision is never negotiated by initialize.
    assert choose_server_revision("2026-07-28") == HANDSHAKE_SUPPORTED[0]
    assert choose_server_revision("2025-11-25", ("2025-06-18",)) == "2025-06-18"
    assert accept_server_answer("2025-06-18") == "2025-06-18"
    with pytest.raises(UnsupportedProtocolVersion):
        accept_server_answer("2024-10-07")
    with pytest.raises(UnsupportedProtocolVersion):
        accept_server_answer("2026-07-28")


def test_the_method_registry_follows_the_table() -> None:
    for revision in REVISIONS:
        defined = {name for name, spec in METHODS.items() if revision.version in spec.revisions}
        # 2026-07-28 embeds elicitation in input-required results: no request of its own.
        assert ("elicitation/create" in defined) is (
            revision.elicitation and revision.era == "handshake"
        )
        assert ("notifications/elicitation/complete" in defined) is revision.elicitation_ids
        assert ("server/discover" in defined) is (revision.era == "stateless")
        assert ("initialize" in defined) is (revision.era == "handshake")
        assert ("tasks/get" in defined) is revision.tasks
        assert METHODS["completion/complete"].gated_in(revision.version) is (
            revision.completions_capability
        )


# ------------------------------------------------------------------ the table and the schemas


def schema_defs(version: str) -> dict[str, Any]:
    root = json.loads((SCHEMA_DIR / version / "schema.json").read_text(encoding="utf-8"))
    defs: dict[str, Any] = root.get("$defs") or root["definitions"]
    return defs


def properties(defs: dict[str, Any], node: dict[str, Any]) -> set[str]:
    """The members an object schema allows, through ``$ref``, ``allOf`` and ``anyOf``."""
    if "$ref" in node:
        return properties(defs, defs[node["$ref"].rsplit("/", 1)[1]])
    found = set(node.get("properties", {}))
    for key in ("allOf", "anyOf", "oneOf"):
        for part in node.get(key, ()):
            found |= properties(defs, part)
    return found


#: Our structs whose schema type has another name.
SCHEMA_NAME = {t.ResourceContents: "TextResourceContents"}


def wire_structs() -> list[type]:
    """Every concrete wire struct the types package exports."""
    return [
        value
        for value in vars(t).values()
        if isinstance(value, type) and issubclass(value, t.WireStruct) and value.__doc__
    ]


def schema_members(version: str, cls: type) -> set[str] | None:
    """The members ``cls`` may have in ``version`` (``None``: no such type there)."""
    defs = schema_defs(version)
    name = SCHEMA_NAME.get(cls, cls.__name__)
    if name not in defs:
        return None
    node = defs[name]
    if issubclass(cls, t.Request | t.Notification):
        node = node["properties"].get("params", {})
    return properties(defs, node)


def wire_name(cls: Any, member: str) -> str:
    fields = {f.name: f.encode_name for f in msgspec.structs.fields(cls)}
    return fields[member]


@pytest.mark.parametrize("version", SUPPORTED)
def test_every_gated_member_is_in_the_schema_exactly_where_its_feature_is(version: str) -> None:
    revision = revision_of(version)
    checked = 0
    for cls in wire_structs():
        members = members_of(cls)
        allowed = schema_members(version, cls) if members else None
        if allowed is None:
            continue
        for member, feature in members.items():
            has_it = wire_name(cls, member) in allowed
            assert has_it is getattr(revision, feature), (version, cls.__name__, member)
            checked += 1
    assert checked > 20


@pytest.mark.parametrize("version", SUPPORTED)
def test_every_gated_type_is_in_the_schema_exactly_where_its_feature_is(version: str) -> None:
    revision = revision_of(version)
    names = definition_names(version)
    for cls, feature in TYPES.items():
        assert (cls.__name__ in names) is getattr(revision, feature), (version, cls)


def test_the_feature_names_of_the_fitting_tables_are_features() -> None:
    used = {feature for members in MEMBERS.values() for feature in members.values()}
    assert used | set(TYPES.values()) <= FEATURES


def test_a_new_row_needs_no_other_change_to_be_fitted() -> None:
    """A revision is a row: one without icons drops them with no code of its own."""
    row = dataclasses.replace(REVISIONS[0], version="2099-01-01", icons=False)
    tool = t.Tool(name="a", input_schema={"type": "object"}, icons=[t.Icon(src="https://x/i")])
    assert fit_outgoing(tool, row).icons is None
    assert isinstance(row, Revision)
