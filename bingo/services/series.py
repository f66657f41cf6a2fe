"""Card series and ball sets of a venue."""

from __future__ import annotations

import secrets
from decimal import Decimal

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from bingo.balls import colour_problems, default_colours
from bingo.cards import generate_series, pack_numbers, security_code
from bingo.models import BallSet, Card, CardSeries
from halls.errors import Conflict, InvalidInput
from halls.models import Venue
from halls.services import audit

MAX_STRIPS = 1000


def create_series(
    *,
    venue: Venue,
    code: str,
    face_value: Decimal,
    strips: int,
    actor: User,
    seed: str | None = None,
) -> CardSeries:
    """Generate a series of ``strips`` × 6 cards from a seed that is stored, so any card can be recomputed."""
    if not 1 <= strips <= MAX_STRIPS:
        raise InvalidInput(
            f"A series has 1 to {MAX_STRIPS} strips of 6 cards, not {strips}.", code="bad_strips"
        )
    if face_value <= 0:
        raise InvalidInput("The face value of a card must be positive.", code="bad_face_value")
    seed = seed or secrets.token_hex(32)
    grids = generate_series(seed.encode(), strips)
    secret = settings.HALL_CARD_SECRET.encode()
    try:
        with transaction.atomic():
            series = CardSeries.objects.create(
                venue=venue,
                code=code,
                face_value=face_value,
                strips=strips,
                seed=seed,
                created_at=timezone.now(),
                created_by=actor,
            )
            Card.objects.bulk_create(
                Card(
                    series=series,
                    serial=serial,
                    grid=grid.to_json(),
                    key=grid.key(),
                    numbers=pack_numbers(grid),
                    security_code=security_code(secret, code, serial, grid),
                )
                for serial, grid in enumerate(grids, start=1)
            )
            audit.record(
                venue_id=venue.pk,
                actor=actor,
                action="series.created",
                obj=series,
                data={"code": code, "face_value": face_value, "strips": strips, "seed": seed},
            )
    except IntegrityError as exc:
        raise Conflict(f"Venue {venue.name} already has a series {code}.", code="series_exists") from exc
    return series


def create_ball_set(
    *, venue: Venue, name: str, actor: User, colours: dict[str, str] | None = None
) -> BallSet:
    colours = colours or default_colours()
    problems = colour_problems(colours)
    if problems:
        raise InvalidInput("Bad ball set: " + "; ".join(problems) + ".", code="bad_ball_set")
    try:
        with transaction.atomic():
            ball_set = BallSet.objects.create(venue=venue, name=name, colours=colours)
            audit.record(
                venue_id=venue.pk, actor=actor, action="ball_set.created", obj=ball_set, data=colours
            )
    except IntegrityError as exc:
        raise Conflict(f"Venue {venue.name} already has a ball set {name}.", code="ball_set_exists") from exc
    return ball_set
