"""What a terminal page draws from: the snapshot (rules with figures as cells, the game on sale, the game
drawing with its balls and prizes decided, the meters, the last games, the inserted card) and a card's last
games with its results."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from bingo.electronic.models import EBall, EGameState, ElectronicGame, EPrize, EWin
from bingo.electronic.prizetable import fix_terms, terms_json
from bingo.electronic.services import sales
from bingo.electronic.services.steps import rules_of
from halls.models import Venue
from tests.bingo.electronic.sales_support import OnSale, on_sale, selling_game
from tests.bingo.electronic.support import funded_card

pytestmark = pytest.mark.django_db
D = Decimal
URL = "/api/electronic/terminal/"


def _draw(game: ElectronicGame, numbers: list[int], state: str = EGameState.DRAWING) -> ElectronicGame:
    """The game's sales closed and `numbers` drawn (as the engine records them)."""
    rules = rules_of(game.version)
    now = timezone.now()
    sold = sum(p.cards for p in game.purchases.all())
    total = sum((p.amount for p in game.purchases.all()), D("0"))
    terms = fix_terms(rules, sales=total, cards=sold)
    for i, n in enumerate(numbers, start=1):
        EBall.objects.create(game=game, ordinal=i, number=n, drawn_at=now)
    ElectronicGame.objects.filter(pk=game.pk).update(
        state=state,
        sales_closed_at=now,
        cards_sold=sold,
        sales_total=total,
        balls_drawn=len(numbers),
        terms=terms_json(terms),
        closed_at=now if state == EGameState.CLOSED else None,
    )
    game.refresh_from_db()
    return game


@pytest.fixture
def sale(venue: Venue, operator: User, cashier: User) -> OnSale:
    return on_sale(venue, operator, cashier)


@pytest.fixture
def api(sale: OnSale) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"CashDevice {sale.terminal.device.pk}:{sale.token}")
    return client


def test_the_snapshot_before_any_draw(api: APIClient, sale: OnSale) -> None:
    answer = api.post(URL + "snapshot/", {}, format="json")
    assert answer.status_code == 200, answer.content
    snap = answer.json()
    assert snap["terminal"]["id"] == sale.terminal.pk and snap["terminal"]["refusal"] is None
    assert snap["terminal"]["stream"] == f"terminal.{sale.terminal.pk}"
    assert snap["speciality"]["stream"] == f"room.{sale.speciality.room_id}"
    rules = snap["rules"]
    assert rules["card_price"] == "0.50" and rules["purchase_sizes"] == [1, 2, 3, 4, 5, 6]
    assert rules["layout"]["code"] == "90" and rules["layout"]["lines"][0] == [0, 1, 2, 3, 4]
    prizes = {p["code"]: p for p in rules["prizes"]}
    assert prizes["esquinas"]["figure"] == [[0, 4, 10, 14]] and prizes["aspa"]["figure"] == [
        [0, 4, 7, 10, 14]
    ]
    assert prizes["acumulado"]["accumulated"] and prizes["acumulado"]["max_ball"] == 40
    assert prizes["acumulado"]["info"] == "Bingo hasta la bola 40"
    assert prizes["linea"]["percent"] == "10" and prizes["linea"]["figure"] == []
    assert snap["selling"]["game"] == sale.game.pk and snap["selling"]["mine"] == 0
    assert snap["selling"]["sales_close_at"]
    assert snap["drawing"] is None and snap["last_games"] == [] and snap["card"] is None
    assert snap["meters"] == [
        {
            "code": "acumulado",
            "name": "Acumulado",
            "amount": "100.00",
            "max_ball": 40,
            "info": "Bingo hasta la bola 40",
        }
    ]


def test_the_snapshot_while_one_game_draws_and_the_next_sells(api: APIClient, sale: OnSale) -> None:
    bought = sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=2, key="a")
    first = sales.cells_of(bought.cards[0])
    game = _draw(sale.game, first[:5])  # the first card's first row: a line
    prize = EPrize.objects.create(
        game=game,
        code="linea",
        type="line",
        name="Línea",
        ordinal=5,
        won=True,
        winners=1,
        amount=D("0.10"),
        share=D("0.10"),
        decided_at=timezone.now(),
    )
    EWin.objects.create(prize=prize, card=bought.cards[0], purchase=bought.purchase, amount=D("0.10"))
    nxt = selling_game(sale.speciality, session=sale.session)
    snap = api.post(URL + "snapshot/", {"card": sale.card.number}, format="json").json()
    drawing = snap["drawing"]
    assert drawing["game"] == game.pk and drawing["balls"] == first[:5] and drawing["cards_sold"] == 2
    prizes = {p["code"]: p for p in drawing["prizes"]}
    assert prizes["linea"]["decided"] and prizes["linea"]["result"]["share"] == "0.10"
    assert prizes["linea"]["amount"] == "0.10" and not prizes["bingo"]["decided"]
    assert prizes["bingo"]["result"] is None and prizes["acumulado"]["max_ball"] == 40
    assert snap["selling"]["game"] == nxt.pk
    # The inserted card: its two cards in the drawing game, the first with its line won, "falta" per pattern.
    [playing] = snap["card"]["games"]
    assert playing["game"] == game.pk and playing["state"] == "drawing"
    one, two = playing["cards"]
    assert one["missing"]["line"] == 0 and one["missing"]["full"] == 10
    assert one["won"] == [{"code": "linea", "name": "Línea", "amount": "0.10"}] and two["won"] == []


def test_the_last_games_with_the_cards_results(api: APIClient, sale: OnSale) -> None:
    bought = sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=3, key="a")
    game = _draw(sale.game, [1, 2, 3], state=EGameState.CLOSED)
    prize = EPrize.objects.create(
        game=game, code="bingo", type="bingo", name="Bingo", ordinal=3, won=True, winners=1,
        amount=D("0.75"), share=D("0.75"), decided_at=timezone.now(),
    )  # fmt: skip
    EWin.objects.create(prize=prize, card=bought.cards[1], purchase=bought.purchase, amount=D("0.75"))
    answer = api.post(URL + "games/", {"card": sale.card.number}, format="json")
    assert answer.status_code == 200, answer.content
    [played] = answer.json()["games"]
    assert played["game"] == game.pk and played["balls"] == [1, 2, 3]
    assert (played["cards"], played["spent"], played["won"]) == (3, "1.50", "0.75")
    assert played["wins"] == [
        {"code": "bingo", "name": "Bingo", "card": bought.cards[1].pk, "amount": "0.75"}
    ]
    snap = api.post(URL + "snapshot/", {}, format="json").json()
    assert [g["game"] for g in snap["last_games"]] == [game.pk]
    assert snap["last_games"][0]["prizes"][0]["code"] == "bingo"
    bad = api.post(URL + "games/", {"card": sale.card.number, "limit": 0}, format="json")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid"


def test_a_card_recalls_its_part_of_a_game_and_nothing_of_another_card(
    api: APIClient, sale: OnSale, venue: Venue, cashier: User
) -> None:
    bought = sales.purchase(terminal=sale.terminal, card_number=sale.card.number, cards=2, key="r")
    first = bought.cards[0]
    numbers = list(bytes(first.cells)[:3])
    game = _draw(sale.game, numbers, state=EGameState.CLOSED)
    answer = api.post(URL + "recall/", {"card": sale.card.number, "game": game.pk}, format="json")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert [c["id"] for c in body["cards"]] == [c.pk for c in bought.cards]
    assert body["balls"][0]["marks"] == [{"card": first.pk, "cell": 0}]
    assert [b["ball"] for b in body["balls"]] == numbers
    other = funded_card(venue, cashier)
    refused = api.post(URL + "recall/", {"card": other.number, "game": game.pk}, format="json")
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "unknown_game"
