"""The caller console's answers stay small at a real hall's size: the game view and the console snapshot
never list the sold cards (a paged endpoint does), and the unclaimed winners come cut with their counts."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from bingo.traditional.models import Card, CardSeries, Game, SaleKind, SaleOperation, SoldCard
from bingo.traditional.services import draw, games, readmodels
from bingo.traditional.services.readmodels import UNCLAIMED_SHOWN
from tests.api_support import refused

MAX_ANSWER = 50_000
PER_SERIES = 6_000


def sell_in_bulk(game: Game, template: CardSeries, cashier: Any, total: int) -> None:
    """Sell ``total`` cards in series of 6,000, inserted with bulk_create: copies of ``template``'s cards
    (every stored field, so the grids are real) under keys of their own."""
    cards = list(Card.objects.filter(series=template).order_by("serial"))
    copied = [
        f.attname for f in Card._meta.concrete_fields if f.attname not in ("id", "series_id", "serial", "key")
    ]
    now = timezone.now()
    made = 0
    while made < total:
        count = min(PER_SERIES, total - made)
        series = CardSeries.objects.create(
            venue=template.venue,
            code=f"S{made // PER_SERIES:02d}",
            face_value=Decimal("1.00"),
            strips=(count + 5) // 6,
            seed=template.seed,
            created_at=now,
            created_by=cashier,
        )
        rows = Card.objects.bulk_create(
            Card(
                series=series,
                serial=i + 1,
                key=f"{made + i:023x}",
                **{name: getattr(cards[i % len(cards)], name) for name in copied},
            )
            for i in range(count)
        )
        sale = SaleOperation.objects.create(
            game=game,
            series=series,
            kind=SaleKind.SELL,
            first_serial=1,
            last_serial=count,
            cards=count,
            amount=Decimal(count),
            cashier=cashier,
            created_at=now,
        )
        SoldCard.objects.bulk_create(SoldCard(game=game, card=c, card_key=c.key, sale=sale) for c in rows)
        made += count


def test_the_game_view_stays_small_with_20000_cards_sold(
    caller_api: APIClient, on_sale: Game, card_series: CardSeries, caller: Any, cashier: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    sell_in_bulk(on_sale, card_series, cashier, 20_000)
    game = games.start_draw(game=games.close_sales(game=on_sale, actor=caller), actor=caller)
    # The first template card's numbers first: each of its ~333 copies then has a line, whatever the seed.
    first = Card.objects.filter(series=card_series).order_by("serial").first()
    assert first is not None
    balls = list(bytes(first.numbers))
    balls += [n for n in range(1, 91) if n not in balls][: 40 - len(balls)]
    for number in balls:
        draw.enter_ball(game=game, number=number, actor=caller)

    answer = caller_api.get(f"/api/games/{game.pk}/")
    assert answer.status_code == 200
    assert len(answer.content) <= MAX_ANSWER, len(answer.content)
    view = answer.json()
    assert (view["cards_sold"], view["sales_total"]) == (20_000, "20000.00")
    # The sold cards are summarised as ranges (one per series here), never listed.
    assert [s["ranges"] for s in view["announcement"]["series"]] == [[[1, 6000]]] * 3 + [[[1, 2000]]]
    assert not any(isinstance(v, list) and len(v) > UNCLAIMED_SHOWN for v in view.values())
    # 40 balls on 333 copies of each of 60 cards: hundreds of lines, the first 50 shown, all counted.
    unclaimed = view["unclaimed"]
    assert unclaimed["ordinal"] == 40
    assert unclaimed["line_count"] > UNCLAIMED_SHOWN
    assert len(unclaimed["line"]) == UNCLAIMED_SHOWN
    assert unclaimed["line"] == sorted(
        unclaimed["line"], key=lambda r: (r["since_ball"], r["series"], r["serial"])
    )
    # The capped list is the head of the whole list, and the counts are the whole list's.
    whole = readmodels.unclaimed_winners(game)
    assert unclaimed["line"] == whole["line"][:UNCLAIMED_SHOWN]
    assert unclaimed["bingo"] == whole["bingo"][:UNCLAIMED_SHOWN]
    assert (unclaimed["line_count"], unclaimed["bingo_count"]) == (len(whole["line"]), len(whole["bingo"]))
    # The embedded hall's path (the cards looked up in batches, ordered in Python) lists the same.
    with monkeypatch.context() as m:
        m.setattr(connection, "vendor", "sqlite")
        assert readmodels.unclaimed_winners(game) == whole
        shown = readmodels.unclaimed(game, limit=UNCLAIMED_SHOWN)
        assert {"ordinal": unclaimed["ordinal"], **shown} == unclaimed

    snapshot = caller_api.get(f"/api/rooms/{game.room_id}/console/")
    assert snapshot.status_code == 200
    assert len(snapshot.content) <= MAX_ANSWER, len(snapshot.content)
    assert snapshot.json()["game"]["unclaimed"] == unclaimed

    first = caller_api.get(f"/api/games/{game.pk}/sold-cards/?limit=2000").json()
    assert first["count"] == 20_000
    assert (first["results"][0], first["results"][-1], first["next"]) == (
        {"series": "S00", "serial": 1},
        {"series": "S00", "serial": 2000},
        "S00:2000",
    )


def test_sold_cards_are_paged_in_series_and_serial_order(
    cashier_api: APIClient, caller_api: APIClient, drawing: Game, other_caller: Any
) -> None:
    seen: list[tuple[str, int]] = []
    after = ""
    for _ in range(10):
        page = cashier_api.get(f"/api/games/{drawing.pk}/sold-cards/?limit=8{after}").json()
        assert page["count"] == 30
        seen += [(row["series"], row["serial"]) for row in page["results"]]
        if page["next"] is None:
            break
        after = f"&after={page['next']}"
    assert seen == [("A", serial) for serial in range(1, 31)]
    assert caller_api.get(f"/api/games/{drawing.pk}/sold-cards/?after=A:28").json()["results"] == [
        {"series": "A", "serial": 29},
        {"series": "A", "serial": 30},
    ]
    refused(caller_api.get(f"/api/games/{drawing.pk}/sold-cards/?after=A-3"), 400, "invalid")
    refused(caller_api.get(f"/api/games/{drawing.pk}/sold-cards/?limit=5000"), 400, "invalid")


def test_the_console_snapshot_is_the_callers(
    caller_api: APIClient, cashier_api: APIClient, drawing: Game, caller: Any
) -> None:
    draw.enter_ball(game=drawing, number=12, actor=caller)
    snapshot = caller_api.get(f"/api/rooms/{drawing.room_id}/console/").json()
    room = f"room.{drawing.room_id}"
    assert set(snapshot["streams"]) == {room, f"{room}.staff"}
    assert snapshot["streams"][room] > 0
    assert snapshot["room"]["current_game"] == drawing.pk
    assert snapshot["game"]["id"] == drawing.pk
    assert [b["ball"] for b in snapshot["game"]["balls"]] == [12]
    assert snapshot["game"]["claims_count"] == 0
    assert "sold_cards" not in json.dumps(snapshot)
    seqs = caller_api.get(f"/api/rooms/{drawing.room_id}/console/seq/").json()
    assert seqs == {"streams": snapshot["streams"]}
    refused(cashier_api.get(f"/api/rooms/{drawing.room_id}/console/"), 403, "role_required", "caller")
    refused(cashier_api.get(f"/api/rooms/{drawing.room_id}/console/seq/"), 403, "role_required")
