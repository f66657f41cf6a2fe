"""A claim's verdict as data, from its row: the code and facts of bingo.claims.stored_verdict, which the
console says in the reader's language (its JS catalogue) and the API carries beside the English `reason`.
A read: it writes nothing and imports no write service (the claims' service and the read models use it).
"""

from __future__ import annotations

from collections.abc import Sequence

from bingo import claims as rules
from bingo.cards import CardGrid
from bingo.models import Ball, Claim


def claim_verdict(
    claim: Claim, *, line_won_at: int | None, balls: Sequence[int] | None = None
) -> tuple[str, rules.Facts]:
    """The code and facts of a claim's verdict. `balls`: the game's balls in order (read when not given and
    needed: only an incomplete claim's missing numbers need them)."""
    card = None
    if claim.refusal == rules.Refusal.NOT_COMPLETE:
        card = CardGrid.from_json(claim.card.grid)
        if balls is None:
            balls = list(
                Ball.objects.filter(game_id=claim.game_id, ordinal__lte=claim.bound_ordinal)
                .order_by("ordinal")
                .values_list("number", flat=True)
            )
    code, facts = rules.stored_verdict(
        kind=claim.kind,
        serial=claim.serial,
        valid=claim.valid,
        refusal=claim.refusal,
        bound_ordinal=claim.bound_ordinal,
        completed_at=claim.completed_at,
        winning_row=claim.winning_row,
        line_won_at=line_won_at,
        card=card,
        balls=balls or (),
    )
    return code.value, facts
