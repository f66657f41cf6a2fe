"""Two tills printing a player's cards at the table from the same series at the same moment (PostgreSQL,
threads with their own connections): both succeed, with different cards; no card is sold or printed twice.
The next unsold cards are chosen under the series' lock (bingo.traditional.services.locks.lock_series)."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from bingo.traditional.models import BallSet, CardSeries, Game, PrintedCards, SaleOperation, SoldCard
from bingo.traditional.services import games, paper
from halls.cashier.models import Till
from halls.models import Role, Room, Venue
from halls.services import sessions
from tests.cashier_support import on_shift, till_of
from tests.conftest import ALL_BALLS, make_user
from tests.threads import in_threads

pytestmark = pytest.mark.django_db(transaction=True)
PRINTS = 6  # each till, one after the other
COUNT = 3  # cards a print


def second_game(venue: Venue, caller: User) -> Game:
    room = Room.objects.create(venue=venue, name="Sala 2", ball_pace_seconds=Decimal("0.5"))
    sessions.open_session(
        room=room, actor=caller, blower_ok=True, reserve_ok=True, reader_ok=True, inspection_balls=ALL_BALLS
    )
    return games.open_sales(
        game=games.create_game(room=room, actor=caller, draw_source="manual"), actor=caller
    )


def two_tills(venue: Venue) -> list[tuple[User, Till]]:
    tills = []
    for name in ("caja-a", "caja-b"):
        user = make_user(name, venue, Role.CASHIER)
        till = till_of(venue, f"Caja {name}")
        on_shift(user, venue, till=till)
        tills.append((user, till))
    return tills


@pytest.mark.parametrize("same_game", [True, False], ids=["one game", "two games"])
def test_two_tills_printing_from_one_series_at_once_both_get_different_cards(
    venue: Venue,
    caller: User,
    ball_set: BallSet,
    manual_game: Game,
    card_series: CardSeries,
    same_game: bool,
) -> None:
    first = games.open_sales(game=manual_game, actor=caller)
    other = first if same_game else second_game(venue, caller)
    done: list[tuple[int, int, int]] = []
    guard = threading.Lock()

    def till_prints(user: User, till: Till, game: Game) -> None:
        for _ in range(PRINTS):
            printed = paper.print_at_table(
                game=game, series=card_series, count=COUNT, actor=user, till=till, base_url="http://x/"
            )
            with guard:
                done.append((game.pk, printed.sale.first_serial, printed.sale.last_serial))

    (a, till_a), (b, till_b) = two_tills(venue)
    errors = in_threads([lambda: till_prints(a, till_a, first), lambda: till_prints(b, till_b, other)])
    assert not errors, [repr(e.args) for e in errors]
    assert len(done) == 2 * PRINTS
    serials = [n for _g, lo, hi in done for n in range(lo, hi + 1)]
    assert len(serials) == len(set(serials)) == 2 * PRINTS * COUNT  # no card twice
    assert sorted(serials) == list(range(1, 2 * PRINTS * COUNT + 1))  # the lowest, none skipped
    assert SoldCard.objects.filter(card__series=card_series).count() == 2 * PRINTS * COUNT
    assert SaleOperation.objects.count() == PrintedCards.objects.count() == 2 * PRINTS
    for game_id, lo, hi in done:
        assert (
            SoldCard.objects.filter(
                game_id=game_id, card__series=card_series, card__serial__range=(lo, hi)
            ).count()
            == COUNT
        )
