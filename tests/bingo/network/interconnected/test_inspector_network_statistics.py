"""The inspector's statistics (issue 15, R-02/R-03 as the halls read them) of network games played for
real through the services and the link's loopback: an interconnected round
(tests/bingo/network/interconnected) and a simultaneous game (tests/bingo/network/simultaneous). Each hall's
row of its game type and the totals, to the cent."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import timezone

from bingo.network.interconnected.services import prizes as network_prizes
from bingo.network.simultaneous.services import central
from bingo.network.simultaneous.services import venue as sb_venue
from bingo.venuewide import records
from halls.cashier.models import Payable
from halls.models import GameSession, Venue
from tests.bingo.network.interconnected import ib_support as ib
from tests.bingo.network.simultaneous import support as sb
from tests.bingo.traditional.game_support import fresh_process, no_celery  # noqa: F401 (autouse fixtures)

pytestmark = pytest.mark.django_db


def _rows(venue: Venue) -> tuple[list[tuple[str, str, int, int, int, Decimal, Decimal]], records.Statistics]:
    today = timezone.now().astimezone(timezone.get_current_timezone()).date()
    report = records.statistics(venue=venue, period="day", first=today, last=today)
    rows = [(r.room, r.game_type, r.games, r.void, r.cards, r.amount, r.prizes) for r in report.rows]
    return rows, report


def _minutes_paid(session: GameSession) -> Decimal:
    """What the session's minutes say was paid in its games (their totals)."""
    paid: Decimal = records.session_minutes(session)["totals"]["paid"]
    return paid


def _unlabelled(session: GameSession) -> set[str]:
    """The minutes' log steps of the session said by no label (they would print as their code)."""
    return {e["action"] for e in records.session_minutes(session)["log"]} - set(records.ACTIONS)


def _payables(venue: Venue) -> Decimal:
    return sum((p.amount for p in Payable.objects.filter(venue=venue)), Decimal("0.00"))


def test_interconnected_rows_count_the_hall_prizes_and_the_network_share_paid_in_the_hall() -> None:
    halls = [ib.make_hall(n) for n in (1, 2, 3)]
    prize = ib.make_prize(ib.make_network(halls), halls)
    network_prizes.open_round(prize=prize, actor="central-operator")
    ib.follow()
    played = [ib.on_sale(hall) for hall in halls]  # 30 cards × 2.00 each: 60.00 of sales per hall
    for hall in halls:
        ib.deliver(hall)
    ib.bingo_at(halls[0], played[0], serial=7, fillers=0)
    ib.bingo_at(halls[1], played[1], serial=7, fillers=0)
    ib.bingo_at(halls[2], played[2], serial=7, fillers=5)
    for hall in halls:
        ib.deliver(hall)
    ib.follow()
    # Halls 1 and 2 bingo at ball 15 and share the network prize (118.01: 59.00 each, 0.01 stays in the
    # pool); hall 3 at ball 20 takes only its own Bingo (50 % of 60.00).
    expected = {
        "ML-B-0001": (Decimal("89.00"), Decimal("148.33")),
        "ML-B-0002": (Decimal("89.00"), Decimal("148.33")),
        "ML-B-0003": (Decimal("30.00"), Decimal("50.00")),
    }
    for hall in halls:
        prizes, percent = expected[hall.venue.licence_number]
        rows, report = _rows(hall.venue)
        assert rows == [("Sala 1", "interconnected", 1, 0, 30, Decimal("60.00"), prizes)]
        assert (report.total.games, report.total.amount, report.total.prizes) == (1, Decimal("60.00"), prizes)
        assert report.rows[0].return_percent == report.total.return_percent == percent
        assert report.rows[0].game_type_label == "Interconnected bingo"
        # What the statistics count is what waits at the hall's cashier, to the cent.
        assert _payables(hall.venue) == prizes
        assert _unlabelled(hall.session) == set()
        assert _minutes_paid(hall.session) == prizes  # the minutes and the statistics agree
        month = records.statistics(venue=hall.venue, period="month", first=report.first, last=report.last)
        assert [(r.game_type, r.games, r.amount, r.prizes) for r in month.rows] == [
            ("interconnected", 1, Decimal("60.00"), prizes)
        ]
        csv_rows = list(records.statistics_csv_rows(report))
        assert csv_rows[1][1:] == [
            "Sala 1",
            "Interconnected bingo",
            "1",
            "0",
            "30",
            "60.00",
            f"{prizes}",
            f"{percent}",
        ]
        assert csv_rows[-1][0] == "Total" and csv_rows[-1][6:8] == ["60.00", f"{prizes}"]


def test_simultaneous_rows_count_each_halls_cards_and_the_prizes_it_paid(monkeypatch) -> None:
    net = sb.make_network()
    game = sb.new_game(net, price="1.00", percents=("10", "45", "5"))
    for hall, count in zip(net.halls, (6, 4, 3), strict=True):
        hall_game = net.hall_game(hall, game)
        sb_venue.sell(
            hall_game=hall_game,
            first=hall_game.first_serial,
            last=hall_game.first_serial + count - 1,
            actor=hall.cashier,
        )
    net.sync()
    central.close_sales(game=game, actor=net.boss)
    central.start_draw(game=game, actor=net.boss)
    net.follow()
    net.sync()
    game.refresh_from_db()
    one, two, three = net.halls
    game_one, game_two, game_three = (net.hall_game(h, game) for h in net.halls)
    a = game_one.first_serial
    b = next(
        s
        for s in range(game_two.first_serial, game_two.first_serial + 4)
        if sb.card(game_one, a).numbers & sb.card(game_two, s).numbers
    )
    first, second = sb.card(game_one, a).numbers, sb.card(game_two, b).numbers
    last = min(first & second)
    order = [*sorted((first | second) - {last}), last]
    monkeypatch.setattr(central, "_pick", sb.Script(order))
    list(sb.draw(game, len(order)))
    net.follow()
    assert sb_venue.claim(hall_game=game_one, kind="bingo", serial=a, actor=one.caller).valid
    assert sb_venue.claim(hall_game=game_two, kind="bingo", serial=b, actor=two.caller).valid
    net.sync()
    central.decide(game=game, actor=net.boss)
    net.follow()
    rest = sb.card(game_three, game_three.first_serial).numbers - set(order)
    monkeypatch.setattr(central, "_pick", sb.Script(sorted(rest)))
    list(sb.draw(game, len(rest)))
    net.follow()
    sb_venue.claim(hall_game=game_three, kind="bingo", serial=game_three.first_serial, actor=three.caller)
    net.sync()
    central.decide(game=game, actor=net.boss)
    net.follow()
    # 13 cards at 1.00: the network Bingo (45 %: 5.85) shared by halls 1 and 2 (2.92 each, 0.01 left),
    # each hall's own prize 5 % (0.65).
    expected = {
        sb.LICENCES[0]: (6, Decimal("6.00"), Decimal("3.57"), Decimal("59.50")),
        sb.LICENCES[1]: (4, Decimal("4.00"), Decimal("3.57"), Decimal("89.25")),
        sb.LICENCES[2]: (3, Decimal("3.00"), Decimal("0.65"), Decimal("21.67")),
    }
    for hall in net.halls:
        cards, amount, prizes, percent = expected[hall.licence]
        rows, report = _rows(hall.venue)
        assert rows == [("Sala 1", "simultaneous", 1, 0, cards, amount, prizes)], hall.licence
        assert (report.total.cards, report.total.amount, report.total.prizes) == (cards, amount, prizes)
        assert report.total.return_percent == percent
        assert _payables(hall.venue) == prizes
        assert _unlabelled(hall.session) == set()
        assert _minutes_paid(hall.session) == prizes
        csv_rows = list(records.statistics_csv_rows(report))
        assert csv_rows[1][2:] == [
            "Simultaneous bingo",
            "1",
            "0",
            str(cards),
            f"{amount}",
            f"{prizes}",
            f"{percent}",
        ]
