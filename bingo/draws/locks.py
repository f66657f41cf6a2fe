"""The draws' one lock (its rank in halls.locks): a game's commitment row, while its sales digest is fixed or
its seed revealed."""

from __future__ import annotations

from bingo.draws.models import DrawCommitment
from halls.locks import Rank, take


def lock_commitment(room: str, game_ref: str) -> DrawCommitment | None:
    """The game's commitment FOR UPDATE; None when its draw was never committed."""
    take(Rank.DRAW_COMMITMENT, f"{room}-{game_ref}")
    rows = DrawCommitment.objects.select_for_update(of=("self",))
    return rows.filter(room=room, game_ref=game_ref).first()
