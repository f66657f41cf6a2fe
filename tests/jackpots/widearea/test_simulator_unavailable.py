"""The machine simulator hears a wide-area level withdrawn (the broadcast's "unavailable": jackpots.widearea)
and never shows nor hits it; it plays on its local levels."""

from __future__ import annotations

from tests.machines.test_simulator import LEVELS, Harness


def test_a_withdrawn_wide_area_level_is_neither_shown_nor_hit() -> None:
    h = Harness("C", hit_probability=1.0)
    h.broadcasting = False
    h.receive({"type": "progressive", "group": "G", "levels": [LEVELS[1]], "unavailable": ["Mayor"], "at": 0})
    assert set(h.brain.levels) == {"Mini"}
    for _ in range(20):
        h.receive(
            {"type": "progressive", "group": "G", "levels": [LEVELS[1]], "unavailable": ["Mayor"], "at": 0}
        )
        h.run(0.4)
    hits = h.of_type("hit")
    assert hits and all(m["level"] == "Mini" for _, m in hits)
