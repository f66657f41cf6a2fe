"""The pure rules of a simultaneous game (no Django): allocation runs and first-ordinal winners."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bingo.network.simultaneous import rules

halls = st.lists(
    st.tuples(st.text("ABCDEFGH0123456789-", min_size=1, max_size=8), st.integers(1, 50)),
    min_size=1,
    max_size=40,
    unique_by=lambda pair: pair[0],
)


# No deadline: a loaded machine (the suite in parallel, a benchmark) must not fail a pure property.
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(halls)
def test_the_runs_are_disjoint_whole_strips_covering_the_series(strips: list[tuple[str, int]]) -> None:
    runs = rules.allocate(strips)
    assert [r.hall for r in runs] == [hall for hall, _ in strips]
    serials = [s for r in runs for s in range(r.first, r.last + 1)]
    # Every serial of the series once: no two halls hold one card, none is left out.
    assert serials == list(range(1, 6 * sum(n for _, n in strips) + 1))
    for run, (_hall, count) in zip(runs, strips, strict=True):
        assert run.cards == 6 * count
        assert (run.first - 1) % 6 == 0  # a run starts a strip
        assert run.holds(run.first, run.last) and not run.holds(run.first, run.last + 1)


def test_a_hall_twice_or_with_no_strip_is_refused() -> None:
    for bad in ([("A", 1), ("A", 2)], [("A", 0)]):
        try:
            rules.allocate(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad} was allocated")


candidates = st.lists(
    st.builds(
        rules.Candidate, st.sampled_from(["H1", "H2", "H3"]), st.integers(1, 10_000), st.integers(1, 90)
    ),
    max_size=30,
    unique_by=lambda c: (c.hall, c.claim),
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(candidates)
def test_the_first_ordinal_wins_and_every_claim_at_it_shares(found: list[rules.Candidate]) -> None:
    winners = rules.first_ordinal(found)
    if not found:
        assert winners == []
        return
    lowest = min(c.ordinal for c in found)
    assert sorted(winners, key=lambda c: (c.hall, c.claim)) == winners
    assert set(winners) == {c for c in found if c.ordinal == lowest}
    by_hall = rules.hall_winners(found)
    assert set(by_hall) == {c.hall for c in found}
    for hall, chosen in by_hall.items():
        own = [c for c in found if c.hall == hall]
        assert chosen and {c.ordinal for c in chosen} == {min(c.ordinal for c in own)}
        # The network's winners in a hall are that hall's winners too (a card can win both).
        assert {c for c in winners if c.hall == hall} <= set(chosen) or not any(
            c.hall == hall for c in winners
        )
