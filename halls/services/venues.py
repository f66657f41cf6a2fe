"""A venue's money-deciding settings: changed only between games, with the acting user and the old and new
values in the audit chain."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext as _

from halls import hooks
from halls.errors import Conflict, InvalidInput
from halls.models import HallCategory, Venue
from halls.money import CENT, HUNDRED
from halls.services import audit, locks

# Four eyes (halls.foureyes): the kind under which a change of the prize settings is proposed and approved
# (bingo registers it: the Line and Bingo prizes are its games'; halls' doors propose it by this name).
PRIZE_SETTINGS_KIND = "venue.prize_settings"


def checked_prize_settings(
    *,
    venue: Venue,
    line_percent: Decimal | None = None,
    bingo_percent: Decimal | None = None,
    hall_category: str | None = None,
) -> dict[str, Any]:
    """The prize settings the venue would have (None keeps a value), refused as `change_prize_settings`
    refuses them: a bad category or percentage, a game of the venue in play. Writes nothing (four eyes
    checks a proposal with it)."""
    if hall_category is not None and hall_category not in HallCategory.values:
        raise InvalidInput(_("The hall category is 1, 2 or 3."), code="bad_hall_category")
    line = venue.line_percent if line_percent is None else line_percent
    bingo = venue.bingo_percent if bingo_percent is None else bingo_percent
    _check_percents(line, bingo)
    busy = hooks.between_games_problems(venue)
    if busy:
        message = _("The prize settings change only between games: %(problems)s.")
        raise Conflict(message % {"problems": "; ".join(busy)}, code="venue_busy")
    return {
        "line_percent": line.quantize(CENT),  # as the column keeps it
        "bingo_percent": bingo.quantize(CENT),
        "hall_category": venue.hall_category if hall_category is None else hall_category,
    }


def change_prize_settings(
    *,
    venue: Venue,
    actor: User,
    line_percent: Decimal | None = None,
    bingo_percent: Decimal | None = None,
    hall_category: str | None = None,
) -> Venue:
    """Set the Line and Bingo prizes (percent of each game's sales, spec §2.7 S7) and the hall category (the
    prize programs' tables, OP-33); None keeps a value. Refused while a game of the venue is in play (the
    apps' between-games guards, halls.hooks): nothing changed, nothing recorded."""
    with transaction.atomic():
        venue = locks.lock_venue(venue.pk)
        # A game copies the percentages when it is created, under its room's lock: holding the rooms too,
        # no game can be created between the guard below and this commit.
        locks.lock_rooms(venue.pk)
        wanted = checked_prize_settings(
            venue=venue, line_percent=line_percent, bingo_percent=bingo_percent, hall_category=hall_category
        )
        old = {name: getattr(venue, name) for name, value in wanted.items() if getattr(venue, name) != value}
        if not old:
            return venue  # nothing changes: nothing to record
        new = {name: wanted[name] for name in old}
        for name, value in new.items():
            setattr(venue, name, value)
        venue.save(update_fields=list(new))
        audit.record(
            venue_id=venue.pk,
            actor=actor,
            action="venue.prize_settings_changed",
            obj=venue,
            data={"old": old, "new": new},
        )
    return venue


def _check_percents(line: Decimal, bingo: Decimal) -> None:
    labels = {_("the line prize"): line, _("the bingo prize"): bingo}
    problems = [
        _("%(prize)s must be 0–100 with at most 2 decimals") % {"prize": label}
        for label, value in labels.items()
        if not (Decimal(0) <= value <= HUNDRED) or value != value.quantize(CENT)
    ]
    if not problems and line + bingo > HUNDRED:
        problems.append(_("line and bingo together must not exceed the sales"))
    if problems:
        message = _("The prize percentages are not valid: %(problems)s.") % {"problems": "; ".join(problems)}
        raise InvalidInput(message, code="bad_percent")
