"""The archive's and statistics' doors (/api/electronic/): the operator reads a game's recall, its pages,
a terminal's or a player card's part, and the statistics as JSON and CSV; a cashier is refused, another
venue's operator finds nothing, bad input names the problem."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from halls.models import Role
from tests.api_support import api_client
from tests.bingo.electronic import archive_play as play
from tests.bingo.electronic.support import funded_card, make_speciality, make_terminal, open_verified_session
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

AT = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)  # 13:00 on the 20th in Africa/Ceuta


@pytest.fixture
def game(venue, operator, cashier) -> dict[str, Any]:
    speciality = make_speciality(venue, operator, code="E90")
    terminal, _ = make_terminal(speciality, operator, "Terminal 7")
    open_verified_session(speciality, operator)
    card = funded_card(venue, cashier, Decimal("30.00"))
    game = play.new_game(speciality, at=AT)
    play.buy(game, terminal, card, 6, "a")
    play.buy(game, terminal, card, 4, "b")
    play.close_sales(game, at=AT)
    play.draw(game, play.ball_order(11), at=AT)
    game.refresh_from_db()
    return {"game": game, "terminal": terminal, "card": card, "speciality": speciality}


def test_the_operator_reads_a_game_recall_and_its_pages(operator, game) -> None:
    boss = api_client(operator)
    g = game["game"]
    answer = boss.get(f"/api/electronic/games/{g.pk}/recall/", {"limit": 1})
    assert answer.status_code == 200, answer.content
    data = answer.json()
    assert data["game"]["id"] == g.pk and data["sales"]["amount"] == "5.00" and data["sales"]["cards"] == 10
    assert len(data["purchases"]["results"]) == 1 and data["purchases"]["next"] is not None
    assert len(data["balls"]) == g.balls_drawn and data["checks"]["ledger_prizes_match"]
    more = boss.get(f"/api/electronic/games/{g.pk}/recall/purchases/", {"after": data["purchases"]["next"]})
    assert [p["key"] for p in more.json()["results"]] == ["b"]
    cards = boss.get(f"/api/electronic/games/{g.pk}/recall/cards/", {"limit": 4}).json()
    assert cards["count"] == 10 and len(cards["results"]) == 4 and cards["next"] is not None
    bad = boss.get(f"/api/electronic/games/{g.pk}/recall/cards/", {"limit": 0})
    assert bad.status_code == 400 and "limit" in bad.content.decode()


def test_the_terminal_recall_by_terminal_or_card(operator, game) -> None:
    boss = api_client(operator)
    g, terminal, card = game["game"], game["terminal"], game["card"]
    url = f"/api/electronic/games/{g.pk}/recall/terminal/"
    by_terminal = boss.get(url, {"terminal": terminal.pk}).json()
    by_card = boss.get(url, {"card": card.number}).json()
    assert len(by_terminal["cards"]) == 10 and by_terminal["cards"] == by_card["cards"]
    assert by_terminal["terminal"]["name"] == "Terminal 7" and by_card["player_card"] == card.number
    assert by_terminal["totals"]["spent"] == "5.00"
    nobody = boss.get(url)
    assert nobody.status_code == 400 and nobody.json()["error"]["code"] == "no_subject"
    unknown = boss.get(url, {"terminal": 999999})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_terminal"
    assert boss.get(url, {"card": "0000000000"}).json()["error"]["code"] == "unknown_card"


def test_statistics_as_json_and_csv(operator, venue, game) -> None:
    boss = api_client(operator)
    query = {"venue": venue.pk, "date_from": "2026-11-20", "date_to": "2026-11-20"}
    data = boss.get("/api/electronic/reports/statistics/", query).json()
    (day,) = data["days"]
    assert day["day"] == "2026-11-20" and day["code"] == "E90" and day["games"] == 1
    assert day["played"] == "5.00" and day["cards"] == 10
    paid = Decimal(day["paid"])
    assert day["return_to_players"] == str((paid * 100 / Decimal("5.00")).quantize(Decimal("0.01")))
    sheet = boss.get("/api/electronic/reports/statistics/csv/", query)
    assert sheet.status_code == 200 and sheet["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(sheet.content.decode())))
    assert ["2026-11-20", "E90", "sales", "cards sold", "10", "5.00"] in rows
    one = boss.get("/api/electronic/reports/statistics/", {**query, "speciality": game["speciality"].pk})
    assert one.json()["specialities"][0]["played"] == "5.00"
    backwards = boss.get("/api/electronic/reports/statistics/", {**query, "date_from": "2026-11-21"})
    assert backwards.status_code == 400 and backwards.json()["error"]["code"] == "bad_range"
    assert boss.get("/api/electronic/reports/statistics/", {**query, "speciality": 999999}).status_code == 404


def test_a_cashier_is_refused_and_another_venue_finds_nothing(venue, other_venue, game) -> None:
    g = game["game"]
    clerk = api_client(make_user("clerk", venue, Role.CASHIER))
    assert clerk.get(f"/api/electronic/games/{g.pk}/recall/").status_code == 403
    query = {"venue": venue.pk, "date_from": "2026-11-20", "date_to": "2026-11-20"}
    assert clerk.get("/api/electronic/reports/statistics/", query).status_code == 403
    outsider = api_client(make_user("outsider", other_venue, Role.OPERATOR))
    missing = outsider.get(f"/api/electronic/games/{g.pk}/recall/")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_game"
    assert outsider.get("/api/electronic/reports/statistics/", query).status_code == 404
    assert api_client(None).get(f"/api/electronic/games/{g.pk}/recall/").status_code == 401
