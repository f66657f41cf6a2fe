"""What the cage's tests share: a cashier on shift with cash in the drawer, prizes waiting, identified
winners, players known by their document's digest."""

from __future__ import annotations

import itertools
from datetime import date
from decimal import Decimal

from django.contrib.auth.models import User
from django.utils import timezone

from halls.cage.models import Identification
from halls.cage.services import identification
from halls.cashier.models import Payable, PayableKind, Player, PlayerCard, Shift
from halls.cashier.services import payables, player_cards
from halls.door.documents import keyed_digest
from halls.door.services import admission
from halls.door.services.registers import register_key
from halls.models import Venue
from tests.cashier_support import on_shift

D = Decimal
WINNER_DNI = "12345678Z"
WINNER_NAME = "María Pérez Gómez"
WINNER_BIRTH = date(1971, 3, 14)
_sources = itertools.count(1)


def drawer_shift(cashier: User, venue: Venue, float_amount: str = "20000") -> Shift:
    return on_shift(cashier, venue, float=D(float_amount))


def prize(venue: Venue, amount: str, kind: str = PayableKind.BINGO) -> Payable:
    made = payables.create_payable(
        venue_id=venue.pk,
        kind=kind,
        source=f"test.prize:{next(_sources)}",
        description=f"Partida 1 · {kind}",
        amount=D(amount),
        actor="test",
    )
    assert made is not None
    return made


def identify(venue: Venue, actor: User | str = "test", number: str = WINNER_DNI) -> Identification:
    return identification.identify(
        venue=venue,
        document=admission.document_from("DNI", number),
        full_name=WINNER_NAME,
        birth_date=WINNER_BIRTH,
        nationality="ES",
        scan_reference="scan-0001.pdf",
        actor=actor,
    )


def digest_of(number: str = WINNER_DNI) -> bytes:
    return keyed_digest(register_key(), admission.document_from("DNI", number))


def players_card(venue: Venue, number: str = WINNER_DNI) -> PlayerCard:
    """A card of a player admitted at the door (known by their document's digest)."""
    player = Player.objects.create(venue=venue, digest=digest_of(number), created_at=timezone.now())
    return player_cards.issue_card(venue_id=venue.pk, actor="test", player=player)


def pay(payable: Payable, cashier: User, **kwargs: object) -> payables.Payout:
    kwargs.setdefault("method", "cash")
    kwargs.setdefault("key", f"pay-{payable.pk}")
    return payables.pay_payable(payable=payable, actor=cashier, **kwargs)  # type: ignore[arg-type]
