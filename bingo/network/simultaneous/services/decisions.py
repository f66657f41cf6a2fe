"""The central's decisions as a member hall shows them (read-only): the network's Line and Bingo, wherever
they were won, and this hall's own prize, each with its winners' cards and halls. The hall's screens and
consoles read them through bingo.traditional.hooks' decided prizes (a snapshot after a reload shows the Line
won as the
live event did), and the hall applies each as it arrives (services.venue._decided)."""

from __future__ import annotations

from typing import Any

from bingo.network.simultaneous.models import HallEntry, HallGame, PrizeKind
from bingo.traditional.models import DrawSource, Game
from halls import money
from halls.eventtypes import Prize, PrizeWinner
from halls.link.kinds import LinkKind


def concerns_hall(hall_game: HallGame, payload: dict[str, Any]) -> bool:
    """Whether a decision shows in this hall: the network's Line and Bingo, and this hall's own prize (not
    another hall's)."""
    return str(payload["prize"]) != PrizeKind.HALL or str(payload["scope"]) == hall_game.venue.licence_number


def decided_view(hall_game: HallGame, payload: dict[str, Any]) -> Prize:
    """A decision of the central as the hall's screens show a prize: every winner with its card and its hall
    (the hall's name where the central sent it, else its licence number), the cards in this hall's copy of
    the network series (one series: the same serials)."""
    series = hall_game.series.code if hall_game.series is not None else f"SB-{hall_game.code}"
    winners = [
        PrizeWinner(
            series=series,
            serial=int(w["serial"]),
            amount=money.parse("amount", w["amount"]),
            hall=str(w.get("hall_name") or w["hall"]),
        )
        for w in payload["winners"]
    ]
    return Prize(
        kind=str(payload["prize"]),
        ordinal=int(payload["ordinal"]),
        amount=money.parse("amount", payload["amount"]),
        share=money.parse("share", payload["share"]),
        remainder=money.parse("remainder", payload["remainder"]),
        remainder_to=str(payload["scope"]),
        winners=winners,
    )


def decided_prizes(game: Game) -> list[dict[str, Any]]:
    """bingo.traditional.hooks' decided prizes: the central's decisions this hall has applied to `game` (its
    copy of a
    network game), in the order decided, as a screen's snapshot lists prizes; none for any other game."""
    if game.draw_source != DrawSource.MANUAL:
        return []  # a network game's copy is drawn by hand (its balls are the central's)
    hall_game = HallGame.objects.filter(game_id=game.pk).select_related("venue", "series").first()
    if hall_game is None:
        return []
    entries = HallEntry.objects.filter(
        venue_id=hall_game.venue_id,
        kind=LinkKind.SB_DECIDED.value,
        payload__game=hall_game.code,
        applied_at__isnull=False,
    ).order_by("stream", "sequence")
    return [dict(decided_view(hall_game, e.payload)) for e in entries if concerns_hall(hall_game, e.payload)]
