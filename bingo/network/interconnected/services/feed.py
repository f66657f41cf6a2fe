"""The interconnected prize on the authority's feed, at the venues: when the central's decision gives this
installation's halls winning cards, each hall's game that won says so as game.prize (bingo.draws.feed) in the
hall's own messages: its cards, their shares of the pool (the hall's sum), the decision's ball and the
network pool's code. The regulator sees a Gran prize on the game that won it; the pool's own award is the
central's pool.award. Written in the decision entry's transaction, after its audit and its events (a feed
number is the last lock, halls.locks.Rank.STREAM)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from django.utils import timezone

from bingo.draws import feed
from bingo.electronic.services import commitments as electronic
from bingo.electronic.services.steps import rules_of
from bingo.network.interconnected.models import EGameRound, RoundGame
from bingo.traditional.services import commitments as traditional
from halls.feed.services import facts


def _by_hall(shares: Sequence[Mapping[str, Any]]) -> dict[str, tuple[list[str], Decimal]]:
    """Each hall's winning cards (as the decision names them) and the sum of their shares."""
    found: dict[str, tuple[list[str], Decimal]] = {}
    for share in shares:
        cards, amount = found.get(str(share["hall"]), ([], Decimal("0.00")))
        found[str(share["hall"])] = ([*cards, str(share["card"])], amount + Decimal(str(share["amount"])))
    return found


def traditional_won(
    payload: Mapping[str, Any], games: Mapping[str, RoundGame], shares: Sequence[Mapping[str, Any]]
) -> None:
    """A traditional room's game won the round's prize (venue.decided): its hall's cards and shares."""
    for hall, (cards, amount) in sorted(_by_hall(shares).items()):
        row = games[hall]
        if not facts.feed_on(row.venue_id):
            continue
        feed.prize(
            venue_id=row.venue_id,
            room=traditional.ROOM,
            game_ref=traditional.game_ref(row.game_id),
            label=row.game.room.name,
            prize=str(payload["prize"]),
            name=row.round.name,
            amount=amount,
            ordinal=payload.get("ordinal"),
            cards=cards,
            pool=payload.get("pool_code"),
            where=hall,
            at=timezone.now(),
        )


def electronic_won(
    payload: Mapping[str, Any], games: Mapping[str, EGameRound], shares: Sequence[Mapping[str, Any]]
) -> None:
    """An electronic speciality's game won its Gran prize (gran.apply_decision): its hall's cards and shares,
    under the prize's code in the speciality's table."""
    for hall, (cards, amount) in sorted(_by_hall(shares).items()):
        row = games[hall]
        if not facts.feed_on(row.venue_id):
            continue
        feed.prize(
            venue_id=row.venue_id,
            room=electronic.ROOM,
            game_ref=electronic.ref(row.game_id),
            label=row.game.speciality.room.name,
            prize=row.table_code,
            name=rules_of(row.game.version).prize(row.table_code).name,
            amount=amount,
            ordinal=payload.get("ordinal"),
            cards=cards,
            pool=payload.get("pool_code"),
            where=hall,
            at=timezone.now(),
        )
