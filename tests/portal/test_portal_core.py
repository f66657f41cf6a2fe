"""The portal's pure part: link states, the map's projection, a pool's chart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from halls.regulator import portal_core
from halls.regulator.portal_core import LinkState, chart, link_state, place, room_of

NOW = datetime(2026, 12, 6, 20, 0, tzinfo=UTC)


def test_an_installation_is_live_within_its_window_silent_past_it_and_never_heard_without_a_message() -> None:
    assert link_state(None, now=NOW, window_seconds=60) == LinkState.NEVER
    assert link_state(NOW - timedelta(seconds=60), now=NOW, window_seconds=60) == LinkState.LIVE
    assert link_state(NOW - timedelta(seconds=61), now=NOW, window_seconds=60) == LinkState.SILENT


def test_the_map_places_the_peninsula_ceuta_melilla_and_the_canaries_in_their_inset() -> None:
    madrid = place(Decimal("40.4168"), Decimal("-3.7038"))
    melilla = place(Decimal("35.2923"), Decimal("-2.9381"))
    las_palmas = place(Decimal("28.1235"), Decimal("-15.4363"))
    assert madrid is not None and melilla is not None and las_palmas is not None
    # Madrid: 6.2962 of the 15 degrees from the west edge, 3.7832 of the 9.2 from the top (to the tenth).
    assert madrid == (Decimal("482.7"), Decimal("378.3"))
    assert melilla[1] > madrid[1] and melilla[0] > madrid[0]  # south and east of Madrid
    inset = portal_core.CANARIES
    assert inset.left <= las_palmas[0] <= inset.left + inset.width
    assert inset.top <= las_palmas[1] <= inset.top + inset.height
    assert place(Decimal("48.85"), Decimal("2.35")) is None  # Paris: off the map
    assert place(None, Decimal("1")) is None


def test_a_pool_chart_runs_from_its_first_report_to_its_last_and_from_zero_to_its_largest_amount() -> None:
    series = {
        "1": [(NOW, Decimal("100.00")), (NOW + timedelta(minutes=10), Decimal("150.00"))],
        "2": [(NOW + timedelta(minutes=5), Decimal("50.00"))],
    }
    drawn = chart(series, width=Decimal(100), height=Decimal(50))
    assert drawn.top == Decimal("150.00")
    assert drawn.first == NOW and drawn.last == NOW + timedelta(minutes=10)
    assert drawn.lines["1"] == "0.0,16.7 100.0,0.0"
    assert drawn.lines["2"] == "50.0,33.3"
    assert chart({}).lines == {}


@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=10**6),
            st.decimals(min_value=0, max_value=10**7, places=2, allow_nan=False, allow_infinity=False),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_every_point_of_a_chart_lies_in_its_box_and_the_largest_amount_touches_its_top(
    points: list[tuple[int, Decimal]],
) -> None:
    series = {"1": [(NOW + timedelta(seconds=s), amount) for s, amount in points]}
    drawn = chart(series, width=Decimal(720), height=Decimal(240))
    placed = [tuple(Decimal(v) for v in p.split(",")) for p in drawn.lines["1"].split(" ")]
    assert len(placed) == len(points)
    assert all(Decimal(0) <= x <= Decimal(720) and Decimal(0) <= y <= Decimal(240) for x, y in placed)
    xs = [x for x, _ in placed]
    assert xs == sorted(xs)  # left to right in time
    if drawn.top > 0:
        assert min(y for _, y in placed) == Decimal("0.0")


def test_a_game_names_its_draw_room_first() -> None:
    assert room_of("electronic-40") == "electronic"
    assert room_of("simultaneous-SB-7") == "simultaneous"
    assert room_of("traditional-12") == "traditional"
