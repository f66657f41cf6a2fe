"""Player cards only for players admitted today (issue 27): the cashier's side of the door.

Where the jurisdiction says so (`cards_need_admission`: HALL_DOOR_CARDS_NEED_ADMISSION, overridden per
jurisdiction under the key "cards_need_admission" of HALL_DOOR_BY_JURISDICTION), a player card is issued,
loaded (at the till, by a device's bill reader, from a ticket) and used at a terminal only when it belongs to
a player whose admission at the door stands: `Player.admitted_until` (the end of the venue's local day of
their latest admission, on the venue's clock; halls.door.services.admission sets it, and withdraws it when a
register lists them while inside or they self-exclude) is still ahead of the venue's clock. An anonymous
card, a player not admitted today and one whose admission was withdrawn are refused alike (409
player_not_admitted), naming only the card. The cashier reads only its own rows here: the door writes them.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.utils.translation import gettext as _

from halls.cashier import cardnumber
from halls.cashier.models import Player, PlayerCard
from halls.errors import Conflict
from halls.models import Venue
from halls.services import venueclock

SETTING = "cards_need_admission"


def cards_need_admission(venue_id: int) -> bool:
    """Whether the venue's cards need their player admitted today (its jurisdiction's setting, else the
    default). No query unless some jurisdiction overrides the default."""
    default = bool(settings.HALL_DOOR_CARDS_NEED_ADMISSION)
    overrides = settings.HALL_DOOR_BY_JURISDICTION
    if not any(SETTING in found for found in overrides.values()):
        return default
    jurisdiction = Venue.objects.filter(pk=venue_id).values_list("jurisdiction", flat=True).first()
    return bool(overrides.get(jurisdiction or "", {}).get(SETTING, default))


def admitted(admitted_until: datetime | None, venue_now: datetime) -> bool:
    """Whether an admission standing until `admitted_until` stands at the venue's time `venue_now`."""
    return admitted_until is not None and venue_now < admitted_until


def card_not_admitted(card: PlayerCard) -> Conflict:
    return Conflict(
        _(
            "Card %(number)s cannot be used: its player has not been admitted at the door today. A player "
            "card is issued, loaded and played only by a player admitted today."
        )
        % {"number": cardnumber.printed(card.number)},
        code="player_not_admitted",
        number=card.number,
    )


def player_not_admitted() -> Conflict:
    return Conflict(
        _(
            "This player has not been admitted at the door today: a player card is issued only to a player "
            "admitted today."
        ),
        code="player_not_admitted",
    )


def check_player(player: Player | None, *, venue_id: int) -> None:
    """Refuse (409 player_not_admitted) a card for `player` (None: an anonymous card) unless the venue's cards
    need no admission or the player's admission stands."""
    if not cards_need_admission(venue_id):
        return
    if player is None or not admitted(player.admitted_until, venueclock.now(venue_id)):
        raise player_not_admitted()


def check_card(card: PlayerCard) -> None:
    """Refuse (409 player_not_admitted) a load or a use of `card` unless the venue's cards need no admission
    or the card's player's admission stands (one query for the player's admission, one for the clock)."""
    if not cards_need_admission(card.venue_id):
        return
    until = None
    if card.player_id is not None:
        until = Player.objects.filter(pk=card.player_id).values_list("admitted_until", flat=True).first()
    if not admitted(until, venueclock.now(card.venue_id)):
        raise card_not_admitted(card)


def check_until(card: PlayerCard, until: datetime | None) -> None:
    """`check_card` on the player's `admitted_until` read already (`admissions_of`, for a group)."""
    if cards_need_admission(card.venue_id) and not admitted(until, venueclock.now(card.venue_id)):
        raise card_not_admitted(card)


def admissions_of(cards: list[PlayerCard]) -> dict[int, datetime | None]:
    """Each card's player's `admitted_until` by card id (None: anonymous, or never admitted): one query for a
    group of purchases, checked with `admitted` against each venue's time."""
    players = {c.player_id for c in cards if c.player_id is not None}
    until = dict(Player.objects.filter(pk__in=players).values_list("pk", "admitted_until")) if players else {}
    return {c.pk: until.get(c.player_id) if c.player_id is not None else None for c in cards}
