"""Interconnected bingo (IB-01) in one database with the link's loopback: three member halls, their round
games' contributions and results through their outboxes, the central's decision on "network.<code>"
applied back to the halls' cashiers and screens."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from bingo.network.interconnected.models import (
    KnownRound,
    NetworkPrize,
    PrizeRound,
    RoomMembership,
    RoundContribution,
    RoundResult,
    RoundShare,
)
from bingo.network.interconnected.services import prizes, rounds
from bingo.network.interconnected.services import readmodels as network_readmodels
from bingo.traditional.services import games
from halls.cashier.models import Payable
from halls.link.models import InboxMessage, StreamEntry
from halls.link.services import inbox
from jackpots.models import Contribution
from jackpots.services import reports
from tests.bingo.network.interconnected.ib_support import (
    Hall,
    bingo_at,
    deliver,
    follow,
    make_hall,
    make_network,
    make_prize,
    on_sale,
)
from tests.bingo.traditional.game_support import fresh_process, no_celery  # noqa: F401 (autouse fixtures)

pytestmark = pytest.mark.django_db


@pytest.fixture
def halls() -> list[Hall]:
    return [make_hall(n) for n in (1, 2, 3)]


@pytest.fixture
def prize(halls: list[Hall]) -> NetworkPrize:
    return make_prize(make_network(halls), halls)


def _statuses(hall: Hall) -> list[tuple[str, str]]:
    return [(a.status, a.answer.get("refused", {}).get("code", "")) for a in deliver(hall)]


def test_a_round_decided_when_every_hall_reports_shares_to_the_cent(halls, prize) -> None:
    rnd = prizes.open_round(prize=prize, actor="central-operator")
    follow()
    assert KnownRound.objects.get(prize_code="IB1", number=1).max_ball == 40

    played = [on_sale(hall) for hall in halls]  # 30 cards × 2.00 each: 60.00 of sales, 6.00 to the pool
    assert played[0].announcement["network"]["round"] == 1
    for hall in halls:
        assert _statuses(hall) == [("applied", "")]
    assert list(RoundContribution.objects.values_list("sales", "to_meter").distinct()) == [
        (Decimal("60.00"), Decimal("6.000000"))
    ]
    assert Contribution.objects.filter(pool=prize.pool).count() == 3
    assert network_readmodels.live_meter(prize) == Decimal("118.01")
    assert reports.balance(prize.pool).holds

    # Halls 1 and 2 bingo at ball 15 (card A-7 each), hall 3 at ball 20: 1 and 2 share.
    assert bingo_at(halls[0], played[0], serial=7, fillers=0) == 15
    assert bingo_at(halls[1], played[1], serial=7, fillers=0) == 15
    assert bingo_at(halls[2], played[2], serial=7, fillers=5) == 20
    for hall in halls[:2]:
        assert _statuses(hall) == [("applied", "")]
    rnd.refresh_from_db()
    assert rnd.state == "open"  # hall 3 has not reported yet
    assert _statuses(halls[2]) == [("applied", "")]
    rnd.refresh_from_db()
    assert (rnd.state, rnd.rule, rnd.ordinal) == ("decided", "all_reported", 15)
    assert (rnd.pool_amount, rnd.share, rnd.remainder) == (
        Decimal("118.010000"),
        Decimal("59.00"),
        Decimal("0.010000"),
    )
    shares = list(
        RoundShare.objects.order_by("venue_id").values_list("venue__licence_number", "card", "amount")
    )
    assert shares == [("ML-B-0001", "A-0007", Decimal("59.00")), ("ML-B-0002", "A-0007", Decimal("59.00"))]
    assert rnd.remainder is not None
    assert sum(s[2] for s in shares) + rnd.remainder == rnd.pool_amount
    assert reports.balance(prize.pool).holds

    follow()
    paid = Payable.objects.filter(source__startswith="network.share:").order_by("venue_id")
    assert [(p.venue_id, p.amount, p.kind) for p in paid] == [
        (halls[0].venue.pk, Decimal("59.00"), "accumulated"),
        (halls[1].venue.pk, Decimal("59.00"), "accumulated"),
    ]
    # Named as every bingo prize at the till: the room and its game first, then the network's prize.
    game = played[0]
    assert paid[0].description == (
        f"{game.room.name} · Partida {game.number} · Premio interconexionado IB1 (ronda 1) · cartón A-0007"
    )
    # The meter after the decision: the remainder, topped up to the seed, on every member room.
    memberships = RoomMembership.objects.all()
    assert {(m.meter_amount, m.meter_max_ball) for m in memberships} == {(Decimal("100.01"), 40)}


def test_a_bingo_after_the_max_ball_wins_nothing_and_the_pool_carries_over(halls, prize) -> None:
    prizes.open_round(prize=prize, actor="central-operator")
    follow()
    played = [on_sale(hall) for hall in halls]
    for hall, game in zip(halls, played, strict=True):
        deliver(hall)
        bingo_at(hall, game, serial=3, fillers=30)  # ball 45 > 40
        deliver(hall)
    rnd = PrizeRound.objects.get()
    assert (rnd.state, rnd.ordinal, rnd.share, rnd.remainder) == (
        "decided",
        None,
        Decimal("0.00"),
        Decimal("118.010000"),
    )
    assert not RoundShare.objects.exists()
    assert network_readmodels.live_meter(prize) == Decimal("118.01")  # carried over
    follow()
    assert not Payable.objects.filter(source__startswith="network.share:").exists()
    # Round 2 adds to what carried over.
    prizes.open_round(prize=prize, actor="central-operator")
    follow()
    on_sale(halls[0], first=31)
    deliver(halls[0])
    assert network_readmodels.live_meter(prize) == Decimal("124.01")
    assert reports.balance(prize.pool).holds


def test_an_overdue_round_is_decided_among_the_results_received(halls, prize) -> None:
    rnd = prizes.open_round(prize=prize, actor="central-operator")
    follow()
    played = [on_sale(hall) for hall in halls]
    for hall in halls:
        deliver(hall)
    bingo_at(halls[0], played[0], serial=7, fillers=10)  # ball 25
    bingo_at(halls[1], played[1], serial=9, fillers=12)  # ball 27
    deliver(halls[0])
    deliver(halls[1])
    # Hall 3's line is down: its game ends, its result waits in its outbox; the round's wait expires.
    bingo_at(halls[2], played[2], serial=7, fillers=0)  # ball 15: would have won
    assert rounds.decide_overdue() == []  # not yet
    assert rounds.decide_overdue(now=rnd.closes_at + timedelta(seconds=1)) == [rnd.pk]
    rnd.refresh_from_db()
    assert (rnd.rule, rnd.ordinal, rnd.missing) == ("wait_expired", 25, ["ML-B-0003"])
    assert list(RoundShare.objects.values_list("venue__licence_number", "amount")) == [
        ("ML-B-0001", Decimal("118.01"))
    ]
    # The line returns: the late result is recorded, never counted; the decision stands.
    assert [(a.status, a.answer.get("late")) for a in deliver(halls[2])] == [("applied", True)]
    late = RoundResult.objects.get(venue=halls[2].venue)
    assert (late.late, late.ordinal) == (True, 15)
    rnd.refresh_from_db()
    assert (rnd.ordinal, RoundShare.objects.count()) == (25, 1)
    assert reports.balance(prize.pool).holds


def test_a_replayed_message_is_counted_once(halls, prize) -> None:
    prizes.open_round(prize=prize, actor="central-operator")
    follow()
    on_sale(halls[0])
    [first] = deliver(halls[0])
    message = InboxMessage.objects.get(venue=halls[0].venue, sequence=first.sequence)
    again = inbox.accept(
        venue_id=halls[0].venue.pk, sequence=message.sequence, kind=message.kind, payload=message.payload
    )
    assert (again.status, again.answer) == ("duplicate", first.answer)
    assert Contribution.objects.filter(pool=prize.pool).count() == 1
    assert network_readmodels.live_meter(prize) == Decimal("106.01")


def test_a_voided_game_reports_no_bingo_and_its_contribution_stays(halls, prize) -> None:
    prizes.open_round(prize=prize, actor="central-operator")
    follow()
    played = [on_sale(hall) for hall in halls]
    for hall in halls:
        deliver(hall)
    games.void_game(game=played[0], actor=halls[0].caller, reason="blower failure")
    bingo_at(halls[1], played[1], serial=7, fillers=0)
    bingo_at(halls[2], played[2], serial=7, fillers=1)
    for hall in halls:
        deliver(hall)
    rnd = PrizeRound.objects.get()
    assert (rnd.ordinal, rnd.share) == (15, Decimal("118.01"))
    assert RoundResult.objects.get(venue=halls[0].venue).void


def test_the_meter_is_sent_at_most_once_per_period(halls, prize, settings) -> None:
    settings.HALL_NETWORK_METER_SECONDS = 3600
    prizes.open_round(prize=prize, actor="central-operator")  # sends one (forced)
    follow()
    for hall in halls:
        on_sale(hall)
        deliver(hall)
    meters = StreamEntry.objects.filter(stream="network.MLNET", kind="ib.meter")
    assert meters.count() == 1  # the contributions within the period sent none
    assert prizes.send_stale_meters(now=timezone.now() + timedelta(hours=2)) == 1
    assert meters.order_by("-sequence")[0].payload["amount"] == "118.01"
    follow()
    assert RoomMembership.objects.filter(meter_amount=Decimal("118.01")).count() == 3
