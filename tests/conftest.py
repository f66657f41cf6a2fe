"""Shared fixtures: a venue with staff, a room with an open session, a card series, and a second venue.

Database tests run on PostgreSQL and broker/channel-layer tests on Redis (`make test` points at both);
a run configured for anything else stops here rather than testing the wrong thing.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

from bingo.models import BallSet, CardSeries, Game
from bingo.services import games as game_services
from bingo.services import series as series_services
from halls.models import GameSession, HallCategory, Jurisdiction, Role, Room, Screen, StaffRole, Venue
from halls.services import sessions

ALL_BALLS = list(range(1, 91))
SEED = "0f" * 32


def pytest_configure(config: pytest.Config) -> None:
    engine = settings.DATABASES["default"]["ENGINE"]
    if "postgresql" not in engine:
        raise pytest.UsageError(
            f"The tests run on PostgreSQL, not {engine}: set DATABASE_URL (make test sets "
            "postgres://postgres@127.0.0.1:5432/hall by default)."
        )
    if not settings.REDIS_URL:
        raise pytest.UsageError(
            "The tests need Redis: set REDIS_URL (make test sets redis://127.0.0.1:6379/0)."
        )


@pytest.fixture(autouse=True)
def _fresh_abuse_counters() -> None:
    """Each test starts with no throttle or lockout counts (they live in the Redis cache, under this run's
    own key prefix: nothing else in Redis is touched)."""
    clear_cache()


def clear_cache() -> None:
    from django.core.cache import cache

    prefix = settings.CACHES["default"].get("KEY_PREFIX")
    if not prefix:
        cache.clear()  # this process's memory
        return
    client = cache._cache.get_client(None, write=True)  # type: ignore[attr-defined]
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        client.delete(*keys)


def make_user(username: str, venue: Venue | None = None, role: str | None = None) -> User:
    user = get_user_model().objects.create_user(username=username, password="pw-" + username)
    if venue is not None and role is not None:
        StaffRole.objects.create(user=user, venue=venue, role=role)
    return user


@pytest.fixture
def venue(db: None) -> Venue:
    return Venue.objects.create(
        name="Bingo Melilla Centro",
        licence_number="ML-B-0001",
        jurisdiction=Jurisdiction.ML,
        hall_category=HallCategory.FIRST,
        time_zone="Africa/Ceuta",
        line_percent=Decimal("10"),
        bingo_percent=Decimal("50"),
    )


@pytest.fixture
def operator(venue: Venue) -> User:
    return make_user("operator", venue, Role.OPERATOR)


@pytest.fixture
def caller(venue: Venue) -> User:
    return make_user("caller", venue, Role.CALLER)


@pytest.fixture
def cashier(venue: Venue) -> User:
    return make_user("cashier", venue, Role.CASHIER)


@pytest.fixture
def room(venue: Venue) -> Room:
    return Room.objects.create(venue=venue, name="Sala 1", ball_pace_seconds=Decimal("0.5"))


@pytest.fixture
def screen(room: Room) -> Screen:
    return Screen.objects.create(venue=room.venue, room=room, name="Pantalla principal")


@pytest.fixture
def ball_set(venue: Venue, operator: User) -> BallSet:
    return series_services.create_ball_set(venue=venue, name="Juego 1", actor=operator)


@pytest.fixture
def card_series(venue: Venue, operator: User) -> CardSeries:
    """Ten strips (60 cards) of 2.00 € from a fixed seed, so the cards are the same in every run."""
    return series_services.create_series(
        venue=venue, code="A", face_value=Decimal("2.00"), strips=10, actor=operator, seed=SEED
    )


@pytest.fixture
def session(room: Room, caller: User) -> GameSession:
    return sessions.open_session(
        room=room, actor=caller, blower_ok=True, reserve_ok=True, reader_ok=True, inspection_balls=ALL_BALLS
    )


@pytest.fixture
def manual_game(session: GameSession, room: Room, caller: User, ball_set: BallSet) -> Game:
    """A game drawn by hand (blower and ball reader), scheduled."""
    return game_services.create_game(room=room, actor=caller, draw_source="manual")


@pytest.fixture
def other_venue(db: None) -> Venue:
    return Venue.objects.create(
        name="Bingo Andalucía", licence_number="AN-B-0002", jurisdiction=Jurisdiction.AN10
    )
