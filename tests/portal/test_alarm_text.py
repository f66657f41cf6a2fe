"""What each alarm says on the portal, from its detail (the intake's, the silence sweep's, the derived ones,
verify now's), in the page's language."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone, translation

from halls.regulator.models import Alarm, AlarmKind
from halls.regulator.services.portal import alarm_text


def said(kind: str, detail: dict[str, Any], language: str = "en") -> str:
    alarm = Alarm(kind=kind, detail=detail, raised_at=timezone.now())
    with translation.override(language):
        return alarm_text(alarm)


@pytest.mark.parametrize(
    ("kind", "detail", "text"),
    [
        (AlarmKind.GAP, {"sequence": 9, "reason": "gap", "expected": 7},
         "Message 9 arrived out of order: the node expected 7."),
        (AlarmKind.BAD_SIGNATURE, {"sequence": 3, "reason": "bad_signature"},
         "Message 3: its signature does not hold."),
        (AlarmKind.BAD_SIGNATURE, {"sequence": 1, "reason": "unknown", "claimed": "ffff"},
         "Message 1: its signature does not hold. It claimed to be installation ffff."),
        ("unknown", {"sequence": 2, "reason": "unknown_installation", "claimed": "ffff"},
         "Message 2 from an installation this node does not know (ffff)."),
        (AlarmKind.REPLAYED, {"sequence": 4, "reason": "replayed"},
         "Message 4 was sent again with another content."),
        (AlarmKind.SCHEMA, {"sequence": 5, "reason": "schema", "where": "$.payload.amount"},
         "Message 5 is outside its schema ($.payload.amount)."),
        (AlarmKind.PRIZE_ABOVE_POOL,
         {"venue": "ML-B-0001", "pool": "BOLSA", "level": 2, "amount": "45.50", "reported": "40.00",
          "where": "ML-B-0001", "sequence": 8, "message": "pool.award"},
         "Pool BOLSA (ML-B-0001): level 2 awarded 45.50, above the 40.00 last reported (message 8)."),
        (AlarmKind.ANCHOR,
         {"problems": [{"code": "signature", "message": 4, "line": 2, "values": {}}], "count": 3},
         "Message 4, line 2: Its signature does not match: forged or edited. And 2 more."),
    ],
)  # fmt: skip
def test_each_alarm_says_what_happened(kind: str, detail: dict[str, Any], text: str) -> None:
    assert said(kind, detail) == text


def test_a_silent_installation_says_since_when_and_its_window() -> None:
    detail = {
        "sequence": None,
        "last_heard": "2026-12-06T19:00:00+00:00",
        "window_seconds": 120,
        "accepted": 4,
    }
    assert said(AlarmKind.SILENT, detail).endswith("(its window: 120 s).")
    assert said(AlarmKind.SILENT, detail).startswith("Not heard from since ")


def test_alarms_speak_spanish() -> None:
    text = said(AlarmKind.GAP, {"sequence": 9, "expected": 7}, "es")
    assert text == "El mensaje 9 llegó fuera de orden: el nodo esperaba el 7."
