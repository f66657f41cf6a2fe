"""The electronic room on a hall screen (halls.hooks screen section "electronic"): the game drawing (or the
last one played), its balls, its prizes as announced and as decided, the next game's sales, and the
accumulated prizes' meters with their max balls and what players must be told about them (R-16).

Read-only. The snapshot is what electronic/screen.js starts from; the room stream's EGAME_* events move it
on, and a gap in the stream reloads it. A room that is not an electronic one answers {"speciality": None}
and its screen shows the traditional sections only.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db.models import Q

from bingo.electronic.models import EGameState, ElectronicGame, EPrize, Speciality, SpecialityPool
from bingo.electronic.services.readmodels import drawing_view, meters, selling_view
from bingo.electronic.services.steps import rules_of
from halls import money
from halls.models import Room


def speciality_of(room: Room) -> Speciality | None:
    return Speciality.objects.filter(room=room).first()


def current_game(speciality: Speciality) -> ElectronicGame | None:
    """The game the screen shows: the one drawing, else the last one played."""
    games = ElectronicGame.objects.filter(speciality=speciality).select_related("version")
    drawing = games.filter(state=EGameState.DRAWING).first()
    if drawing is not None:
        return drawing
    return games.filter(state=EGameState.CLOSED, cards_sold__gt=0).order_by("-number").first()


def next_game(speciality: Speciality) -> ElectronicGame | None:
    """The game selling (its sales open, or closed and waiting for the draw of the one before)."""
    return (
        ElectronicGame.objects.filter(speciality=speciality, state=EGameState.SELLING)
        .select_related("version")
        .first()
    )


def screen_snapshot(room: Room) -> dict[str, Any]:
    """The electronic section of a hall screen's snapshot."""
    speciality = speciality_of(room)
    if speciality is None:
        return {"speciality": None}
    game = current_game(speciality)
    upcoming = next_game(speciality)
    source = upcoming or game
    rules = rules_of(source.version) if source is not None else None
    layout = rules.layout if rules else None
    current = None
    if game is not None:
        current = drawing_view(game, list(EPrize.objects.filter(game=game).order_by("ordinal", "id")))
        # A pool prize was announced with its meter at the close (the terms keep it), as the event said.
        announced = game.terms.get("meters", {}) if isinstance(game.terms, dict) else {}
        for prize in current["prizes"]:
            if prize["amount"] is None and prize["code"] in announced:
                prize["amount"] = str(money.cents_down(Decimal(announced[prize["code"]])))
    following = None
    if upcoming is not None:
        following = {
            **selling_view(upcoming),
            "sales_closed": upcoming.sales_closed_at is not None,
            "cards": upcoming.cards_sold if upcoming.sales_closed_at else None,
        }
    return {
        "speciality": {
            "id": speciality.pk,
            "code": speciality.code,
            "name": speciality.name,
            "family": speciality.family,
            "running": speciality.running,
            "max_number": layout.max_number if layout else 90,
        },
        "current": current,
        "next": following,
        "meters": meters(speciality),
    }


def pools_shown_elsewhere() -> set[int]:
    """The specialities' pools: their electronic room's section shows them (with their max balls and
    information), so the pools' ribbon of the hall screens leaves them out (jackpots register_own_display)."""
    return set(SpecialityPool.objects.filter(~Q(pool_id=None)).values_list("pool_id", flat=True))
