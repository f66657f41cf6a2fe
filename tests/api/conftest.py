"""API clients per role (token auth), games in each state, another venue, and "nothing was written" checks."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.db.models import Model
from rest_framework.test import APIClient

from bingo.traditional.models import (
    Award,
    Ball,
    Card,
    CardSeries,
    Claim,
    Game,
    PrizeResult,
    SaleOperation,
    SoldCard,
)
from bingo.traditional.services import games, sales
from bingo.traditional.services import series as series_services
from halls.models import AuditEntry, GameSession, Role, Room, Venue
from halls.services import sessions
from tests.api_support import api_client
from tests.conftest import ALL_BALLS, make_user

# Every table a command of the API may write; AuditEntry catches any write that decides money or play.
WRITTEN: list[type[Model]] = [
    GameSession,
    Game,
    CardSeries,
    Card,
    SaleOperation,
    SoldCard,
    Ball,
    Claim,
    PrizeResult,
    Award,
    AuditEntry,
]


def row_counts() -> dict[str, int]:
    return {model.__name__: model._default_manager.count() for model in WRITTEN}


@contextmanager
def nothing_written() -> Iterator[None]:
    """Assert that the block leaves every table the API writes as it found it."""
    before = row_counts()
    yield
    assert row_counts() == before


@pytest.fixture
def caller_api(caller: User) -> APIClient:
    return api_client(caller)


@pytest.fixture
def cashier_api(cashier: User) -> APIClient:
    return api_client(cashier)


@pytest.fixture
def operator_api(operator: User) -> APIClient:
    return api_client(operator)


@pytest.fixture
def anonymous_api(db: None) -> APIClient:
    return APIClient()


@pytest.fixture
def on_sale(manual_game: Game, caller: User, card_series: CardSeries) -> Game:
    return games.open_sales(game=manual_game, actor=caller)


@pytest.fixture
def drawing(on_sale: Game, caller: User, cashier: User, card_series: CardSeries) -> Game:
    """A manual game drawing, cards 1–30 of series A sold (line 6.00, bingo 30.00)."""
    sales.sell_range(game=on_sale, series=card_series, first=1, last=30, actor=cashier)
    game = games.close_sales(game=on_sale, actor=caller)
    return games.start_draw(game=game, actor=caller)


# --- Another venue, with its own staff, room, series and game ------------------------------------------


@pytest.fixture
def other_caller(other_venue: Venue) -> User:
    return make_user("other-caller", other_venue, Role.CALLER)


@pytest.fixture
def other_room(other_venue: Venue) -> Room:
    return Room.objects.create(venue=other_venue, name="Sala Sur")


@pytest.fixture
def other_series(other_venue: Venue) -> CardSeries:
    owner = make_user("other-operator", other_venue, Role.OPERATOR)
    return series_services.create_series(
        venue=other_venue, code="B", face_value=Decimal("2.00"), strips=1, actor=owner
    )


@pytest.fixture
def other_game(other_room: Room, other_caller: User) -> Game:
    sessions.open_session(
        room=other_room,
        actor=other_caller,
        blower_ok=True,
        reserve_ok=True,
        reader_ok=True,
        inspection_balls=ALL_BALLS,
    )
    return games.create_game(room=other_room, actor=other_caller, draw_source="manual")
