"""What a venue's session minutes and statistics (bingo.venuewide.records, through bingo.traditional.hooks)
read of its
simultaneous games: which of its traditional games mirror a network game, and the prizes the central
decided for their cards (the network's Line and Bingo, the hall's Bingo). Read-only: plain values."""

from __future__ import annotations

from collections.abc import Collection

from bingo.network.simultaneous.models import HallAward, HallGame, PrizeKind
from bingo.traditional.hooks import WonPrize


def simultaneous_games(game_ids: Collection[int]) -> set[int]:
    """Of these hall games, those that mirror a network game (a simultaneous game's local game)."""
    return set(HallGame.objects.filter(game_id__in=list(game_ids)).values_list("game_id", flat=True))


def hall_prizes_won(game_ids: Collection[int]) -> list[WonPrize]:
    """Each winner's share the central decided for a card of these hall games, at the claim's ball."""
    rows = HallAward.objects.filter(hall_game__game_id__in=list(game_ids)).select_related(
        "hall_game", "claim__series"
    )
    found = []
    for award in rows:
        assert award.hall_game.game_id is not None  # awarded: the hall game is played by a local game
        found.append(
            WonPrize(
                game_id=award.hall_game.game_id,
                label=str(PrizeKind(award.kind).label),
                ordinal=award.claim.bound_ordinal,
                amount=award.amount,
                card=f"{award.claim.series.code} #{award.claim.serial}",
            )
        )
    return found
