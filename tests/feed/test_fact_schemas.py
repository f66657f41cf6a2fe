"""The facts' JSON Schemas (halls/feed/schemas/v1/<kind>.json) as the contract says: one per kind, every
field required and nothing else allowed, money as a string of euros and cents, never a player's field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from halls.feed import schema
from halls.feed.kinds import FeedKind

# Written by the other parts of issue 29 (the anchors, the tax returns), not by the facts of play.
ELSEWHERE = {FeedKind.ANCHOR, FeedKind.TAX_RETURN}
FACTS = [k for k in FeedKind if k not in ELSEWHERE]
MONEY = "^-?[0-9]+\\.[0-9]{2}$"
PERSONAL = {"name_of_player", "player", "document", "holder", "birth_date", "card_holder", "surname"}


def document(kind: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((schema.FOLDER / f"{kind}.json").read_text(encoding="utf-8"))
    return loaded


def fields(node: Any) -> set[str]:
    """Every property name anywhere in a schema."""
    if isinstance(node, dict):
        found = set(node.get("properties", {})) if isinstance(node.get("properties"), dict) else set()
        return found | {f for value in node.values() for f in fields(value)}
    if isinstance(node, list):
        return {f for value in node for f in fields(value)}
    return set()


@pytest.mark.parametrize("kind", [k.value for k in FACTS])
def test_each_fact_has_its_schema_every_field_required_and_no_other(kind: str) -> None:
    doc = document(kind)
    assert schema.has_schema(kind)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["additionalProperties"] is False
    assert sorted(doc["required"]) == sorted(doc["properties"])
    assert not fields(doc) & PERSONAL


@pytest.mark.parametrize(
    ("kind", "field"),
    [
        ("session.closed", "sales"),
        ("session.closed", "prizes"),
        ("game.sales", "sales"),
        ("game.prize", "amount"),
        ("pool.award", "amount"),
        ("pool.award", "before"),
        ("pool.award", "after"),
        ("cashier.day", "payouts"),
    ],
)
def test_money_is_a_string_of_euros_and_cents(kind: str, field: str) -> None:
    money = document(kind)["properties"][field]
    assert money["pattern"] == MONEY
    check = Draft202012Validator(money)
    assert check.is_valid("12.50") and check.is_valid("-0.01") and check.is_valid("100000.00")
    for bad in ("12.5", 12.5, "12,50", "1e3", None):
        assert not check.is_valid(bad), bad


def test_a_field_the_contract_does_not_know_is_refused() -> None:
    ball = {"venue": "ML-B-0001", "room": "Sala 1", "game": "traditional-12", "ordinal": 1, "number": 7}
    schema.validate_payload("game.ball", ball)
    with pytest.raises(schema.SchemaError) as refused:
        schema.validate_payload("game.ball", {**ball, "player": "Lucía"})
    assert "player" in str(refused.value)
    with pytest.raises(schema.SchemaError):
        schema.validate_payload("game.ball", {**ball, "number": 91})
    with pytest.raises(schema.SchemaError):
        schema.validate_payload("game.ball", {**ball, "game": "12"})
