"""The archive (R-01, R-03): a played game recalled whole, and one terminal's (or player card's) part of it:
cards with their cells, the balls and the marks each made, the prizes won, the ledger entries; the figures
agree with the purchases and the ledger to the cent."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from bingo.electronic.models import EBall, ECard, EPrize, EWin, Purchase
from bingo.electronic.services import games, recall, sales
from halls.cashier.models import Leg
from halls.errors import InvalidInput
from tests.bingo.electronic import archive_play as play
from tests.bingo.electronic.support import (
    RULES_90,
    draw_to_end,
    enqueued,
    forced_balls,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)

pytestmark = pytest.mark.django_db

# The accumulated prize may be won with any Bingo (max ball 90): a small game pays its pool too.
RULES_POOL_WON: dict[str, Any] = {
    **RULES_90,
    "prizes": [
        *RULES_90["prizes"][:4],
        {**RULES_90["prizes"][4], "max_ball": 90, "info": "Con el Bingo"},
    ],
}


@pytest.fixture
def played(venue, operator, cashier):
    """Two terminals, three player cards, five purchases through the sales service; the engine draws the
    game to its Bingo in a known ball order."""
    speciality = make_speciality(venue, operator, rules=RULES_POOL_WON)
    t1, _ = make_terminal(speciality, operator, "Terminal A")
    t2, _ = make_terminal(speciality, operator, "Terminal B")
    open_verified_session(speciality, operator)
    c1 = funded_card(venue, cashier, Decimal("50.00"))
    c2 = funded_card(venue, cashier, Decimal("50.00"))
    c3 = funded_card(venue, cashier, Decimal("50.00"))
    balls = play.ball_order(7)
    with enqueued(), forced_balls(balls):
        games.set_running(speciality=speciality, running=True, actor=operator)
        game = speciality.games.get()
        for terminal, card, count, key in (
            (t1, c1, 6, "k1"),
            (t1, c1, 4, "k2"),
            (t1, c2, 5, "k3"),
            (t2, c3, 6, "k4"),
            (t2, c2, 3, "k5"),
        ):
            sales.purchase(terminal=terminal, card_number=card.number, cards=count, key=key)
        games.close_sales(game, early=True)
        game = draw_to_end(game)
    assert game.state == "closed"
    drawn = list(EBall.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True))
    assert drawn == balls[: len(drawn)]
    return {"game": game, "t1": t1, "t2": t2, "c1": c1, "c2": c2, "c3": c3, "balls": drawn}


def test_game_recall_holds_every_purchase_ball_and_prize_and_the_figures_agree(played) -> None:
    game = played["game"]
    data = recall.game_recall(game)
    assert data["game"]["id"] == game.pk and data["game"]["state"] == "closed"
    assert data["game"]["version"]["authorisation_ref"] == "AUT-TEST-1"
    # 24 cards at 0.50: the purchases' sum is the game's sales, and the ledger's spends say the same.
    assert data["sales"] == {
        "purchases": 5,
        "cards": 24,
        "amount": "12.00",
        "terminals": 2,
        "by_terminal": [
            {
                "terminal": played["t1"].pk,
                "name": "Terminal A",
                "purchases": 3,
                "cards": 15,
                "amount": "7.50",
            },
            {"terminal": played["t2"].pk, "name": "Terminal B", "purchases": 2, "cards": 9, "amount": "4.50"},
        ],
    }
    assert data["game"]["sales_total"] == "12.00" and data["game"]["cards_sold"] == 24
    assert [p["key"] for p in data["purchases"]["results"]] == ["k1", "k2", "k3", "k4", "k5"]
    assert data["purchases"]["next"] is None and data["cards"] == {"count": 24}
    # Every ball with its time, in order, the last one the Bingo's.
    drawn = played["balls"]
    assert [b["ball"] for b in data["balls"]] == drawn
    assert [b["ordinal"] for b in data["balls"]] == list(range(1, len(drawn) + 1))
    assert all(b["drawn_at"] for b in data["balls"])
    # Every prize decided, with winners, shares and remainders as written, and the ledger that paid it.
    prizes = {p["code"]: p for p in data["prizes"]}
    assert set(prizes) == set(EPrize.objects.filter(game=game).values_list("code", flat=True))
    bingo = prizes["bingo"]
    assert bingo["won"] and bingo["ordinal"] == len(drawn) and bingo["ball"] == drawn[-1]
    assert bingo["amount"] == "6.00"  # 50 % of 12.00
    winners = bingo["winners"]
    share = (Decimal("6.00") / winners).quantize(Decimal("0.01"), rounding="ROUND_DOWN")
    assert Decimal(bingo["share"]) == share
    assert Decimal(bingo["remainder"]) == Decimal("6.00") - share * winners
    assert len(bingo["wins"]) == winners and all(w["amount"] == bingo["share"] for w in bingo["wins"])
    credits = [leg for leg in bingo["ledger"]["legs"] if Decimal(leg["amount"]) < 0]
    assert -sum(Decimal(leg["amount"]) for leg in credits) == share * winners
    assert bingo["ledger"]["key"] == f"eprize:{game.pk}:bingo"
    # The accumulated prize went with the Bingo: paid from its pool, the settlement recorded.
    pool_prize = prizes["acumulado"]
    assert pool_prize["won"] and pool_prize["pool"] is not None
    settlement = pool_prize["pool_settlement"]
    assert settlement is not None and settlement["awards"]
    assert Decimal(settlement["awards"][0]["amount"]) == Decimal(pool_prize["paid"])
    assert any(leg["kind"] == "pool_funding" for leg in pool_prize["ledger"]["legs"])
    # One contribution per pool: 2 % to the meter and 1 % to the reserve of the game's 12.00.
    (funding,) = data["pool_funding"]
    assert funding["prize"] == "acumulado" and Decimal(funding["bet"]) == Decimal("12.00")
    assert Decimal(funding["to_meter"]) == Decimal("0.24") and Decimal(funding["to_reserve"]) == Decimal(
        "0.12"
    )
    assert data["checks"]["purchases_match_sales"] and data["checks"]["ledger_spends_match"]
    assert data["checks"]["ledger_prizes_match"]
    won = sum(EWin.objects.filter(prize__game=game).values_list("amount", flat=True), Decimal(0))
    assert Decimal(data["checks"]["prizes_won"]) == won


def test_purchases_and_cards_come_a_page_at_a_time(played) -> None:
    game = played["game"]
    first = recall.purchases_page(game, after=None, limit=2)
    second = recall.purchases_page(game, after=first["next"], limit=2)
    third = recall.purchases_page(game, after=second["next"], limit=2)
    keys = [p["key"] for page in (first, second, third) for p in page["results"]]
    assert keys == ["k1", "k2", "k3", "k4", "k5"] and third["next"] is None
    seen: list[int] = []
    after = None
    while True:
        page = recall.cards_page(game, after=after, limit=10)
        seen += [c["id"] for c in page["results"]]
        if page["next"] is None:
            break
        after = page["next"]
    assert seen == list(ECard.objects.filter(game=game).order_by("pk").values_list("pk", flat=True))
    winners = set(EWin.objects.filter(prize__game=game).values_list("card_id", flat=True))
    every = recall.cards_page(game, after=None, limit=100)["results"]
    assert {c["id"] for c in every if c["won"]} == winners
    assert all(len(c["cells"]) == 15 for c in every)
    with pytest.raises(InvalidInput):
        recall.page_size("5000")


def test_terminal_recall_shows_its_cards_marks_prizes_and_ledger_entries(played) -> None:
    game, terminal = played["game"], played["t1"]
    data = recall.terminal_recall(game, terminal=terminal)
    mine = Purchase.objects.filter(game=game, terminal=terminal)
    assert [p["key"] for p in data["purchases"]] == ["k1", "k2", "k3"]
    assert len(data["cards"]) == 15
    assert data["totals"]["spent"] == "7.50" and data["totals"]["purchases"] == 3
    balls = {b.number: b.ordinal for b in EBall.objects.filter(game=game)}
    for card in data["cards"]:
        row = ECard.objects.get(pk=card["id"])
        assert card["cells"] == list(bytes(row.cells))
        assert card["marked_at"] == [balls.get(n) for n in card["cells"]]
    # Each ball lists exactly the cells of this terminal's cards holding its number.
    for b in data["balls"]:
        expected = sorted(
            (c["id"], p) for c in data["cards"] for p, n in enumerate(c["cells"]) if n == b["ball"]
        )
        assert sorted((m["card"], m["cell"]) for m in b["marks"]) == expected
    wins = EWin.objects.filter(purchase__in=mine)
    assert sorted((w["prize"], w["card"]) for w in data["wins"]) == sorted(
        (w.prize.code, w.card_id) for w in wins.select_related("prize")
    )
    assert Decimal(data["totals"]["won"]) == sum((w.amount for w in wins), Decimal(0))
    # The ledger: each purchase's spend (card debit, sales credit) and the legs of its prizes on its cards.
    spends = [t for t in data["ledger"] if t["kind"] == "card_spend"]
    assert sorted(t["id"] for t in spends) == sorted(mine.values_list("transaction_id", flat=True))
    assert sum(Decimal(leg["amount"]) for t in spends for leg in t["legs"]) == 0
    accounts = {played["c1"].account.pk, played["c2"].account.pk}
    credited = -sum(
        Decimal(leg["amount"])
        for t in data["ledger"]
        if t["kind"] == "prize_award"
        for leg in t["legs"]
        if leg["account"] in accounts
    )
    # What its cards won is what the prize transactions credited to its cards' accounts, unless the same
    # player card also won at the other terminal (c2 plays at both): compare against the ledger itself.
    prize_txs = {t["id"] for t in data["ledger"] if t["kind"] == "prize_award"}
    ledger_credit = -sum(
        Leg.objects.filter(transaction_id__in=prize_txs, account_id__in=accounts).values_list(
            "amount", flat=True
        ),
        Decimal(0),
    )
    assert credited == ledger_credit


def test_player_card_recall_spans_terminals_and_reads_only_its_cards(played) -> None:
    game, c2 = played["game"], played["c2"]
    data = recall.terminal_recall(game, player_card=c2)
    assert [p["key"] for p in data["purchases"]] == ["k3", "k5"]
    assert {p["terminal_name"] for p in data["purchases"]} == {"Terminal A", "Terminal B"}
    assert len(data["cards"]) == 8 and data["totals"]["spent"] == "4.00"
    both = recall.terminal_recall(game, terminal=played["t2"], player_card=c2)
    assert [p["key"] for p in both["purchases"]] == ["k5"]
    with pytest.raises(InvalidInput) as caught:
        recall.terminal_recall(game)
    assert caught.value.code == "no_subject"


def test_terminal_recall_reads_a_fixed_number_of_queries(played, operator, venue, cashier) -> None:
    """Never the game's other cards: the queries do not grow with the game's size."""
    game, terminal = played["game"], played["t2"]
    with CaptureQueriesContext(connection) as small:
        recall.terminal_recall(game, terminal=terminal)
    with CaptureQueriesContext(connection) as whole:
        recall.game_recall(game)
    assert len(small.captured_queries) <= 12
    assert len(whole.captured_queries) <= 16
