"""Automatic bingo's network prizes, Gran Línea and Gran Bingo (AB-05, AB-08), with the link's loopback:
three member halls' electronic specialities contribute at their close of sales and report their first Line
/ first Bingo at their game's end; the central decides at the network-wide earliest ordinal; the halls
credit the winning cards' player cards through the ledger and tell their terminals."""

from __future__ import annotations

from decimal import Decimal

import pytest

from bingo.electronic.models import EPrize
from bingo.electronic.prizetable import terms_from_json
from bingo.network.interconnected.models import (
    EGameRound,
    GranCredit,
    NetworkPrize,
    PrizeKind,
    PrizeRound,
    RoundContribution,
    RoundShare,
    SpecialityMembership,
)
from bingo.network.interconnected.services import readmodels as network_readmodels
from halls.cashier.services import ledger
from halls.cashier.services import player_cards as card_services
from halls.link.models import InboxMessage, OutboxMessage
from halls.link.services import inbox
from jackpots.models import Contribution
from jackpots.services import reports
from tests.bingo.network.interconnected.gran_support import (
    FILLERS,
    EHall,
    deliver,
    follow,
    line_at,
    make_ehall,
    make_gran,
    make_network,
    play,
    sell,
    short_rules,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def halls() -> list[EHall]:
    return [make_ehall(n) for n in (1, 2, 3)]


@pytest.fixture
def gran_linea(halls: list[EHall]) -> NetworkPrize:
    return make_gran(make_network(halls), halls)


def _deliver_all(halls: list[EHall]) -> list[tuple[str, str]]:
    return [(a.status, a.answer.get("refused", {}).get("code", "")) for hall in halls for a in deliver(hall)]


def _books_hold(halls: list[EHall]) -> None:
    for hall in halls:
        assert ledger.trial_balance(hall.venue.pk).holds


def test_gran_linea_won_by_one_hall_at_the_network_earliest_ordinal(halls, gran_linea) -> None:
    rnd = gran_linea.rounds.get(number=1)  # opened by itself at the creation
    follow()
    played = [sell(hall) for hall in halls]
    games = [play(p, line_at(at)) for p, at in zip(played, (7, 5, 9), strict=True)]
    # Each game played the Gran Línea (in play) and reported; nothing of it was paid in the hall.
    for game in games:
        assert terms_from_json(game.terms).prize("granlinea").in_play
        assert not EPrize.objects.filter(game=game, code="granlinea").exists()
    assert [(r.ordinal, r.cards) for r in EGameRound.objects.order_by("venue_id")] == [
        (7, [played[0].a]),
        (5, [played[1].a]),
        (9, [played[2].a]),
    ]
    assert _deliver_all(halls) == [("applied", "")] * 6
    # 2.00 of sales per hall, 10 % to the meter: 100.01 + 3 × 0.20.
    assert list(RoundContribution.objects.values_list("sales", "to_meter").distinct()) == [
        (Decimal("2.00"), Decimal("0.200000"))
    ]
    rnd.refresh_from_db()
    assert (rnd.state, rnd.rule, rnd.ordinal) == ("decided", "all_reported", 5)
    assert (rnd.pool_amount, rnd.share, rnd.remainder) == (
        Decimal("100.610000"),
        Decimal("100.61"),
        Decimal("0.000000"),
    )
    card = f"E-{played[1].a:04d}"
    assert list(RoundShare.objects.values_list("venue__licence_number", "card", "amount")) == [
        ("ML-B-0002", card, Decimal("100.61"))
    ]
    assert reports.balance(gran_linea.pool).holds

    before = card_services.balance(played[1].card_a)
    follow()
    credit = GranCredit.objects.get()
    assert (credit.venue_id, credit.card_id, credit.amount) == (
        halls[1].venue.pk,
        played[1].a,
        Decimal("100.61"),
    )
    assert credit.transaction.legs.count() == 2
    follow()  # the decision is applied once
    assert GranCredit.objects.count() == 1
    assert card_services.balance(played[1].card_a) == before + Decimal("100.61")
    _books_hold(halls)
    # The meter after the decision, back to the seed, on each speciality.
    assert {m.meter_amount for m in SpecialityMembership.objects.all()} == {Decimal("100.01")}


def test_two_halls_at_the_same_ordinal_share_to_the_cent(halls, gran_linea) -> None:
    rnd = gran_linea.rounds.get(number=1)  # opened by itself at the creation
    follow()
    played = [sell(hall) for hall in halls]
    for p, at in zip(played, (6, 6, 8), strict=True):
        play(p, line_at(at))
    _deliver_all(halls)
    rnd.refresh_from_db()
    assert (rnd.ordinal, rnd.pool_amount, rnd.share, rnd.remainder) == (
        6,
        Decimal("100.610000"),
        Decimal("50.30"),
        Decimal("0.010000"),
    )
    shares = list(RoundShare.objects.order_by("venue_id").values_list("venue_id", "amount"))
    assert shares == [(halls[0].venue.pk, Decimal("50.30")), (halls[1].venue.pk, Decimal("50.30"))]
    assert rnd.remainder is not None
    assert sum(s[1] for s in shares) + rnd.remainder == rnd.pool_amount
    assert reports.balance(gran_linea.pool).holds
    follow()
    credits = list(GranCredit.objects.order_by("venue_id").values_list("venue_id", "card_id", "amount"))
    assert credits == [
        (halls[0].venue.pk, played[0].a, Decimal("50.30")),
        (halls[1].venue.pk, played[1].a, Decimal("50.30")),
    ]
    _books_hold(halls)
    # The remainder stayed in the pool, which the engine then topped up to its seed.
    assert network_readmodels.live_meter(gran_linea) == Decimal("100.01")


def test_nobody_completes_the_gran_bingo_and_the_pool_carries_over() -> None:
    halls = [make_ehall(n, short_rules(extractions=20)) for n in (1, 2, 3)]
    prize = make_gran(make_network(halls), halls, kind=PrizeKind.GRAN_BINGO, code="GB1")
    rnd = prize.rounds.get(number=1)
    follow()
    for hall in halls:
        play(sell(hall), line_at(5)[:5] + FILLERS)  # a Line, never a Bingo in 20 balls
    assert _deliver_all(halls) == [("applied", "")] * 6
    rnd.refresh_from_db()
    assert (rnd.state, rnd.ordinal, rnd.share, rnd.remainder) == (
        "decided",
        None,
        Decimal("0.00"),
        Decimal("100.610000"),
    )
    assert not RoundShare.objects.exists()
    follow()
    assert not GranCredit.objects.exists()
    assert network_readmodels.live_meter(prize) == Decimal("100.61")  # carried over
    assert reports.balance(prize.pool).holds


def test_a_replayed_contribution_is_counted_once(halls, gran_linea) -> None:
    follow()
    play(sell(halls[0]), line_at(5))
    first, _result = deliver(halls[0])
    message = InboxMessage.objects.get(venue=halls[0].venue, sequence=first.sequence)
    again = inbox.accept(
        venue_id=halls[0].venue.pk, sequence=message.sequence, kind=message.kind, payload=message.payload
    )
    assert (again.status, again.answer) == ("duplicate", first.answer)
    assert Contribution.objects.filter(pool=gran_linea.pool).count() == 1
    assert network_readmodels.live_meter(gran_linea) == Decimal("100.21")


def test_a_speciality_not_joined_contributes_nothing(halls) -> None:
    prize = make_gran(make_network(halls), halls, join=halls[:2])
    follow()
    game = play(sell(halls[2]), line_at(5))
    assert not terms_from_json(game.terms).prize("granlinea").in_play
    assert not EGameRound.objects.filter(venue=halls[2].venue).exists()
    assert not OutboxMessage.objects.filter(venue_id=halls[2].venue.pk).exists()
    assert network_readmodels.live_meter(prize) == Decimal("100.01")
    assert not PrizeRound.objects.get().contributions.exists()
