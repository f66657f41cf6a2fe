"""Electronic bingo's statistics (R-02, R-03): per venue-local day and per speciality, games played, cards
sold, amounts played (the sum of the purchases), prizes by combination, pool funding and awards, and the
return to players, every figure exact (Decimal) and checked against the rows themselves."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from bingo.electronic.models import ElectronicGame, EPrize, EWin, Purchase, Speciality
from bingo.electronic.services import games, reports, sales
from halls.errors import InvalidInput
from jackpots.models import Contribution
from tests.bingo.electronic import archive_play as play
from tests.bingo.electronic.support import (
    RULES_90,
    RULES_AUTOMATIC,
    draw_to_end,
    enqueued,
    forced_balls,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)

pytestmark = pytest.mark.django_db

RULES_POOL_WON: dict[str, Any] = {
    **RULES_90,
    "prizes": [*RULES_90["prizes"][:4], {**RULES_90["prizes"][4], "max_ball": 90}],
}
# Africa/Ceuta is UTC+1 in November: 22:00 UTC is 23:00 on the 20th there, 23:30 UTC is 00:30 on the 21st.
ON_20TH = datetime(2026, 11, 20, 22, 0, tzinfo=UTC)
ON_21ST = datetime(2026, 11, 20, 23, 30, tzinfo=UTC)
DAY_20, DAY_21 = date(2026, 11, 20), date(2026, 11, 21)


def _game(
    speciality: Speciality, buys: list[tuple[Any, Any, int]], at: datetime, seed: int
) -> ElectronicGame:
    game = play.new_game(speciality, at=at)
    for n, (terminal, card, count) in enumerate(buys):
        play.buy(game, terminal, card, count, f"g{game.number}-{n}")
    play.close_sales(game, at=at)
    if game.cards_sold:
        play.draw(game, play.ball_order(seed), at=at)
    else:
        game.closed_at = at
        game.save()
    game.refresh_from_db()
    return game


@pytest.fixture
def hall(venue, operator, cashier):
    """Two specialities (electronic with a pool won at any Bingo, automatic), games on two local days."""
    e = make_speciality(venue, operator, rules=RULES_POOL_WON, code="E90")
    a = make_speciality(venue, operator, rules=RULES_AUTOMATIC, code="AUTO")
    te, _ = make_terminal(e, operator, "T-E")
    ta, _ = make_terminal(a, operator, "T-A")
    open_verified_session(e, operator)
    open_verified_session(a, operator)
    c1 = funded_card(venue, cashier, Decimal("100.00"))
    c2 = funded_card(venue, cashier, Decimal("100.00"))
    games = {
        "e1": _game(e, [(te, c1, 6), (te, c2, 5)], ON_20TH, 1),
        "e2": _game(e, [(te, c1, 3)], ON_20TH.replace(hour=20), 2),
        "e3": _game(e, [(te, c2, 6), (te, c1, 6)], ON_21ST, 3),
        "e4": _game(e, [], ON_21ST.replace(minute=50), 4),  # nobody bought: closed at once
        "a1": _game(a, [(ta, c1, 4), (ta, c2, 2)], ON_20TH.replace(hour=21), 5),
    }
    return {"e": e, "a": a, "games": games}


def _expected(games: list[ElectronicGame]) -> dict[str, Any]:
    """The figures of `games` computed from their rows."""
    purchases = Purchase.objects.filter(game__in=games)
    played = sum((p.amount for p in purchases), Decimal(0))
    paid = sum((w.amount for w in EWin.objects.filter(prize__game__in=games)), Decimal(0))
    contributions = Contribution.objects.filter(idempotency_key__in=[f"egame:{g.pk}" for g in games])
    return {
        "cards": sum(p.cards for p in purchases),
        "played": played,
        "paid": paid,
        "to_meter": sum((c.to_meter for c in contributions), Decimal(0)),
        "to_reserve": sum((c.to_reserve for c in contributions), Decimal(0)),
        "rtp": (paid * 100 / played).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP) if played else None,
    }


def test_each_local_day_and_speciality_adds_up_to_its_rows(venue, hall) -> None:
    games = hall["games"]
    report = reports.statistics(venue=venue, first=DAY_20, last=DAY_21)
    cells = {(s.day, s.code): s for s in report.days}
    assert set(cells) == {(DAY_20, "E90"), (DAY_21, "E90"), (DAY_20, "AUTO")}
    for key, members in {
        (DAY_20, "E90"): [games["e1"], games["e2"]],
        (DAY_21, "E90"): [games["e3"]],
        (DAY_20, "AUTO"): [games["a1"]],
    }.items():
        stats, want = cells[key], _expected(members)
        assert stats.games == len(members)
        assert stats.cards == want["cards"]
        assert stats.played == want["played"]  # amounts played = the sum of the purchases
        assert stats.paid == want["paid"]  # prizes = every winning card's share
        assert stats.pool_to_meter == want["to_meter"] and stats.pool_to_reserve == want["to_reserve"]
        assert stats.return_to_players == want["rtp"]
    # The game nobody bought for counts apart, on the 21st (its local day).
    assert cells[(DAY_21, "E90")].games_without_sales == 1
    assert cells[(DAY_20, "E90")].games_without_sales == 0


def test_prizes_by_combination_count_won_and_not_won_with_their_amounts(venue, hall) -> None:
    e = hall["e"]
    report = reports.statistics(venue=venue, first=DAY_20, last=DAY_21, speciality=e)
    (stats,) = report.specialities
    assert stats.code == "E90" and stats.games == 3
    prizes = EPrize.objects.filter(game__speciality=e, game__cards_sold__gt=0)
    for code, line in stats.prizes.items():
        mine = prizes.filter(code=code)
        assert line.decided == mine.count()
        assert line.won == mine.filter(won=True).count() and line.not_won == mine.filter(won=False).count()
        assert line.winners == sum(p.winners for p in mine)
        assert line.paid == sum((w.amount for w in EWin.objects.filter(prize__in=mine)), Decimal(0))
        assert line.remainder == sum((p.remainder for p in mine.filter(won=True)), Decimal(0))
        assert line.from_pool == (code == "acumulado")
    # Line and Bingo are decided in every game with sales; the pool prize is won with each Bingo here.
    assert stats.prizes["bingo"].won == 3 and stats.prizes["linea"].decided == 3
    assert stats.pool_awards_count == 3
    assert stats.pool_awards == stats.prizes["acumulado"].paid
    assert stats.sales_prizes + stats.pool_awards == stats.paid
    # The range's line is its days' sum, exactly.
    days = [d for d in reports.statistics(venue=venue, first=DAY_20, last=DAY_21).days if d.code == "E90"]
    assert stats.played == sum((d.played for d in days), Decimal(0))
    assert stats.return_to_players == reports.return_percent(stats.paid, stats.played)


def test_the_total_and_a_single_day(venue, hall) -> None:
    games = hall["games"]
    report = reports.statistics(venue=venue, first=DAY_20, last=DAY_21)
    assert report.total is not None
    everything = _expected(list(g for g in games.values() if g.cards_sold))
    assert report.total.played == everything["played"] and report.total.paid == everything["paid"]
    assert report.total.games == 4 and report.total.return_to_players == everything["rtp"]
    only_20 = reports.statistics(venue=venue, first=DAY_20, last=DAY_20)
    assert {(s.day, s.code) for s in only_20.days} == {(DAY_20, "E90"), (DAY_20, "AUTO")}
    assert only_20.total is not None
    assert only_20.total.played == _expected([games["e1"], games["e2"], games["a1"]])["played"]
    empty = reports.statistics(venue=venue, first=date(2026, 11, 22), last=date(2026, 11, 22))
    assert empty.days == [] and empty.total is not None and empty.total.return_to_players is None


def test_the_report_as_json_and_csv_rows(venue, hall) -> None:
    report = reports.statistics(venue=venue, first=DAY_20, last=DAY_21)
    data = report.as_dict()
    assert data["time_zone"] == "Africa/Ceuta" and data["from"] == "2026-11-20"
    first = data["days"][0]
    assert first["day"] == "2026-11-20" and Decimal(first["played"]) == report.days[0].played
    rows = list(reports.rows(report))
    assert rows[0] == ["day", "speciality", "section", "item", "count", "amount"]
    sold = [r for r in rows if r[2] == "sales" and r[0] == "2026-11-21" and r[1] == "E90"]
    assert sold == [["2026-11-21", "E90", "sales", "cards sold", "12", "6.00"]]
    total_rtp = [r for r in rows if r[0] == "" and r[1] == "" and r[3] == "return to players (%)"]
    assert report.total is not None
    assert total_rtp == [["", "", "return", "return to players (%)", "", str(report.total.return_to_players)]]


def test_a_range_backwards_or_too_long_is_refused(venue) -> None:
    with pytest.raises(InvalidInput) as caught:
        reports.statistics(venue=venue, first=DAY_21, last=DAY_20)
    assert caught.value.code == "bad_range"
    with pytest.raises(InvalidInput) as caught:
        reports.statistics(venue=venue, first=date(2026, 1, 1), last=date(2026, 12, 31))
    assert caught.value.code == "range_too_long"


def test_games_played_by_the_engine_count_on_todays_local_day(venue, operator, cashier) -> None:
    """Through the real services (sales.purchase, the engine's close of sales and balls): two games, the
    report's figures are their purchases, their wins and their pools' contributions, exactly."""
    speciality = make_speciality(venue, operator, rules=RULES_POOL_WON, code="REAL")
    terminal, _ = make_terminal(speciality, operator, "T-R")
    open_verified_session(speciality, operator)
    card = funded_card(venue, cashier, Decimal("100.00"))
    played = []
    with enqueued():
        games.set_running(speciality=speciality, running=True, actor=operator)
        for n, seed in enumerate((21, 22)):
            game = speciality.games.get(state="selling")
            sales.purchase(terminal=terminal, card_number=card.number, cards=6, key=f"r{n}a")
            sales.purchase(terminal=terminal, card_number=card.number, cards=5, key=f"r{n}b")
            with forced_balls(play.ball_order(seed)):
                games.close_sales(game, early=True)
                played.append(draw_to_end(game))
            games.start_next_game(speciality)
    today = timezone.localtime(played[-1].closed_at, ZoneInfo(venue.time_zone)).date()
    report = reports.statistics(venue=venue, first=today, last=today, speciality=speciality)
    (stats,) = report.days
    want = _expected(played)
    assert (stats.day, stats.games, stats.cards) == (today, 2, 22)
    assert stats.played == want["played"] == Decimal("11.00")
    assert stats.paid == want["paid"] and stats.return_to_players == want["rtp"]
    assert stats.pool_to_meter == want["to_meter"] and stats.pool_to_reserve == want["to_reserve"]
    # The Line and the Bingo in each game; the accumulated prize with each Bingo (max ball 90).
    assert stats.prizes["linea"].won == 2 and stats.prizes["bingo"].won == 2
    assert stats.prizes["acumulado"].won == 2 and stats.pool_awards == stats.prizes["acumulado"].paid
