"""The simulated terminal acknowledges a reality check as a player does: a purchase refused
reality_check_due (the frame's error or the HTTP door's body) is followed by the acknowledgement of that
check, once at a time; the next game is bought as before."""

from __future__ import annotations

import pytest

from bingo.electronic.simulator import PATHS, Report
from tests.bingo.electronic.test_simulator_brain import brain, purchase_of, snapshot, start


@pytest.mark.parametrize("wrapped", [False, True])
def test_a_reality_check_due_is_acknowledged(wrapped: bool) -> None:
    b = brain(buy_spread=0.0)
    call = purchase_of(start(b, snapshot()) + b.tick(1.0))
    error = {"code": "reality_check_due", "message": "…", "details": {"check": 2}}
    calls = b.on_answer(call, 409, {"error": error} if wrapped else error, 1.1)
    (ack,) = [c for c in calls if c.kind == "reality"]
    assert (ack.path, ack.body) == (PATHS["reality"], {"card": "1234567890123452", "check": 2})
    assert b.stats.reality_checks == 1 and sum(b.stats.refused_codes.values()) == 1
    assert [c.kind for c in b.on_answer(ack, 201, {"check": 2, "due": None}, 1.2)] == []
    assert "reality" not in b.in_flight
    report = Report.from_brains([b], seconds=1.0)
    assert report.counters["reality_checks"] == 1


def test_another_refusal_sends_no_acknowledgement() -> None:
    b = brain(buy_spread=0.0)
    call = purchase_of(start(b, snapshot()) + b.tick(1.0))
    calls = b.on_answer(call, 409, {"code": "limit_reached", "details": {"left": "0.00"}}, 1.1)
    assert [c.kind for c in calls] == [] and b.stats.reality_checks == 0
