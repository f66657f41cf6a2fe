"""The wide-area pools' pure core (jackpots.widearea.core), by hypothesis: batches add up exactly whatever
their cut, sums survive the link's payload, the link-failure policy and the simultaneous-hit rule."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from halls import money
from jackpots.widearea import core

LEVELS = ("Grand", "Major")
rates = st.decimals(min_value=Decimal("0"), max_value=Decimal("0.5"), places=6)
bets = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("500"), places=2)


@st.composite
def rows(draw: st.DrawFn) -> list[core.Row]:
    rate, reserve = draw(rates), draw(rates)
    out = []
    for bet in draw(st.lists(bets, max_size=40)):
        split = money.split_contribution(bet, rate, reserve)
        out.append((draw(st.sampled_from(LEVELS)), bet, split.to_meter, split.to_reserve, split.house))
    return out


@given(rows(), st.integers(min_value=0, max_value=40))
def test_batches_add_up_exactly_however_cut(found: list[core.Row], cut: int) -> None:
    whole = core.add_up(found)
    parts = core.merge(core.add_up(found[:cut]), core.add_up(found[cut:]))
    assert core.differences(whole, parts) == []
    for name, sums in whole.items():
        assert sums.to_meter + sums.to_reserve + sums.house == sums.bet  # every split's remainder kept
        assert sums.bet == sum((r[1] for r in found if r[0] == name), Decimal(0))


@given(rows())
def test_sums_survive_the_payload(found: list[core.Row]) -> None:
    sums = core.add_up(found)
    assert core.sums_from_payload(core.sums_payload(sums)) == sums


@pytest.mark.parametrize(
    "bad",
    [
        {"Grand": {"count": 1, "bet": "1.00", "to_meter": "0.5", "to_reserve": "0", "house": "0.4"}},
        {"Grand": {"count": -1, "bet": "0", "to_meter": "0", "to_reserve": "0", "house": "0"}},
        {"Grand": {"count": 1, "bet": "1.0000001", "to_meter": "1", "to_reserve": "0", "house": "0"}},
        {"Grand": {"count": 1, "bet": 1.0, "to_meter": "1", "to_reserve": "0", "house": "0"}},
        ["Grand"],
    ],
)
def test_a_bad_payload_is_refused(bad: object) -> None:
    with pytest.raises(money.MoneyError):
        core.sums_from_payload(bad)


@given(
    st.one_of(st.none(), st.integers(min_value=0, max_value=120)),
    st.integers(min_value=1, max_value=60),
    st.sampled_from(list(core.OfflineAction)),
)
def test_offered_only_within_the_window(ago: int | None, window: int, action: core.OfflineAction) -> None:
    now = datetime(2026, 12, 7, 10, tzinfo=UTC)
    heard = None if ago is None else now - timedelta(seconds=ago)
    state = core.availability(heard, now, window, action)
    if ago is not None and ago <= window:
        assert state == core.Availability.AVAILABLE
    elif action == core.OfflineAction.LOCK:
        assert state == core.Availability.LOCKED
    else:
        assert state == core.Availability.UNAVAILABLE


@given(
    st.one_of(st.none(), st.integers(min_value=-10_000, max_value=10_000)),
    st.integers(min_value=0, max_value=5000),
    st.sampled_from(list(core.SecondHit)),
)
def test_a_hit_is_won_unless_in_the_same_instant(
    offset_ms: int | None, window_ms: int, rule: core.SecondHit
) -> None:
    hit_at = datetime(2026, 12, 7, 10, tzinfo=UTC)
    last = None if offset_ms is None else hit_at + timedelta(milliseconds=offset_ms)
    outcome = core.decide(
        hit_at=hit_at, last_won_at=last, simultaneous_seconds=window_ms / 1000, second_hit=rule
    )
    if offset_ms is None or abs(offset_ms) > window_ms:
        assert outcome == core.Outcome.WON
    else:
        assert outcome == (core.Outcome.REDECIDED if rule == core.SecondHit.RESET else core.Outcome.LOST)


@st.composite
def batches(draw: st.DrawFn) -> list[dict[str, core.LevelSums]]:
    """A venue's rows cut into the batches it forwarded, each batch's sums."""
    found = draw(rows())
    cuts = sorted(draw(st.lists(st.integers(min_value=0, max_value=len(found)), max_size=5)))
    edges = [0, *cuts, len(found)]
    return [core.add_up(found[a:b]) for a, b in itertools.pairwise(edges)]


def total(parts: list[dict[str, core.LevelSums]]) -> dict[str, core.LevelSums]:
    out: dict[str, core.LevelSums] = {}
    for part in parts:
        out = core.merge(out, part)
    return out


@given(batches())
def test_records_kept_of_the_same_batches_reconcile_exactly(parts: list[dict[str, core.LevelSums]]) -> None:
    stated = total(parts)  # the venue's forwarded totals
    received = total(list(reversed(parts)))  # the central's running record, summed in another order
    ledger = core.money_only(total(parts))  # one ledger row per level and batch: no play count
    assert core.reconcile(stated=stated, received=received, applied=stated, ledger=ledger) == []


@given(
    batches(),
    st.sampled_from(["received", "applied", "ledger"]),
    st.sampled_from(LEVELS),
    st.sampled_from(core.FIELDS),
    st.decimals(min_value=Decimal("0.000001"), max_value=Decimal("1000"), places=6),
)
def test_a_change_in_one_record_is_found_by_its_checks_to_the_sixth_decimal(
    parts: list[dict[str, core.LevelSums]], record: str, level: str, part: str, off: Decimal
) -> None:
    stated = total(parts)
    records = {"received": dict(stated), "applied": dict(stated), "ledger": dict(stated)}
    was = records[record].get(level, core.LevelSums())
    records[record][level] = core.LevelSums(
        was.count, **{f: getattr(was, f) + (off if f == part else 0) for f in core.FIELDS}
    )
    findings = core.reconcile(stated=stated, **records)
    # A change to the batches accepted shows against the venue's totals and against the ledger.
    expected = {
        "received": [core.Check.RECEIVED],
        "applied": [core.Check.BATCHES, core.Check.LEDGER],
        "ledger": [core.Check.LEDGER],
    }[record]
    assert [f.check for f in findings] == expected
    for f in findings:
        assert (f.difference.level, f.difference.field) == (level, part)
        assert abs(f.difference.delta) == off  # exact: no rounding anywhere
        assert f.as_payload()["check"] == f.check.value


@given(batches(), st.integers(min_value=1, max_value=5), st.sampled_from(LEVELS))
def test_the_ledger_check_ignores_the_play_count(
    parts: list[dict[str, core.LevelSums]], extra: int, level: str
) -> None:
    stated = total(parts)
    was = stated.get(level, core.LevelSums())
    recounted = {
        **stated,
        level: core.LevelSums(was.count + extra, was.bet, was.to_meter, was.to_reserve, was.house),
    }
    findings = core.reconcile(stated=stated, received=stated, applied=recounted, ledger=stated)
    assert [(f.check, f.difference.field) for f in findings] == [(core.Check.BATCHES, "count")]
