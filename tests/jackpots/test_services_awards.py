"""Awards: the worked examples of spec §6.6 (AN10) and §6.7 (EU) on the engine, resets, idempotency,
level awards, must-hit-by (mystery) hits and the pool.hit events."""

# The shared fixtures are imported by name (tests/jackpots/pool_fixtures.py): pytest injects them as
# arguments, which ruff reads as redefinitions.
# ruff: noqa: F811

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from halls.errors import Conflict, InvalidInput
from halls.eventtypes import EventType
from halls.models import AuditEntry, Venue
from jackpots.engine import Winner
from jackpots.models import Award, LedgerMove, MoveKind, Pool, PoolLevel, PoolSettlement
from jackpots.poker import THREE_CARD, rank_hand
from jackpots.services import awards, contributions, folding, notify, reports
from jackpots.services.readmodels import meters
from jackpots.sources import PoolSource
from tests.jackpots.pool_fixtures import (  # noqa: F401 - fixtures
    an10_venue,
    carousel,
    carrusel_level,
    key,
    level_of,
    make_pool,
    nothing_written,
    pool_operator,
    set_meter,
    venue_of,
)

ROYAL_S, ROYAL_H = "AS KS QS JS TS", "AH KH QH JH TH"


def hand(seat: str, cards: str, discard: bool = False) -> Winner:
    return Winner(seat, rank_hand(cards), discard)


@pytest.fixture
def events() -> Iterator[list[tuple[str, dict[str, Any]]]]:
    seen: list[tuple[str, dict[str, Any]]] = []

    def listen(pool: Pool, type: str, data: dict[str, Any]) -> None:
        seen.append((type, data))

    notify.register_pool_event_listener(listen)
    yield seen
    notify.unregister_pool_event_listener(listen)


@pytest.fixture
def at_10000(carousel: Pool) -> Pool:
    """The AN10 carrusel's meter at 10,000.00 (spec §6.6 worked examples), bet 1.00."""
    set_meter(level_of(carousel), "10000")
    return carousel


def settle(pool: Pool, *winners: Winner, k: str | None = None, **context: Any) -> awards.AwardResult:
    return awards.award_hand(
        pool=pool,
        winners=list(winners),
        idempotency_key=k or key("hand"),
        actor="croupier",
        context={"table": "3", "hand": "41", "source": "table:1", **context},
    )


# --- spec §6.6, AN10 -----------------------------------------------------------------------------------


def test_an10_two_royal_flushes_share_the_pool_and_the_operator_reseeds(at_10000: Pool) -> None:
    result = settle(at_10000, hand("1", ROYAL_S), hand("4", ROYAL_H))
    assert [(line.seat, line.amount) for line in result.lines] == [
        ("1", Decimal("5000.00")),
        ("4", Decimal("5000.00")),
    ]
    assert result.meter_after_payouts == 0
    # OP-23: the reserve is empty, so the operator funds the reseed to 5,000 x the bet, recorded.
    assert (result.reset_from_reserve, result.operator_seed, result.meter_after) == (
        Decimal("0"),
        Decimal("5000"),
        Decimal("5000"),
    )
    level = level_of(at_10000)
    assert (level.amount, level.hits, level.total_paid) == (Decimal("5000"), 2, Decimal("10000.00"))
    assert LedgerMove.objects.get(level=level, kind=MoveKind.OPERATOR_SEED).amount == Decimal("5000")
    assert reports.balance(at_10000).holds


def test_an10_straight_flushes_paid_highest_first_on_the_remainder(at_10000: Pool) -> None:
    result = settle(at_10000, hand("5", "8H 7H 6H 5H 4H"), hand("2", "KS QS JS TS 9S"))
    assert [(line.seat, line.amount) for line in result.lines] == [
        ("2", Decimal("1000.00")),
        ("5", Decimal("900.00")),
    ]
    assert result.meter_after == level_of(at_10000).amount == Decimal("8100")
    assert [a.order for a in Award.objects.order_by("pk")] == [0, 1]


def test_an10_equal_straight_flushes_share_one_ten_percent(at_10000: Pool) -> None:
    result = settle(at_10000, hand("1", "9S 8S 7S 6S 5S"), hand("6", "9H 8H 7H 6H 5H"))
    assert [line.amount for line in result.lines] == [Decimal("500.00"), Decimal("500.00")]
    assert level_of(at_10000).amount == Decimal("9000")


def test_an10_four_of_a_kind_pays_300_times_the_bet(at_10000: Pool) -> None:
    result = settle(at_10000, hand("3", "AS AH AD AC KS"), hand("7", "2S 3D 5C 8H JD"))
    assert [(line.seat, line.amount, line.category) for line in result.lines] == [
        ("3", Decimal("300.00"), "four_of_a_kind")
    ]
    assert level_of(at_10000).amount == Decimal("9700")


# --- spec §6.7, EU -------------------------------------------------------------------------------------


def test_eu_straight_flush_and_four_of_a_kind(db: None) -> None:
    venue = venue_of("EU", "EU-P-1")
    pool = make_pool(venue, "op", pack="EU_PSD_JACKPOT", levels=[carrusel_level("1000")])
    set_meter(level_of(pool), "10000")
    result = settle(pool, hand("B", "KS KH KD KC 2S"), hand("A", "9D 8D 7D 6D 5D"))
    assert [(line.seat, line.amount) for line in result.lines] == [
        ("A", Decimal("1000.00")),
        ("B", Decimal("450.00")),
    ]
    assert level_of(pool).amount == Decimal("8550")
    assert reports.balance(pool).holds


# --- resets, fractions, idempotency, refusals ----------------------------------------------------------


def test_the_reset_takes_the_reserve_first(carousel: Pool) -> None:
    set_meter(level_of(carousel), "8000", reserve="3000")
    result = settle(carousel, hand("1", ROYAL_S))
    assert (result.reset_from_reserve, result.operator_seed) == (Decimal("3000"), Decimal("2000"))
    level = level_of(carousel)
    assert (level.amount, level.reserve) == (Decimal("5000"), Decimal("0"))
    kinds = dict(
        LedgerMove.objects.filter(level=level, settlement__isnull=False).values_list("kind", "amount")
    )
    assert kinds == {MoveKind.RESERVE_TO_METER: Decimal("3000"), MoveKind.OPERATOR_SEED: Decimal("2000")}
    assert reports.balance(carousel).holds


def test_payouts_are_whole_cents_and_the_fraction_stays(at_10000: Pool) -> None:
    contributions.contribute(
        pool=at_10000, source=PoolSource.of("table", 1), bet=Decimal("0.37"), idempotency_key=key(), actor="t"
    )
    # meter 10000.259: 10 % = 1000.0259 -> 1000.02 paid, 0.0059 stays in the pool
    result = settle(at_10000, hand("1", "KS QS JS TS 9S"))
    assert result.lines[0].amount == Decimal("1000.02")
    assert result.meter_after == Decimal("9000.239")
    assert result.kept_fraction == Decimal("0.0059")


def test_a_repeated_key_answers_the_first_award_and_writes_nothing(at_10000: Pool) -> None:
    first = settle(at_10000, hand("2", "KS QS JS TS 9S"), k="table-3-hand-41")
    with nothing_written():
        again = settle(at_10000, hand("2", "KS QS JS TS 9S"), k="table-3-hand-41")
    assert again.replayed and again.lines == first.lines and again.settlement_id == first.settlement_id
    with nothing_written(), pytest.raises(Conflict) as other:
        settle(at_10000, hand("2", ROYAL_S), k="table-3-hand-41")
    assert other.value.code == "idempotency_key_reused"


def test_hands_that_win_nothing_write_nothing(at_10000: Pool) -> None:
    with nothing_written():
        result = settle(at_10000, hand("2", "2S 3D 5C 8H JD"))
    assert result.lines == () and result.settlement_id is None


@pytest.mark.parametrize(
    "winners",
    [
        [hand("1", ROYAL_S), hand("1", ROYAL_H)],  # a seat twice
        [Winner("1", rank_hand("AS KS QS", ordering=THREE_CARD), False)],
        [hand("1", ROYAL_S, discard=True)],  # no discarding in póquer sin descarte
    ],
)
def test_bad_winners_are_refused_and_nothing_is_written(at_10000: Pool, winners: list[Winner]) -> None:
    with nothing_written(), pytest.raises(InvalidInput) as refused:
        settle(at_10000, *winners)
    assert refused.value.code == "bad_winners"


def test_award_hand_needs_a_table_pack_and_a_key(an10_venue: Venue) -> None:
    machines = make_pool(an10_venue, "op", pack="", bet=None, code="LINK", source_type="machine")
    with nothing_written(), pytest.raises(InvalidInput) as no_pack:
        settle(machines, hand("1", ROYAL_S))
    assert no_pack.value.code == "no_rule_pack"
    with nothing_written(), pytest.raises(InvalidInput) as no_key:
        awards.award_hand(pool=machines, winners=[], idempotency_key="", actor="x")
    assert no_key.value.code == "idempotency_key_required"


def test_a_paytable_awaiting_authorisation_is_refused(db: None) -> None:
    venue = venue_of("AN10", "AN-T-1")
    pool = make_pool(venue, "op", pack="AN10_TRIPOQUER_CARRUSEL", bet=None)
    with nothing_written(), pytest.raises(InvalidInput) as refused:
        settle(pool, Winner("1", rank_hand("AS KS QS", ordering=THREE_CARD), False))
    assert refused.value.code == "bad_winners"
    assert "authorisation" in refused.value.message


# --- level awards (machines, bingo programs) ----------------------------------------------------------


def test_award_level_fixed_or_percent_and_a_second_hit_is_paid_from_the_reset(an10_venue: Venue) -> None:
    pool = make_pool(
        an10_venue,
        "op",
        pack="",
        bet=None,
        code="LINK",
        source_type="machine",
        levels=[carrusel_level("100", "0.01", "0.002")],
    )
    level = level_of(pool)
    set_meter(level, "250.555")
    whole = awards.award_level(
        level=level,
        percent=Decimal("100"),
        winner={"source": "machine:1", "seat": ""},
        idempotency_key="m1",
        actor="gw",
    )
    assert whole.lines[0].amount == Decimal("250.55") and whole.kept_fraction == Decimal("0.005")
    assert whole.meter_after == Decimal("100")  # reset: 0.005 kept + 99.995 operator seed
    second = awards.award_level(
        level=level, percent=Decimal("100"), winner={"source": "machine:2"}, idempotency_key="m2", actor="gw"
    )
    assert second.meter_before == Decimal("100") and second.lines[0].amount == Decimal("100.00")
    fixed = awards.award_level(
        level=level, amount=Decimal("150"), winner={"source": "machine:3"}, idempotency_key="m3", actor="gw"
    )
    assert (fixed.lines[0].from_meter, fixed.lines[0].from_operator) == (Decimal("100.00"), Decimal("50.00"))
    assert level_of(pool).hits == 3
    assert reports.balance(pool).holds


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({}, "award_amount_or_percent"),
        ({"amount": Decimal("1"), "percent": Decimal("1")}, "award_amount_or_percent"),
        ({"percent": Decimal("0")}, "bad_percent"),
        ({"percent": Decimal("100.01")}, "bad_percent"),
        ({"amount": Decimal("-5")}, "bad_amount"),
        ({"amount": Decimal("1.001")}, "bad_amount"),
    ],
)
def test_bad_level_awards_write_nothing(carousel: Pool, kwargs: dict[str, Any], code: str) -> None:
    with nothing_written(), pytest.raises(InvalidInput) as refused:
        awards.award_level(level=level_of(carousel), winner={}, idempotency_key="x", actor="gw", **kwargs)
    assert refused.value.code == code


def test_near_simultaneous_hits_are_served_in_arrival_order(carousel: Pool) -> None:
    set_meter(level_of(carousel), "10000")
    a = settle(carousel, hand("1", "KS QS JS TS 9S"))
    b = settle(carousel, hand("2", "KH QH JH TH 9H"))
    assert (a.lines[0].amount, b.lines[0].amount) == (Decimal("1000.00"), Decimal("900.00"))
    assert b.meter_before == a.meter_after
    assert list(PoolSettlement.objects.order_by("pk").values_list("pk", flat=True)) == [
        a.settlement_id,
        b.settlement_id,
    ]


# --- must-hit-by (mystery) ------------------------------------------------------------------------------


def test_the_contribution_that_reaches_the_secret_value_wins_it(
    an10_venue: Venue, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[tuple[Decimal, Decimal]] = []

    def draw(low: Decimal, high: Decimal) -> Decimal:  # the CSPRNG's draw, made predictable: the ceiling
        drawn.append((low, high))
        return high

    monkeypatch.setattr("jackpots.engine.draw_must_hit_by", draw)
    pool = make_pool(
        an10_venue, "op", levels=[carrusel_level("5000", "0.5", "0.5", ceiling=Decimal("5010"), mystery=True)]
    )
    level = level_of(pool)
    assert level.must_hit_by is not None
    PoolLevel.objects.filter(pk=level.pk).update(must_hit_by=Decimal("5001.00"))
    receipts = [
        contributions.contribute(
            pool=pool,
            source=PoolSource.of("table", 1).at("seat", i),
            bet=Decimal("1.00"),
            idempotency_key=key(),
            actor="t",
        )
        for i in range(1, 6)
    ]  # 0.50 each: the meter reaches 5001.00 with the 2nd
    result = folding.fold(pool)
    assert (result.folded, result.mystery_hits) == (5, 1)
    settlement = PoolSettlement.objects.get(pool=pool)
    assert (
        settlement.kind == "mystery"
        and settlement.context["contribution"] == receipts[1].lines[0].contribution_id
    )
    award = settlement.awards.get()
    # the award names the source and, as its seat, where in the member the winning bet was made
    assert (award.source, award.seat, award.amount) == ("table:1/seat:2", "seat:2", Decimal("5001.00"))
    level.refresh_from_db()
    # reset to the seed: the reserve's 1.00 so far, the operator 4,999.00; then the 3 later rows
    # (1.50 to the meter, 1.50 to the reserve)
    assert level.amount == Decimal("5001.50") and level.reserve == Decimal("1.50")
    assert (settlement.reset_from_reserve, settlement.operator_seed) == (Decimal("1.00"), Decimal("4999.00"))
    assert level.must_hit_by == Decimal("5010")  # redrawn at the reseed, from the seed to the ceiling
    assert drawn == [(Decimal("5000"), Decimal("5010"))] * 2
    assert reports.balance(pool).holds
    meter = json.dumps(meters.pool_meter(pool).as_dict())
    assert "must_hit" not in meter and str(level.must_hit_by) not in meter


# --- events and audit ----------------------------------------------------------------------------------


def test_a_hit_is_announced_with_its_context_and_audited(
    at_10000: Pool, events: list[tuple[str, dict[str, Any]]]
) -> None:
    settle(at_10000, hand("2", "KS QS JS TS 9S"), hand("5", "AS AH AD AC KS"))
    hits = [data for type, data in events if type == EventType.POOL_HIT]
    assert [(h["seat"], h["amount"], h["table"], h["hand"], h["source"]) for h in hits] == [
        ("2", Decimal("1000.00"), "3", "41", "table:1"),
        ("5", Decimal("300.00"), "3", "41", "table:1"),
    ]
    assert all(h["new_amount"] == Decimal("8700.00") and h["pool"] == at_10000.pk for h in hits)
    assert AuditEntry.objects.filter(action="pool.awarded").count() == 1
    assert "must_hit" not in json.dumps(hits, default=str)


def test_hits_publish_on_commit_on_the_pool_stream(
    at_10000: Pool, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    published: list[Any] = []
    monkeypatch.setattr("halls.events.publish", published.append)
    with django_capture_on_commit_callbacks(execute=True):
        settle(at_10000, hand("2", "KS QS JS TS 9S"))
        assert published == []  # nothing before the commit
    hit = next(e for e in published if e.type == "pool.hit")
    assert hit.stream == f"pool.{at_10000.pk}" and hit.data["amount"] == Decimal("1000.00")
