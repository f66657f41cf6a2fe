"""A venue's money-deciding settings: changed only between games, with the acting user and the old and new
values in the audit chain."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction

from halls import hooks
from halls.errors import Conflict, InvalidInput
from halls.models import Venue
from halls.services import audit

HUNDRED = Decimal("100")
CENT = Decimal("0.01")


def change_prize_percents(
    *, venue: Venue, line_percent: Decimal, bingo_percent: Decimal, actor: User
) -> Venue:
    """Set the Line and Bingo prizes (percent of each game's sales, spec §2.7 S7). Refused while a game of
    the venue is in play (the apps' between-games guards, halls.hooks); nothing changed, nothing recorded."""
    new = {"line_percent": line_percent, "bingo_percent": bingo_percent}
    problems = [
        f"{name.replace('_', ' ')} must be 0–100 with at most 2 decimals"
        for name, value in new.items()
        if not (Decimal(0) <= value <= HUNDRED) or value != value.quantize(CENT)
    ]
    if not problems and line_percent + bingo_percent > HUNDRED:
        problems.append("line and bingo together must not exceed 100 % of the sales")
    if problems:
        raise InvalidInput(
            "The prize percentages are not valid: " + "; ".join(problems) + ".", code="bad_percent"
        )
    with transaction.atomic():
        venue = Venue.objects.select_for_update().get(pk=venue.pk)
        busy = hooks.between_games_problems(venue)
        if busy:
            raise Conflict(
                "The prize percentages change only between games: " + "; ".join(busy) + ".",
                code="venue_busy",
            )
        old = {"line_percent": venue.line_percent, "bingo_percent": venue.bingo_percent}
        new = {name: value.quantize(CENT) for name, value in new.items()}  # as the columns keep them
        if old == new:
            return venue  # nothing changes: nothing to record
        venue.line_percent, venue.bingo_percent = new["line_percent"], new["bingo_percent"]
        venue.save(update_fields=["line_percent", "bingo_percent"])
        audit.record(
            venue_id=venue.pk,
            actor=actor,
            action="venue.prize_percents_changed",
            obj=venue,
            data={"old": old, "new": new},
        )
    return venue
