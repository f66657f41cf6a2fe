"""Bingo's part of the demo hall: a ball set, card series and three accumulated prizes, through the services.

Imported by ``halls.demo_seed.seed_demo`` (Django's module autodiscovery), which then calls ``seed_bingo``.
The self-playing room needs nothing more: ``bingo.services.autoplay`` opens its session, creates its own
AUTO- series and plays. The series below are for trying the cashier page and the caller console by hand.

The self-playing room also runs three prize programs (bolsa acumulada, spec §2.4), each funded from every
game's sales into its own pool, so the screens show them with the Line and Bingo prizes:
- a Prima of 30 € (BA-1): in play in the game after its pool reaches 30 €, a Bingo within 48 balls wins it;
- the Bingo Acumulado (BA-3): in play in every game, the max ball from the cards-sold scale (44 … 40),
  paying the pool less the 20 % that seeds the next one;
- the scheduled Bingo Extra 12/2 Escalado (BA-8): the first game after 20:00 and 00:00 (Melilla time)
  once its pool holds the 12,000 € of the regulation, so the demo shows its "next game" notices at those
  hours and its pool growing, rarely the prize itself.
The percentages are plausible, not authorised: the authorisation reference is "DEMO".
"""

from __future__ import annotations

from decimal import Decimal

from bingo.models import BallSet, CardSeries, PrizeProgram
from bingo.services import programs, series
from halls.demo_seed import AUTOPLAY_ROOM, DemoHall, register_seeder

BALL_SET = "Juego 1"
# (code, face value, strips of six cards)
SERIES = (("A", Decimal("1.00"), 50), ("B", Decimal("2.00"), 50))
AUTHORISATION = "DEMO"
# (code, type, name, parameters): what bingo.programs.rules.make_program takes.
PROGRAMS: tuple[tuple[str, str, str, dict[str, object]], ...] = (
    ("PRIMA", "BA-1", "Prima", {"funding_percent": "3", "amount": "30", "authorisation_ref": AUTHORISATION}),
    ("ACUMULADO", "BA-3", "Bingo Acumulado", {"funding_percent": "2", "authorisation_ref": AUTHORISATION}),
    (
        "EXTRA-12-2",
        "BA-8",
        "Bingo Extra 12/2",
        {"funding_percent": "1", "authorisation_ref": AUTHORISATION},
    ),
)


def seed_bingo(hall: DemoHall) -> None:
    venue = hall.venue
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


register_seeder(seed_bingo)
