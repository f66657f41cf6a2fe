"""Card series and ball sets of a venue."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from decimal import Decimal

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import Field
from django.utils import timezone

from bingo import cardgen
from bingo.balls import colour_problems, default_colours
from bingo.cards import CardGrid, security_code_of_key
from bingo.models import BallSet, Card, CardSeries
from halls.errors import Conflict, InvalidInput
from halls.models import Venue
from halls.services import audit

MAX_STRIPS = 20_000  # 120,000 cards
_ORM_BATCH = 2000  # cards per INSERT where COPY is not available (SQLite)


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
    generated = cardgen.generate_series(seed.encode(), strips)
    rederived = [list(pair) for pair in generated.rederived]
    try:
        with transaction.atomic():
            series = CardSeries.objects.create(
                venue=venue,
                code=code,
                face_value=face_value,
                strips=strips,
                seed=seed,
                generator=cardgen.CURRENT,
                rederived_strips=rederived,
                created_at=timezone.now(),
                created_by=actor,
            )
            _insert_cards(series, generated)
            audit.record(
                venue_id=venue.pk,
                actor=actor,
                action="series.created",
                obj=series,
                data={
                    "code": code,
                    "face_value": face_value,
                    "strips": strips,
                    "seed": seed,
                    "generator": cardgen.CURRENT,
                    "rederived_strips": rederived,
                },
            )
    except IntegrityError as exc:
        raise Conflict(f"Venue {venue.name} already has a series {code}.", code="series_exists") from exc
    return series


CardRow = tuple[int, list[list[int | None]], str, bytes, str]


def _card_rows(series: CardSeries, generated: cardgen.GeneratedSeries) -> Iterator[CardRow]:
    """(serial, grid JSON, key, packed numbers, security code) of every card, in serial order."""
    secret = settings.HALL_CARD_SECRET.encode()
    packed = generated.packed()
    for index, (grid, key) in enumerate(zip(generated.rows(), generated.keys(), strict=True)):
        serial = index + 1
        code = security_code_of_key(secret, series.code, serial, key)
        yield serial, grid, key, packed[index].tobytes(), code


def _insert_cards(series: CardSeries, generated: cardgen.GeneratedSeries) -> None:
    """Every card of a new series: one COPY on PostgreSQL, batched INSERTs elsewhere (the embedded SQLite)."""
    rows = _card_rows(series, generated)
    if connection.vendor != "postgresql":
        Card.objects.bulk_create(
            (
                Card(series=series, serial=serial, grid=grid, key=key, numbers=numbers, security_code=code)
                for serial, grid, key, numbers, code in rows
            ),
            batch_size=_ORM_BATCH,
        )
        return
    columns = ", ".join(_column(name) for name in _COPY_FIELDS)
    table = connection.ops.quote_name(Card._meta.db_table)
    with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for serial, grid, key, numbers, code in rows:
            copy.write_row((series.pk, serial, json.dumps(grid), key, numbers, code))


_COPY_FIELDS = ("series", "serial", "grid", "key", "numbers", "security_code")


def _column(name: str) -> str:
    field = Card._meta.get_field(name)
    assert isinstance(field, Field)  # a concrete column, not a relation's reverse side
    return connection.ops.quote_name(field.column)


def master_card(series: CardSeries, serial: int) -> CardGrid:
    """Card `serial` recomputed from the series' seed with the generator that made it (the cartón matriz)."""
    if not 1 <= serial <= series.card_count:
        raise InvalidInput(
            f"Series {series.code} has serials 1–{series.card_count}, not {serial}.", code="bad_serial"
        )
    return cardgen.recompute_card(
        series.generator, series.seed.encode(), serial, cardgen.rederived_pairs(series.rederived_strips)
    )


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
