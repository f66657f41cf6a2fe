"""Bingo's part of the demo hall: a ball set and card series, created through the bingo services.

Imported by ``halls.demo_seed.seed_demo`` (Django's module autodiscovery), which then calls ``seed_bingo``.
The self-playing room needs nothing more: ``bingo.services.autoplay`` opens its session, creates its own
AUTO- series and plays. The series below are for trying the cashier page and the caller console by hand.
"""

from __future__ import annotations

from decimal import Decimal

from bingo.models import BallSet, CardSeries
from bingo.services import series
from halls.demo_seed import DemoHall, register_seeder

BALL_SET = "Juego 1"
# (code, face value, strips of six cards)
SERIES = (("A", Decimal("1.00"), 50), ("B", Decimal("2.00"), 50))


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


register_seeder(seed_bingo)
