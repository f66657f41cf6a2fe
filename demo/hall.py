"""The demo hall, seeded idempotently: a venue in Melilla, two rooms (one self-playing), their screens,
four staff users (an inspector among them), and bingo's part: a ball set, each room's drawing devices (what
the caller's opening checks ask about), card series and three prize programs.

What exists is kept (so screen URLs stay the same between starts); what is missing is created through
the services, or audited. The staff passwords are new at every start and only printed.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction

from bingo.traditional.models import BallSet, CardSeries, DrawDevice, DrawDeviceKind, PrizeProgram
from bingo.traditional.services import devices, programs, series
from demo.actors import robot_shift
from demo.models import AutoplayRoom
from halls.cashier.models import Till
from halls.models import AuditEntry, HallCategory, Jurisdiction, Role, Room, Screen, StaffRole, Venue
from halls.services import audit, voice

VENUE_NAME = "Bingo Demo Melilla"
VENUE_LICENCE = "ML-DEMO-0001"
AUTOPLAY_ROOM = "Sala Principal"
MANUAL_ROOM = "Sala 2"
# Seconds between RNG balls in the self-playing room: the first balls arrive within a minute of starting.
AUTOPLAY_PACE = Decimal("3")
# The inspector reads every page and report of the venue and writes nothing (the regulator's role).
STAFF = (
    ("operator", Role.OPERATOR),
    ("caller", Role.CALLER),
    ("cashier", Role.CASHIER),
    ("inspector", Role.INSPECTOR),
    # The door staff: /admission/ and nothing else (demo.door seeds a small register to try it with).
    ("door", Role.DOOR),
)
SCREENS = {
    AUTOPLAY_ROOM: ("Pantalla 1 · Sala Principal", "Pantalla 2 · Sala Principal"),
    MANUAL_ROOM: ("Pantalla · Sala 2",),
}

# Each room's drawing devices (TB-30, TB-31): (name, kind, reserve). The self-playing room draws with the
# RNG, a blower in reserve; "Sala 2" is played by hand: a blower whose balls the reader reads and the caller
# enters, another blower in reserve. The caller's opening checks (blower, reserve, reader) are about these.
DEVICES: dict[str, tuple[tuple[str, str, bool], ...]] = {
    AUTOPLAY_ROOM: (
        ("Generador aleatorio", DrawDeviceKind.RNG, False),
        ("Bombo de reserva", DrawDeviceKind.PNEUMATIC, True),
    ),
    MANUAL_ROOM: (
        ("Bombo 1", DrawDeviceKind.PNEUMATIC, False),
        ("Bombo 2 (reserva)", DrawDeviceKind.TURBINE, True),
    ),
}
# A room whose games come from elsewhere (the network demo's "Sala Red": the central's balls) still has the
# blower its opening checks are about.
BLOWER_ONLY: tuple[tuple[str, str, bool], ...] = (
    ("Bombo 1", DrawDeviceKind.PNEUMATIC, False),
    ("Bombo 2 (reserva)", DrawDeviceKind.TURBINE, True),
)

# Bingo: the series are for trying the cashier page and the console by hand (the self-playing room
# makes its own AUTO- series).
BALL_SET = "Juego 1"
# (code, face value, strips of six cards)
SERIES = (("A", Decimal("1.00"), 50), ("B", Decimal("2.00"), 50))
AUTHORISATION = "DEMO"  # the percentages are plausible, not authorised
# The self-playing room's prize programs (bolsa acumulada, spec §2.4), each funded from every game's sales:
# (code, type, name, parameters as bingo.traditional.programs.rules.make_program takes them).
PROGRAMS: tuple[tuple[str, str, str, dict[str, object]], ...] = (
    # In play in the game after its pool reaches 30 €: a Bingo within 48 balls wins it.
    ("PRIMA", "BA-1", "Prima", {"funding_percent": "3", "amount": "30", "authorisation_ref": AUTHORISATION}),
    # In every game, the max ball from the cards-sold scale (44 … 40); pays the pool less the 20 % seed.
    ("ACUMULADO", "BA-3", "Bingo Acumulado", {"funding_percent": "2", "authorisation_ref": AUTHORISATION}),
    # The first game after 20:00 and 00:00 (Melilla time) once its pool holds the regulation's 12,000 €:
    # the screens show its "next game" notices and its pool growing, rarely the prize itself.
    (
        "EXTRA-12-2",
        "BA-8",
        "Bingo Extra 12/2",
        {"funding_percent": "1", "authorisation_ref": AUTHORISATION},
    ),
)


@dataclass
class DemoHall:
    venue: Venue
    rooms: dict[str, Room]
    screens: list[Screen]
    operator: User
    # username -> password, set at this start.
    credentials: dict[str, str] = field(default_factory=dict)
    # Lines the banner prints (e.g. the card series on sale).
    notes: list[str] = field(default_factory=list)
    # Pks of the rooms that play by themselves.
    self_playing: set[int] = field(default_factory=set)
    # Player terminal pages a person can open: (label, path with the device's #id:token, its player card).
    terminal_pages: list[tuple[str, str, str]] = field(default_factory=list)
    # Those pages' terminals: (device id, token), for the demo to say hello for them before the verification.
    page_devices: list[tuple[int, str]] = field(default_factory=list)


def seed_hall(
    *,
    name: str = VENUE_NAME,
    licence: str = VENUE_LICENCE,
    self_playing: bool = True,
    pace: Decimal = AUTOPLAY_PACE,
) -> DemoHall:
    """The venue `licence` (created as `name` when missing), its staff, rooms and screens. `self_playing`:
    "Sala Principal" plays by itself from the start (the network demo turns it on later, demo.network)."""
    with transaction.atomic():
        hall = _seed_hall(name, licence, self_playing, pace)
    choose_audio_screens(hall)
    robot_shift(hall.venue)  # the self-playing room's sales are cash in its robot cashier's drawer
    # The people's till: the demo's cashier opens a shift there (the robots' tills are taken).
    Till.objects.get_or_create(venue=hall.venue, name="Caja 1")
    return hall


def _seed_hall(name: str, licence: str, self_playing: bool, pace: Decimal) -> DemoHall:
    venue, created = Venue.objects.get_or_create(
        licence_number=licence,
        defaults={
            "name": name,
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
        AUTOPLAY_ROOM: _room(venue, AUTOPLAY_ROOM, autoplay=self_playing, pace=pace),
        MANUAL_ROOM: _room(venue, MANUAL_ROOM, autoplay=False, pace=Decimal("4")),
    }
    screens = [_screen(rooms[room_name], name) for room_name, names in SCREENS.items() for name in names]
    return DemoHall(
        venue=venue,
        rooms=rooms,
        screens=screens,
        operator=users["operator"],
        credentials=credentials,
        self_playing={rooms[AUTOPLAY_ROOM].pk} if self_playing else set(),
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
    room, created = Room.objects.get_or_create(venue=venue, name=name, defaults={"ball_pace_seconds": pace})
    if created:
        _audit(venue, "room.created", room, {"name": name, "autoplay": autoplay, "pace_seconds": pace})
    if autoplay:
        # Made again at every start: a database from before demo.AutoplayRoom gets its flag back.
        AutoplayRoom.objects.get_or_create(room=room)
    return room


def _screen(room: Room, name: str) -> Screen:
    screen, created = Screen.objects.get_or_create(venue_id=room.venue_id, room=room, name=name)
    if created:
        _audit(room.venue, "screen.created", screen, {"name": name, "room": room.pk})
    return screen


def choose_audio_screens(hall: DemoHall) -> None:
    """Each room's first screen says the balls (the caller's voice, `make voice`), once: a room whose audio
    screen was ever chosen (the setup page) keeps that choice. A transaction of its own (the service locks
    the room, which comes before the audit chain the seed has written to)."""
    chosen = set(
        AuditEntry.objects.filter(venue=hall.venue, action="room.audio_screen_chosen").values_list(
            "object_id", flat=True
        )
    )
    for screen in hall.screens:
        room = next(r for r in hall.rooms.values() if r.pk == screen.room_id)
        if str(room.pk) not in chosen:
            voice.choose_audio_screen(room=room, screen=screen, actor="demo")
            chosen.add(str(room.pk))


def _audit(venue: Venue, action: str, obj: object, data: dict[str, object]) -> None:
    audit.record(venue_id=venue.pk, actor="demo", action=action, obj=obj, data=data)


# --- bingo ----------------------------------------------------------------------------------------------


def seed_bingo(hall: DemoHall) -> None:
    venue = hall.venue
    for room_name, room_devices in DEVICES.items():
        seed_devices(hall.rooms[room_name], room_devices, hall.operator)
    if not BallSet.objects.filter(venue=venue).exists():
        series.create_ball_set(venue=venue, name=BALL_SET, actor=hall.operator)
    for code, face_value, strips in SERIES:
        if not CardSeries.objects.filter(venue=venue, code=code).exists():
            series.create_series(
                venue=venue, code=code, face_value=face_value, strips=strips, actor=hall.operator
            )
    for card_series in (
        CardSeries.objects.filter(venue=venue).exclude(code__startswith="AUTO-").order_by("code")
    ):
        hall.notes.append(
            f"card series {card_series.code}: {card_series.card_count} cards of {card_series.face_value} "
            f"{venue.currency} (serials 1–{card_series.card_count})"
        )
    seed_programs(hall)


def seed_devices(room: Room, wanted: tuple[tuple[str, str, bool], ...], actor: User) -> None:
    """The room's drawing devices, each registered once (through the service: audited)."""
    have = set(DrawDevice.objects.filter(room=room).values_list("name", flat=True))
    for name, kind, reserve in wanted:
        if name not in have:
            devices.register_device(room=room, name=name, kind=kind, reserve=reserve, actor=actor)


def seed_programs(hall: DemoHall) -> None:
    """The self-playing room's prize programs, activated once (a restart keeps their pools and steps)."""
    room = hall.rooms[AUTOPLAY_ROOM]
    for code, program_type, name, params in PROGRAMS:
        if not PrizeProgram.objects.filter(room=room, code=code).exists():
            programs.activate_program(
                room=room, code=code, program_type=program_type, params=params, name=name, actor=hall.operator
            )
    active = PrizeProgram.objects.filter(room=room, active=True).order_by("pk")
    hall.notes.append(
        f"prize programs in {room.name}: " + ", ".join(f"{p.name} ({p.program_type})" for p in active)
    )
