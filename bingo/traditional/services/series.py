"""Card series and ball sets of a venue."""

from __future__ import annotations

import secrets
from decimal import Decimal

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import Field
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo import cardgen
from bingo.cards import CardGrid, security_codes
from bingo.traditional.models import BallSet, Card, CardSeries
from bingo.traditional.services import ballsets
from halls.errors import Conflict, InvalidInput
from halls.models import Venue
from halls.services import audit

IMPORTED = "imported"  # CardSeries.generator of a series read from a printer's or authority's file
MAX_STRIPS = 20_000  # 120,000 cards
_ORM_BATCH = 2000  # cards per INSERT where COPY is not available (SQLite)
_COPY_CHUNK = 5000  # cards per write to the COPY stream


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
            _("A series has 1 to %(max_strips)s strips of 6 cards, not %(strips)s.")
            % {"max_strips": MAX_STRIPS, "strips": strips},
            code="bad_strips",
        )
    if face_value <= 0:
        raise InvalidInput(_("The face value of a card must be positive."), code="bad_face_value")
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
        raise Conflict(
            _("Venue %(name)s already has a series %(code)s.") % {"name": venue.name, "code": code},
            code="series_exists",
        ) from exc
    return series


def create_series_share(
    *,
    venue: Venue,
    code: str,
    face_value: Decimal,
    strips: int,
    first_serial: int,
    last_serial: int,
    seed: str,
    rederived: list[list[int]],
    actor: User,
) -> tuple[CardSeries, str]:
    """A hall's share of another installation's series (a simultaneous game's network series: `strips` in
    all, v2, its stored `rederived`): only the cards `first_serial`..`last_serial` (whole strips) are made
    and stored, each the same card as the whole series' (cardgen.generate_strips), any card recomputable
    from the seed. Returns the series and the digest of the cards made (cardgen.faces_digest), for the
    caller to check against the series' owner's."""
    if not 1 <= strips <= MAX_STRIPS or (first_serial - 1) % 6 or last_serial % 6:
        raise InvalidInput(_("A share of a series is whole strips of it."), code="bad_strips")
    if not 1 <= first_serial <= last_serial <= strips * 6:
        raise InvalidInput(_("A share of a series is whole strips of it."), code="bad_strips")
    first_strip, count = (first_serial - 1) // 6, (last_serial - first_serial + 1) // 6
    generated = cardgen.generate_strips(seed.encode(), first_strip, count, cardgen.rederived_pairs(rederived))
    try:
        with transaction.atomic():
            series = CardSeries.objects.create(
                venue=venue,
                code=code,
                face_value=face_value,
                strips=strips,
                seed=seed,
                generator=cardgen.V2,
                rederived_strips=rederived,
                created_at=timezone.now(),
                created_by=actor,
            )
            _insert_cards(series, generated, first_serial=first_serial)
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
                    "generator": cardgen.V2,
                    "rederived_strips": rederived,
                    "cards_made": [first_serial, last_serial],
                },
            )
    except IntegrityError as exc:
        raise Conflict(
            _("Venue %(name)s already has a series %(code)s.") % {"name": venue.name, "code": code},
            code="series_exists",
        ) from exc
    return series, cardgen.faces_digest(generated.keys())


def _insert_cards(
    series: CardSeries,
    generated: cardgen.GeneratedSeries,
    given_codes: list[str] | None = None,
    *,
    first_serial: int = 1,
) -> None:
    """Every card of a new series (or of its share from `first_serial` on): one COPY on PostgreSQL, batched
    INSERTs elsewhere (the embedded SQLite).

    ``given_codes`` (an imported series): the security code printed on each card, "" where the hall computes
    its own."""
    secret = settings.HALL_CARD_SECRET.encode()
    offset = first_serial - 1

    def codes_of(keys: list[str], first: int) -> list[str]:
        codes = security_codes(secret, series.code, keys, first_serial=offset + first + 1)
        if given_codes is None:
            return codes
        given = given_codes[first : first + len(keys)]
        return [mine or computed for mine, computed in zip(given, codes, strict=True)]

    if connection.vendor != "postgresql":
        keys = generated.keys()
        codes = codes_of(keys, 0)
        Card.objects.bulk_create(
            (
                Card(
                    series=series,
                    serial=offset + i + 1,
                    grid=grid,
                    key=key,
                    numbers=numbers,
                    security_code=code,
                )
                for i, (grid, key, numbers, code) in enumerate(
                    zip(generated.rows(), keys, generated.packed(), codes, strict=True)
                )
            ),
            batch_size=_ORM_BATCH,
        )
        return
    columns = ", ".join(
        _column(name) for name in ("series", "serial", "grid", "key", "numbers", "security_code")
    )
    table = connection.ops.quote_name(Card._meta.db_table)
    with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        # Chunk by chunk, so the server stores one chunk while the next one's codes are computed.
        for first in range(0, len(generated), _COPY_CHUNK):
            chunk = cardgen.GeneratedSeries(generated.grids[first : first + _COPY_CHUNK], ())
            keys = chunk.keys()
            codes = codes_of(keys, first)
            # COPY's text format: tab-separated, a card a line; bytea as \x + hex, its backslash doubled.
            copy.write(
                "".join(
                    f"{series.pk}\t{serial}\t{grid}\t{key}\t\\\\x{numbers}\t{code}\n"
                    for serial, grid, key, numbers, code in zip(
                        range(offset + first + 1, offset + first + len(chunk) + 1),
                        chunk.grid_texts(),
                        keys,
                        chunk.packed_hex(),
                        codes,
                        strict=True,
                    )
                )
            )


def _column(name: str) -> str:
    field = Card._meta.get_field(name)
    assert isinstance(field, Field)  # a concrete column, not a relation's reverse side
    return connection.ops.quote_name(field.column)


def master_card(series: CardSeries, serial: int) -> CardGrid:
    """Card `serial` recomputed from the series' seed with the generator that made it (the cartón matriz)."""
    if not 1 <= serial <= series.card_count:
        raise InvalidInput(
            _("Series %(code)s has serials 1–%(card_count)s, not %(serial)s.")
            % {"code": series.code, "card_count": series.card_count, "serial": serial},
            code="bad_serial",
        )
    if series.generator == IMPORTED:
        # An imported series has no seed: its master cards are the file's, stored card by card.
        return CardGrid.from_json(Card.objects.get(series=series, serial=serial).grid)
    return cardgen.recompute_card(
        series.generator, series.seed.encode(), serial, cardgen.rederived_pairs(series.rederived_strips)
    )


def create_ball_set(
    *, venue: Venue, name: str, actor: User, colours: dict[str, str] | None = None
) -> BallSet:
    """A ball set with its colours (bingo.traditional.services.ballsets.register_ball_set, kept for its
    callers)."""
    return ballsets.register_ball_set(venue=venue, name=name, actor=actor, colours=colours)
