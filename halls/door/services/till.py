"""The till's side of the door's players (issue 27): a person is found by the document they show, scanned at
the till (kind, number, country: its keyed digest), never by name; a card is issued to them only once
admitted today where the venue's cards need it (halls.cashier.services.admitted)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from halls.actors import Actor
from halls.cashier.models import Player, PlayerCard
from halls.cashier.services import admitted, player_cards
from halls.door.documents import Document, keyed_digest
from halls.door.services.players import is_admitted, player_of
from halls.door.services.registers import register_key
from halls.models import Venue


def card_for(*, venue: Venue, document: Document, actor: Actor) -> PlayerCard:
    """A new player card for the person showing `document` (the till scans it: never a name). Where the
    venue's cards need admission, only for a player admitted today (409 player_not_admitted, nothing
    written); elsewhere the person's player is made if new."""
    digest = keyed_digest(register_key(), document)
    with transaction.atomic():
        player = player_of(venue=venue, digest=digest)
        if player is None and not admitted.cards_need_admission(venue.pk):
            player, _created = Player.objects.get_or_create(
                venue=venue, digest=digest, defaults={"created_at": timezone.now()}
            )
        return player_cards.issue_card(venue_id=venue.pk, actor=actor, player=player)


@dataclass(frozen=True, slots=True)
class PlayerFound:
    """The player of a document at the venue, as the till sees them: no name, no number."""

    player: int | None
    admitted: bool  # admitted today, the admission standing
    cards: tuple[PlayerCard, ...]


def find_player(*, venue: Venue, document: Document) -> PlayerFound:
    """The venue's player of this document, whether admitted today, and their cards (oldest first)."""
    player = player_of(venue=venue, digest=keyed_digest(register_key(), document))
    if player is None:
        return PlayerFound(player=None, admitted=False, cards=())
    cards = tuple(PlayerCard.objects.filter(player=player).order_by("pk"))
    return PlayerFound(player=player.pk, admitted=is_admitted(player), cards=cards)
