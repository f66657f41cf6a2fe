"""The lab clock (issue 26, halls.services.venueclock) in electronic bingo: a game's close of sales is on
the venue's clock, so a certification lab that sets a venue's clock forward sees the sales close then (a
terminal's purchase refused, the beat closing them) while the real clock has not reached it; the next game
sells for its full window on the venue's clock."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from bingo.electronic.models import EGameState, ElectronicGame
from bingo.electronic.services import games, sales
from halls.errors import DomainError
from halls.models import Venue
from halls.services import venueclock
from tests.bingo.electronic.sales_support import on_sale, selling_game
from tests.bingo.electronic.support import RULES_90, enqueued, make_speciality, open_verified_session

pytestmark = pytest.mark.django_db


def test_a_venue_clock_set_forward_closes_the_electronic_sales(
    venue: Venue, other_venue: Venue, operator: User, cashier: User
) -> None:
    sale = on_sale(venue, operator, cashier)  # its game's sales close in 30 s
    elsewhere = make_speciality(other_venue, operator, code="OTRA")
    open_verified_session(elsewhere, operator)
    other_game = selling_game(elsewhere, close_in=30)
    n = sale.card.number
    assert isinstance(sales.purchase(terminal=sale.terminal, card_number=n, cards=1, key="a"), sales.Bought)
    assert games.tick().closed == []  # due on neither clock yet

    venueclock.move(venue=venue, actor=operator, forward=timedelta(minutes=1))
    with pytest.raises(DomainError) as late:
        sales.purchase(terminal=sale.terminal, card_number=n, cards=1, key="b")
    assert late.value.code == "sales_closed"
    [batched] = sales.purchase_many([sales.Ask(terminal=sale.terminal, card_number=n, cards=1, key="c")])
    assert isinstance(batched, DomainError) and batched.code == "sales_closed"
    # The beat closes them on the venue's clock: the real one is still half a minute before the close.
    assert timezone.now() < sale.game.sales_close_at
    with enqueued():
        done = games.tick()
    assert done.closed == [sale.game.pk]
    closed = ElectronicGame.objects.get(pk=sale.game.pk)
    assert closed.sales_closed_at is not None and closed.cards_sold == 1
    # Another venue's game keeps its own (real) clock.
    other_game.refresh_from_db()
    assert other_game.state == EGameState.SELLING and other_game.sales_closed_at is None

    # The next game's window is the full sale time on the venue's clock, and it sells.
    with enqueued():
        games.set_running(speciality=sale.speciality, running=True, actor=operator)  # opens the next game
    nxt = ElectronicGame.objects.get(speciality=sale.speciality, number=2)
    assert nxt.state == EGameState.SELLING
    window = timedelta(seconds=RULES_90["sale_seconds"])
    assert window - timedelta(seconds=5) < nxt.sales_close_at - venueclock.now(venue.pk) <= window
    assert nxt.sales_close_at - timezone.now() > timedelta(minutes=1)  # past the real clock's by the move
    bought = sales.purchase(terminal=sale.terminal, card_number=n, cards=1, key="d")
    assert isinstance(bought, sales.Bought) and bought.purchase.game_id == nxt.pk
    with enqueued():
        assert games.tick().closed == []
