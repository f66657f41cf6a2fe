"""A traditional game played with a known ball sequence pays Line and Bingo as spec §2 says."""

from __future__ import annotations

from decimal import Decimal

import pytest

from bingo.cards import CardGrid
from bingo.traditional.models import Card, GameState, PrizeResult
from bingo.traditional.services import claims, draw, games, sales
from halls.errors import Conflict


def grid(card: Card) -> CardGrid:
    return CardGrid.from_json(card.grid)


def test_known_sequence_pays_line_and_bingo(manual_game, card_series, caller, cashier):
    game = games.open_sales(game=manual_game, actor=caller)
    sales.sell_range(game=game, series=card_series, first=1, last=30, actor=cashier)
    game = games.close_sales(game=game, actor=caller)
    assert game.cards_sold == 30
    assert game.sales_total == Decimal("60.00")
    assert game.line_prize == Decimal("6.00")
    assert game.bingo_prize == Decimal("30.00")
    games.start_draw(game=game, actor=caller)

    card = Card.objects.get(series=card_series, serial=7)
    top_row = sorted(n for n in grid(card).rows[0] if n)
    for number in top_row:
        draw.enter_ball(game=game, number=number, actor=caller)
    claim = claims.file_claim(game=game, kind="line", series_code="A", serial=7, actor=caller)
    assert claim.valid, claim.reason
    game.refresh_from_db()
    assert game.state == GameState.PAUSED
    result = claims.confirm_claims(game=game, kind="line", actor=caller)
    assert (result.amount, result.winners, result.share, result.remainder) == (
        Decimal("6.00"),
        1,
        Decimal("6.00"),
        Decimal("0.00"),
    )
    rest = sorted(grid(card).numbers - set(top_row))
    for number in rest:
        draw.enter_ball(game=game, number=number, actor=caller)
    bingo = claims.file_claim(game=game, kind="bingo", series_code="A", serial=7, actor=caller)
    assert bingo.valid
    claims.confirm_claims(game=game, kind="bingo", actor=caller)
    game.refresh_from_db()
    assert game.state == GameState.CLOSED
    assert PrizeResult.objects.get(game=game, kind="bingo").share == Decimal("30.00")
    with pytest.raises(Conflict) as refused:
        claims.file_claim(game=game, kind="bingo", series_code="A", serial=7, actor=caller)
    assert refused.value.code == "game_closed"
