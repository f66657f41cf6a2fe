"""The demo hall, seeded idempotently: a venue in Melilla, two rooms, their screens and three staff users.

Run by ``manage.py demo`` at every start. What exists is kept (so screen URLs stay the same between
starts); what is missing is created and audited. The staff passwords are new at every start and only
printed. The apps above halls add their part (ball sets, card series...) through ``register_seeder``:
each app's ``demo`` module is imported by ``seed_demo`` and registers itself, so halls names none of them.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils.module_loading import autodiscover_modules

from halls.models import HallCategory, Jurisdiction, Role, Room, Screen, StaffRole, Venue
from halls.services import audit

VENUE_NAME = "Bingo Demo Melilla"
VENUE_LICENCE = "ML-DEMO-0001"
AUTOPLAY_ROOM = "Sala Principal"
MANUAL_ROOM = "Sala 2"
# Seconds between RNG balls in the self-playing room: the first balls arrive within a minute of starting.
AUTOPLAY_PACE = Decimal("3")
STAFF = (("operator", Role.OPERATOR), ("caller", Role.CALLER), ("cashier", Role.CASHIER))
SCREENS = {
    AUTOPLAY_ROOM: ("Pantalla 1 · Sala Principal", "Pantalla 2 · Sala Principal"),
    MANUAL_ROOM: ("Pantalla · Sala 2",),
}


@dataclass
class DemoHall:
    venue: Venue
    rooms: dict[str, Room]
    screens: list[Screen]
    operator: User
    # username -> password, set at this start.
    credentials: dict[str, str] = field(default_factory=dict)
    # Lines the apps' seeders want printed (e.g. the card series on sale).
    notes: list[str] = field(default_factory=list)


Seeder = Callable[[DemoHall], None]
_seeders: list[Seeder] = []
# Something an app runs beside the demo server (e.g. simulated slot machines): called with the hall and
# the server's base URL ("http://127.0.0.1:8000") before the server starts; it must not block (a daemon
# thread that waits for the server to listen) and returns the function that stops it.
Runner = Callable[[DemoHall, str], Callable[[], None]]
_runners: list[Runner] = []


def register_seeder(seeder: Seeder) -> None:
    if seeder not in _seeders:
        _seeders.append(seeder)


def register_runner(runner: Runner) -> None:
    if runner not in _runners:
        _runners.append(runner)


def start_runners(hall: DemoHall, base_url: str) -> Callable[[], None]:
    """Start the apps' runners; returns one function that stops them all (in reverse order)."""
    stops = [runner(hall, base_url) for runner in _runners]

    def stop_all() -> None:
        for stop in reversed(stops):
            stop()

    return stop_all


def seed_demo() -> DemoHall:
    """Create what is missing of the demo hall, reset the staff passwords and run the apps' seeders."""
    autodiscover_modules("demo")
    with transaction.atomic():
        hall = _seed_hall()
    for seeder in _seeders:
        seeder(hall)
    return hall


def _seed_hall() -> DemoHall:
    venue, created = Venue.objects.get_or_create(
        licence_number=VENUE_LICENCE,
        defaults={
            "name": VENUE_NAME,
            "jurisdiction": Jurisdiction.ML,
            "hall_category": HallCategory.FIRST,
            "time_zone": "Africa/Ceuta",
            "currency": "EUR",
        },
    )
    if created:
        _audit(venue, "venue.created", venue, {"name": venue.name, "jurisdiction": venue.jurisdiction})

    users: dict[str, User] = {}
    credentials: dict[str, str] = {}
    for username, role in STAFF:
        user, password = _staff_user(venue, username, role)
        users[username] = user
        credentials[username] = password

    rooms = {
        AUTOPLAY_ROOM: _room(venue, AUTOPLAY_ROOM, autoplay=True, pace=AUTOPLAY_PACE),
        MANUAL_ROOM: _room(venue, MANUAL_ROOM, autoplay=False, pace=Decimal("4")),
    }
    screens = [_screen(rooms[room_name], name) for room_name, names in SCREENS.items() for name in names]
    return DemoHall(
        venue=venue, rooms=rooms, screens=screens, operator=users["operator"], credentials=credentials
    )


def _staff_user(venue: Venue, username: str, role: str) -> tuple[User, str]:
    password = secrets.token_urlsafe(9)
    user, _ = get_user_model().objects.get_or_create(username=username)
    user.set_password(password)
    user.is_active = True
    if role == Role.OPERATOR:
        # The operator also manages the hall in the Django admin.
        user.is_staff = True
        user.is_superuser = True
    user.save()
    _, created = StaffRole.objects.get_or_create(user=user, venue=venue, role=role)
    if created:
        _audit(venue, "staff_role.granted", user, {"user": username, "role": role})
    return user, password


def _room(venue: Venue, name: str, *, autoplay: bool, pace: Decimal) -> Room:
    room, created = Room.objects.get_or_create(
        venue=venue, name=name, defaults={"autoplay": autoplay, "ball_pace_seconds": pace}
    )
    if created:
        _audit(venue, "room.created", room, {"name": name, "autoplay": autoplay, "pace_seconds": pace})
    return room


def _screen(room: Room, name: str) -> Screen:
    screen, created = Screen.objects.get_or_create(venue_id=room.venue_id, room=room, name=name)
    if created:
        _audit(room.venue, "screen.created", screen, {"name": name, "room": room.pk})
    return screen


def _audit(venue: Venue, action: str, obj: object, data: dict[str, object]) -> None:
    audit.record(venue_id=venue.pk, actor="demo", action=action, obj=obj, data=data)
