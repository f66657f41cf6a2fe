"""The paper stock of a series per range of serials (issue 15, TB-21…TB-24): ranges received, issued to a
game, returned and destroyed, each part moved recorded and audited; a movement that does not fit every serial
of its range refused naming the serials, changing nothing; sales, sheets and table prints respect it; the
stock through the API and on the paper page."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from bingo.traditional.models import (
    BallSet,
    CardSeries,
    Game,
    PaperRange,
    SaleOperation,
    StockMovement,
    StockState,
)
from bingo.traditional.paperstock import Span
from bingo.traditional.services import games, paper, sales, stock
from halls.cashier.models import Till
from halls.errors import Conflict, InvalidInput
from halls.models import AuditEntry, Room, Venue
from halls.services import sessions
from tests.conftest import ALL_BALLS

pytestmark = pytest.mark.django_db
BASE = "http://testserver/"


@pytest.fixture
def other_game(venue: Venue, caller: User, ball_set: BallSet) -> Game:
    """A game in a second room, to issue paper to besides `manual_game`."""
    room = Room.objects.create(venue=venue, name="Sala 2", ball_pace_seconds=Decimal("0.5"))
    sessions.open_session(
        room=room, actor=caller, blower_ok=True, reserve_ok=True, reader_ok=True, inspection_balls=ALL_BALLS
    )
    return games.create_game(room=room, actor=caller, draw_source="manual")


def spans(series: CardSeries) -> list[Span]:
    return list(stock.spans_of(series))


def moved(
    series: CardSeries, operator: User, first: int, last: int, to: str, game: Game | None = None
) -> Any:
    return stock.move_paper(series=series, to_state=to, actor=operator, first=first, last=last, game=game)


def halls_example(series: CardSeries, operator: User, game: Game) -> None:
    """Serials 1–60 received, 1–30 put in stock, 1–12 issued to `game`, 7–12 returned, 13–18 destroyed."""
    stock.receive_paper(series=series, actor=operator, reference="albarán 77")
    moved(series, operator, 1, 30, StockState.IN_STOCK)
    moved(series, operator, 1, 12, StockState.ISSUED, game)
    moved(series, operator, 7, 12, StockState.RETURNED)
    moved(series, operator, 13, 18, StockState.DESTROYED)


def test_ranges_move_each_part_recorded_and_audited(
    operator: User, manual_game: Game, card_series: CardSeries
) -> None:
    halls_example(card_series, operator, manual_game)
    g = manual_game.pk
    assert spans(card_series) == [
        Span(1, 6, "issued", g),
        Span(7, 12, "returned", g),
        Span(13, 18, "destroyed"),
        Span(19, 30, "in_stock"),
        Span(31, 60, "received"),
    ]
    counts = stock.stock_of(card_series).counts
    assert counts == {"received": 30, "in_stock": 12, "issued": 6, "returned": 6, "destroyed": 6, "": 0}
    moves = StockMovement.objects.filter(series=card_series)
    assert list(moves.values_list("first_serial", "last_serial", "from_state", "to_state", "game")) == [
        (1, 60, "", "received", None),
        (1, 30, "received", "in_stock", None),
        (1, 12, "in_stock", "issued", g),
        (7, 12, "issued", "returned", g),
        (13, 18, "in_stock", "destroyed", None),
    ]
    assert moves.first().note == "albarán 77"  # type: ignore[union-attr]
    assert AuditEntry.objects.filter(action__in=["paper.received", "paper.moved"]).count() == 5
    # One movement over serials in two states is a row per state it moved them from.
    moved(card_series, operator, 19, 40, StockState.DESTROYED)
    destroyed = moves.filter(to_state="destroyed").values_list("first_serial", "last_serial", "from_state")
    assert list(destroyed)[1:] == [(19, 30, "in_stock"), (31, 40, "received")]
    assert spans(card_series)[2:] == [Span(13, 40, "destroyed"), Span(41, 60, "received")]


def test_a_movement_that_does_not_fit_is_refused_naming_the_serials_and_changes_nothing(
    operator: User, manual_game: Game, other_game: Game, card_series: CardSeries
) -> None:
    halls_example(card_series, operator, manual_game)
    before = (spans(card_series), StockMovement.objects.count(), AuditEntry.objects.count())
    # Issuing 5–25 to another game: 5–6 are issued, 7–12 returned, 13–18 destroyed.
    with pytest.raises(Conflict) as refused:
        moved(card_series, operator, 5, 25, StockState.ISSUED, other_game)
    assert refused.value.code == "bad_stock_move"
    assert refused.value.details["serials"] == [[5, 6], [7, 12], [13, 18]]
    assert refused.value.details["offending"][0] == {
        "first": 5, "last": 6, "state": "issued", "game": manual_game.pk,
    }  # fmt: skip
    message = refused.value.message
    assert "5–6: issued to game 1" in message and "7–12: returned from game 1" in message
    assert "13–18: destroyed" in message and "Nothing was moved" in message
    # Returning serials never issued; receiving serials already received; destroying destroyed ones.
    for first, last, to, serials in [
        (19, 25, StockState.RETURNED, [[19, 25]]),
        (1, 60, StockState.RECEIVED, [[1, 6], [7, 12], [13, 18], [19, 30], [31, 60]]),
        (13, 13, StockState.DESTROYED, [[13, 13]]),
        (31, 35, StockState.ISSUED, [[31, 35]]),  # received, not yet in stock
    ]:
        with pytest.raises(Conflict) as again:
            moved(card_series, operator, first, last, to, other_game)
        assert again.value.details["serials"] == serials, (first, last, to)
    with pytest.raises(Conflict) as elsewhere:  # returned to the wrong game
        moved(card_series, operator, 1, 6, StockState.RETURNED, other_game)
    assert elsewhere.value.code == "issued_elsewhere"
    with pytest.raises(InvalidInput) as outside:
        moved(card_series, operator, 55, 61, StockState.DESTROYED)
    assert outside.value.code == "range_not_in_series"
    with pytest.raises(InvalidInput) as no_game:
        moved(card_series, operator, 19, 20, StockState.ISSUED)
    assert no_game.value.code == "game_required"
    assert (spans(card_series), StockMovement.objects.count(), AuditEntry.objects.count()) == before


def test_a_return_takes_back_one_games_paper_at_a_time(
    operator: User, caller: User, manual_game: Game, other_game: Game, card_series: CardSeries
) -> None:
    stock.receive_paper(series=card_series, actor=operator)
    moved(card_series, operator, 1, 60, StockState.IN_STOCK)
    moved(card_series, operator, 1, 10, StockState.ISSUED, manual_game)
    moved(card_series, operator, 11, 20, StockState.ISSUED, other_game)
    with pytest.raises(Conflict) as mixed:
        moved(card_series, operator, 5, 15, StockState.RETURNED)
    assert mixed.value.code == "several_games"
    games.void_game(game=other_game, actor=caller, reason="test")
    with pytest.raises(Conflict) as over:  # a game over takes no paper
        moved(card_series, operator, 21, 30, StockState.ISSUED, other_game)
    assert over.value.code == "game_not_open"
    moved(card_series, operator, 11, 20, StockState.RETURNED, other_game)  # its paper comes back
    moved(card_series, operator, 11, 20, StockState.IN_STOCK)
    assert spans(card_series) == [Span(1, 10, "issued", manual_game.pk), Span(11, 60, "in_stock")]


def test_sales_and_sheets_use_only_the_games_own_or_unissued_paper(
    operator: User,
    caller: User,
    cashier: User,
    manual_game: Game,
    other_game: Game,
    card_series: CardSeries,
) -> None:
    halls_example(card_series, operator, manual_game)
    for game in (manual_game, other_game):
        games.open_sales(game=game, actor=caller)
    with pytest.raises(Conflict) as elsewhere:
        sales.sell_range(game=other_game, series=card_series, first=4, last=8, actor=cashier)
    assert elsewhere.value.code == "paper_issued_elsewhere"
    assert elsewhere.value.details["serials"] == [[4, 6]]
    assert "4–6" in elsewhere.value.message
    with pytest.raises(Conflict) as destroyed:
        sales.sell_range(game=manual_game, series=card_series, first=10, last=20, actor=cashier)
    assert destroyed.value.code == "paper_destroyed"
    assert destroyed.value.details["serials"] == [[13, 18]]
    assert not SaleOperation.objects.exists()
    assert sales.sell_range(game=manual_game, series=card_series, first=1, last=6, actor=cashier).cards == 6
    assert sales.sell_range(game=other_game, series=card_series, first=7, last=12, actor=cashier).cards == 6
    assert sales.sell_range(game=other_game, series=card_series, first=19, last=60, actor=cashier).cards == 42
    with pytest.raises(Conflict) as sheets:
        paper.print_sheets(
            series=card_series, game=other_game, first=1, last=60, actor=operator, base_url=BASE
        )
    assert sheets.value.code == "paper_destroyed" and sheets.value.details["serials"] == [[13, 18]]
    with pytest.raises(Conflict) as sheets:
        paper.print_sheets(
            series=card_series, game=other_game, first=1, last=12, actor=operator, base_url=BASE
        )
    assert sheets.value.code == "paper_issued_elsewhere" and sheets.value.details["serials"] == [[1, 6]]
    row, _pdf = paper.print_sheets(
        series=card_series, game=manual_game, first=1, last=12, actor=operator, base_url=BASE
    )
    assert row.cards == 12


def test_a_table_print_takes_the_next_cards_the_game_may_use(
    operator: User,
    caller: User,
    cashier: User,
    till: Till,
    manual_game: Game,
    other_game: Game,
    card_series: CardSeries,
) -> None:
    halls_example(card_series, operator, manual_game)
    for game in (manual_game, other_game):
        games.open_sales(game=game, actor=caller)

    def table(game: Game, count: int) -> tuple[int, int]:
        done = paper.print_at_table(
            game=game, series=card_series, count=count, actor=cashier, till=till, base_url=BASE
        )
        return done.sale.first_serial, done.sale.last_serial

    assert table(other_game, 4) == (7, 10)  # 1–6 are the other game's
    assert table(other_game, 4) == (19, 22)  # 11–12 too few, 13–18 destroyed
    assert table(manual_game, 6) == (1, 6)
    assert table(manual_game, 2) == (11, 12)
    moved(card_series, operator, 23, 60, StockState.DESTROYED)
    with pytest.raises(Conflict) as none_left:
        table(manual_game, 1)
    assert none_left.value.code == "no_cards_left"


def test_the_stock_api(
    venue: Venue, operator: User, cashier: User, manual_game: Game, card_series: CardSeries
) -> None:
    api = APIClient()
    api.force_authenticate(operator)
    url = f"/api/series/{card_series.pk}/stock/"
    empty = api.get(url).json()
    assert empty["ranges"] == [] and empty["counts"]["not_received"] == 60 and empty["card_count"] == 60
    assert api.post(url, {"to_state": "received", "note": "A-1"}, format="json").status_code == 200
    assert api.post(url, {"to_state": "in_stock", "first": 1, "last": 30}, format="json").status_code == 200
    issued = api.post(
        url, {"to_state": "issued", "first": 1, "last": 12, "game": manual_game.pk}, format="json"
    )
    assert issued.status_code == 200, issued.content
    body = api.get(url).json()
    assert body["ranges"] == [
        {"first": 1, "last": 12, "cards": 12, "state": "issued", "game": manual_game.pk, "game_number": 1},
        {"first": 13, "last": 30, "cards": 18, "state": "in_stock", "game": None, "game_number": None},
        {"first": 31, "last": 60, "cards": 30, "state": "received", "game": None, "game_number": None},
    ]
    assert body["counts"] == {
        "not_received": 0, "received": 30, "in_stock": 18, "issued": 12, "returned": 0, "destroyed": 0,
    }  # fmt: skip
    assert issued.json() == body
    refused = api.post(url, {"to_state": "returned", "first": 10, "last": 14}, format="json")
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "bad_stock_move" and error["details"]["serials"] == [[13, 14]]
    assert api.get(url).json() == body
    outside = api.post(url, {"to_state": "destroyed", "first": 50, "last": 70}, format="json")
    assert outside.status_code == 400 and outside.json()["error"]["code"] == "range_not_in_series"
    till_api = APIClient()
    till_api.force_authenticate(cashier)
    assert till_api.get(url).status_code == 200  # the cashier reads it
    assert till_api.post(url, {"to_state": "destroyed"}, format="json").status_code == 403


def test_the_paper_page_shows_the_ranges_and_moves_one(
    venue: Venue, operator: User, manual_game: Game, card_series: CardSeries
) -> None:
    halls_example(card_series, operator, manual_game)
    client = Client()
    client.force_login(operator)
    page = client.get("/paper/", {"venue": venue.pk}).content.decode()
    assert 'data-series="A" data-state="mixed"' in page
    assert 'data-first="13" data-last="18" data-state="destroyed"' in page
    assert '<li data-state="destroyed">Destroyed: <strong>6</strong></li>' in page
    form = {"action": "move", "venue": venue.pk, "series": card_series.pk, "note": ""}
    moved_page = client.post("/paper/", {**form, "first": "19", "last": "30", "to_state": "destroyed"})
    assert moved_page.status_code == 302
    assert Span(13, 30, "destroyed") in spans(card_series)
    refused = client.post("/paper/", {**form, "first": "1", "last": "8", "to_state": "destroyed"})
    text = refused.content.decode()
    assert 'id="error" data-code="bad_stock_move"' in text and "1–6: issued to game 1" in text
    assert Span(1, 6, "issued", manual_game.pk) in spans(card_series)
    assert PaperRange.objects.filter(series=card_series).count() == 4
