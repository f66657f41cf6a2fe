"""Every event type has a declared payload, every emitter names its type from the enum, and the check
that `events.emit` runs on each payload (tests/conftest.py makes a mismatch fail the run) is exact."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import get_args, is_typeddict

import pytest

from halls.eventtypes import PAYLOADS, EventSchemaError, EventType, check

ROOT = Path(__file__).resolve().parents[2]
# The code that emits (the tests may compare with the strings screens receive).
SOURCES = ("bingo", "halls", "jackpots", "machines", "demo", "config", "bench")
# The event types' one list, and the feed's kinds (another vocabulary: what the authority's node is told,
# halls.feed.kinds; "session.opened" names a fact there, an event here).
ONE_LISTS = (ROOT / "halls" / "eventtypes.py", ROOT / "halls" / "feed" / "kinds.py")


def test_every_event_type_has_a_typed_payload() -> None:
    assert set(PAYLOADS) == set(EventType)
    for type, payload in PAYLOADS.items():
        declared = get_args(payload) or (payload,)  # POOL_HIT: the pool stream's, and the rooms' wording
        assert all(is_typeddict(t) for t in declared), type


def test_no_emitter_spells_an_event_type_as_a_free_string() -> None:
    names = {t.value for t in EventType}
    found = []
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            if path in ONE_LISTS or "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Constant) and node.value in names:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert found == []


def step(**more: object) -> dict[str, object]:
    return {"game": 1, "number": 2, "state": "drawing", **more}


def test_a_payload_of_its_type_passes() -> None:
    check(EventType.GAME_RESUMED, step())
    check(EventType.GAME_PAUSED, step(by_claim=True))
    at = datetime(2026, 11, 26, 20, tzinfo=UTC)
    drawn = step(ordinal=1, ball=7, colour="", source="rng", drawn_at=at)
    check(EventType.BALL_DRAWN, drawn)
    # Optional keys may be left out; a union (POOL_HIT) takes either of its payloads.
    check(EventType.HAND_BETS_REGISTERED, {"table": 1, "table_number": 3, "hand": 4, "number": 1})
    shown = {
        "pool": 1, "name": "Carrusel", "currency": "EUR", "settlement": 2, "order": 0, "level": 3,
        "level_name": "Royal", "kind": "hand", "source": "Mesa 1", "source_kind": "table", "machine": "",
        "seat": "3", "hand": "40", "category": "royal_flush", "category_label": "Escalera real",
        "amount": "100.00", "new_amount": "50.00", "at": at.isoformat(), "meter": None,
    }  # fmt: skip
    check(EventType.POOL_HIT, shown)


@pytest.mark.parametrize(
    ("type", "data", "said"),
    [
        (EventType.GAME_PAUSED, step(), "lacks ['by_claim']"),
        (EventType.GAME_RESUMED, step(reason="internal"), "has extra ['reason']"),
        (EventType.GAME_PAUSED, step(by_claim="yes"), "data.by_claim is a str"),
        (EventType.SESSION_CLOSED, {"session": True}, "data.session is a bool, not an int"),
        (
            EventType.PRIZE_AWARDED,
            step(kind="line", ordinal=5, amount=Decimal(10), share=Decimal(10), remainder=Decimal(0))
            | {"remainder_to": "house", "winners": [{"series": "A", "serial": "12", "amount": Decimal(10)}]},
            "data.winners[0].serial is a str",
        ),
        (
            EventType.POOL_MEMBERS_CHANGED,
            {"pool": 1, "code": "P", "member": "m", "venue": 1, "change": "x"},
            "x",
        ),
    ],
)
def test_a_payload_off_its_type_is_refused(type: EventType, data: dict[str, object], said: str) -> None:
    with pytest.raises(EventSchemaError, match=said.replace("[", r"\[").replace("]", r"\]")):
        check(type, data)


def test_the_type_must_be_a_member_of_the_enum() -> None:
    with pytest.raises(EventSchemaError):
        check("game.resumed", step())  # type: ignore[arg-type]
