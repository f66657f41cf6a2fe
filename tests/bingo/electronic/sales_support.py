"""What the sales and terminal-API tests share: a speciality on sale (a verified open session, a game
selling), a terminal verified for it, and a funded player card."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone

from bingo.electronic.models import (
    EGameState,
    ElectronicGame,
    ElectronicSession,
    Speciality,
    Terminal,
)
from bingo.electronic.services import specialities, terminals
from halls.cashier.models import PlayerCard
from halls.models import Venue
from tests.bingo.electronic.support import funded_card, make_speciality, open_verified_session


def selling_game(
    speciality: Speciality, *, session: ElectronicSession | None = None, close_in: float = 30.0
) -> ElectronicGame:
    """A game of the speciality on sale, its sales closing in `close_in` seconds (made directly: the
    engine's start_next_game is the service that makes them in play)."""
    session = session or ElectronicSession.objects.get(speciality=speciality, closed_at__isnull=True)
    last = ElectronicGame.objects.filter(speciality=speciality).order_by("-number").first()
    now = timezone.now()
    return ElectronicGame.objects.create(
        speciality=speciality,
        version=specialities.version_in_force(speciality),
        session=session,
        number=(last.number if last else 0) + 1,
        state=EGameState.SELLING,
        created_at=now,
        sales_close_at=now + timedelta(seconds=close_in),
    )


@dataclass
class OnSale:
    speciality: Speciality
    session: ElectronicSession
    game: ElectronicGame
    terminal: Terminal
    token: str
    card: PlayerCard


def on_sale(
    venue: Venue,
    operator: User,
    cashier: User,
    *,
    rules: dict[str, Any] | None = None,
    balance: Decimal = Decimal("20.00"),
) -> OnSale:
    """A speciality selling its first game, one terminal verified for the session, a card with `balance`."""
    speciality = make_speciality(venue, operator, rules=rules)
    terminal, token = terminals.register_terminal(
        speciality=speciality, name=f"{speciality.code}-T1", actor=operator
    )
    session = open_verified_session(speciality, operator)
    terminal.refresh_from_db()
    game = selling_game(speciality, session=session)
    return OnSale(speciality, session, game, terminal, token, funded_card(venue, cashier, balance))


def more_terminals(sale: OnSale, operator: User, n: int, prefix: str = "T") -> list[tuple[Terminal, str]]:
    """`n` terminals more, verified by the open session's verification."""
    made = []
    for i in range(n):
        terminal, token = terminals.register_terminal(
            speciality=sale.speciality, name=f"{sale.speciality.code}-{prefix}{i + 2}", actor=operator
        )
        Terminal.objects.filter(pk=terminal.pk).update(verified_by=sale.session.verification)
        terminal.refresh_from_db()
        made.append((terminal, token))
    return made
