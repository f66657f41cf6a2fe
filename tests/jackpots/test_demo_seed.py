"""The demo's pool: seeded idempotently through the services, and its tables play by themselves."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_DOWN, Decimal
from typing import Any

import pytest
from django.db.models import Sum

from demo import tables as demo
from demo import tasks
from demo.actors import autoplay_actor
from demo.seed import seed_demo
from jackpots.models import Contribution, Pool, PoolLevel, PoolMember
from jackpots.poker import STANDARD, HandCategory, parse_cards, rank_hand
from jackpots.services.folding import fold
from jackpots.tables.models import CasinoTable, Hand, HandState, SeatBet, SeatCards, SeatPayout

# Five hands of one deck that win nothing in a carrusel (no straight, no flush, no pair).
NO_HIT = (
    "2S 4H 6D 8C TS",
    "3S 5H 7D 9C JS",
    "2H 4D 6C 8S TH",
    "3H 5D 7C 9S JH",
    "2D 4C 6S 8H TD",
)


def _no_hit_deal(seats: Sequence[int], *, force: str = "") -> dict[int, list[str]]:
    return {seat: NO_HIT[i].split() for i, seat in enumerate(seats)}


def _pool() -> Pool:
    return Pool.objects.get(code=demo.POOL_CODE)


def _meter(pool: Pool) -> Decimal:
    fold(pool)
    return PoolLevel.objects.get(pool=pool, position=0).amount


def test_seeding_twice_is_idempotent(db: None) -> None:
    first = seed_demo()
    counts = (Pool.objects.count(), CasinoTable.objects.count(), PoolMember.objects.count())
    second = seed_demo()
    assert second.venue == first.venue
    assert (Pool.objects.count(), CasinoTable.objects.count(), PoolMember.objects.count()) == counts

    pool = _pool()
    assert (pool.name, pool.rule_pack, pool.carousel_bet) == (
        "Carrusel Póquer",
        "ML_PSD_CARRUSEL",
        Decimal("1"),
    )
    assert pool.venue == first.venue and pool.jurisdiction == "ML"
    level = PoolLevel.objects.get(pool=pool)
    assert level.amount == level.seed == demo.SEED
    tables = list(CasinoTable.objects.filter(venue=first.venue).order_by("number"))
    assert [t.name for t in tables] == [name for _, name in demo.TABLES]
    assert all(t.pool_id == pool.pk for t in tables)
    members = PoolMember.objects.filter(pool=pool, removed_at__isnull=True)
    assert sorted(m.key for m in members) == sorted(f"table:{t.pk}" for t in tables)
    assert sum("Carrusel Póquer" in note for note in second.notes) == 1


def test_autoplay_is_off_unless_the_demo_turns_it_on(db: None, settings: Any) -> None:
    seed_demo()
    settings.HALL_DEMO_TABLE_AUTOPLAY = False
    assert tasks.autoplay_tables() == []
    assert not Hand.objects.exists() and not Contribution.objects.exists()


def test_one_autoplay_step_plays_and_settles_a_hand_per_table(
    db: None, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed_demo()
    settings.HALL_DEMO_TABLE_AUTOPLAY = True
    monkeypatch.setattr(demo, "deal", _no_hit_deal)
    pool = _pool()
    assert pool.carousel_bet is not None
    before = _meter(pool)

    done = tasks.autoplay_tables()

    assert len(done) == len(demo.TABLES)
    hands = list(Hand.objects.order_by("table__number"))
    assert [h.state for h in hands] == [HandState.SETTLED] * len(demo.TABLES)
    bets = SeatBet.objects.filter(hand__in=hands)
    assert demo.MIN_PLAYERS * len(hands) <= bets.count() <= demo.MAX_PLAYERS * len(hands)
    assert all(b.pool_bet == pool.carousel_bet and b.contribution_key for b in bets)
    assert SeatCards.objects.filter(hand__in=hands).count() == bets.count()
    assert not SeatPayout.objects.exists()
    contributions = Contribution.objects.filter(pool_id=pool.pk)
    assert sorted(contributions.values_list("idempotency_key", flat=True)) == sorted(
        bets.values_list("contribution_key", flat=True)
    )
    to_meter = contributions.aggregate(s=Sum("to_meter"))["s"]
    assert to_meter == bets.count() * pool.carousel_bet * demo.CONTRIBUTION_RATE
    assert _meter(pool) == before + to_meter


def test_a_forced_straight_flush_is_paid(db: None, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    seed_demo()
    settings.HALL_DEMO_TABLE_AUTOPLAY = True
    monkeypatch.setattr(demo, "_force", lambda: "straight_flush")
    table = CasinoTable.objects.select_related("pool").order_by("number").first()
    assert table is not None

    demo.play_hand(table, autoplay_actor())

    hand = Hand.objects.get(table=table)
    payout = SeatPayout.objects.get(hand=hand)
    assert payout.category == HandCategory.STRAIGHT_FLUSH.value
    assert hand.meter_before is not None and hand.meter_after is not None
    assert payout.amount == (hand.meter_before / 10).quantize(Decimal("0.01"), rounding=ROUND_DOWN)
    assert hand.meter_after_payouts == hand.meter_before - payout.amount


@pytest.mark.parametrize("force", ["", "straight_flush", "royal_flush"])
def test_deal_gives_distinct_cards_and_the_forced_hand(force: str) -> None:
    seats = [1, 3, 4, 6, 7]
    dealt = demo.deal(seats, force=force)
    assert sorted(dealt) == seats
    cards = [card for hand in dealt.values() for card in hand]
    assert len(cards) == 25 and len(set(cards)) == 25
    categories = {rank_hand(parse_cards(hand), STANDARD).category for hand in dealt.values()}
    if force == "straight_flush":
        assert HandCategory.STRAIGHT_FLUSH in categories
    if force == "royal_flush":
        assert HandCategory.ROYAL_FLUSH in categories
