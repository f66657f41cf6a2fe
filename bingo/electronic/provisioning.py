"""Provisioning of simulated terminals, shared by the demo (demo.electronic), ``manage.py terminal_simulator
--register`` and the benchmarks: terminals of a speciality registered when missing, a player card per
terminal funded at a cashier's till, and new device tokens with their simulator profiles. Everything through
the services, and only what is missing (a card keeps its balance between runs)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction

from bingo.electronic.models import Purchase, Speciality, Terminal
from bingo.electronic.services import terminals as terminal_services
from bingo.electronic.simulator import SOFTWARE_VERSION, TerminalProfile
from halls.actors import Actor
from halls.cashier.models import PlayerCard, Shift, ShiftState, Till
from halls.cashier.services import player_cards, shifts
from halls.models import Role, StaffRole, Venue
from halls.services import audit

# The simulator's cashier: it loads the simulated players' cards, in cash, at a till of its own.
CASHIER = "terminal-simulator"
TILL = "Caja simulador"
# Each terminal's player card holds at least this; a card below it is topped up to it at the cashier.
FLOAT = Decimal("500.00")


def robot_cashier(venue: Venue) -> User:
    """The simulator's cashier in the venue (an inactive user: it cannot log in), on shift at its till."""
    user, _created = get_user_model().objects.get_or_create(username=CASHIER, defaults={"is_active": False})
    with transaction.atomic():
        _role, granted = StaffRole.objects.get_or_create(user=user, venue=venue, role=Role.CASHIER)
        if granted:
            audit.record(
                venue_id=venue.pk,
                actor="simulator",
                action="staff_role.granted",
                obj=user,
                data={"user": CASHIER, "role": Role.CASHIER},
            )
    if not Shift.objects.filter(venue=venue, cashier=user, state=ShiftState.OPEN).exists():
        till, _created = Till.objects.get_or_create(venue=venue, name=TILL)
        shifts.open_shift(till=till, cashier=user, float_amount=Decimal("0"), actor=user)
    return user


def ensure_terminals(*, speciality: Speciality, names: Sequence[str], actor: Actor) -> list[Terminal]:
    """The speciality's terminals of these device names, registered when missing, in `names`' order."""
    have = {
        t.device.name: t
        for t in Terminal.objects.filter(speciality=speciality, device__name__in=names).select_related(
            "device"
        )
    }
    out = []
    for name in names:
        terminal = have.get(name)
        if terminal is None:
            terminal, _token = terminal_services.register_terminal(
                speciality=speciality, name=name, actor=actor
            )
        out.append(terminal)
    return out


def cards_in_use(terminals: Sequence[Terminal]) -> dict[int, str]:
    """The player card each terminal bought with last (a new run plays on with the same cards)."""
    found: dict[int, str] = {}
    rows = (
        Purchase.objects.filter(terminal__in=terminals)
        .order_by("terminal_id", "-id")
        .values_list("terminal_id", "player_card__number")
    )
    for terminal_id, number in rows:
        found.setdefault(terminal_id, number)
    return found


def ensure_cards(
    *, terminals: Sequence[Terminal], numbers: dict[int, str], cashier: User, amount: Decimal = FLOAT
) -> dict[int, str]:
    """A funded player card per terminal (by terminal id -> card number): the one in `numbers` if it is
    still a card of the venue, else a new one; topped up to `amount` in cash at the cashier's open shift."""
    out: dict[int, str] = {}
    for terminal in terminals:
        venue_id = terminal.speciality.venue_id
        card = PlayerCard.objects.filter(venue_id=venue_id, number=numbers.get(terminal.pk, "")).first()
        if card is None:
            card = player_cards.issue_card(venue_id=venue_id, actor=cashier)
        short = amount - player_cards.balance(card)
        if short > 0:
            with transaction.atomic():
                player_cards.cash_in(
                    card=card,
                    amount=short,
                    means="cash",
                    key=f"sim-float-{card.number}-{player_cards.balance(card)}",
                    actor=cashier,
                )
        out[terminal.pk] = card.number
    return out


def issue_credentials(
    *,
    terminals: Sequence[Terminal],
    cards_of: dict[int, str],
    actor: Actor,
    software_version: str = SOFTWARE_VERSION,
) -> list[TerminalProfile]:
    """New device tokens (the old ones stop working) and each terminal's simulator profile, in order."""
    return [
        TerminalProfile(
            index=index,
            device_id=terminal.device_id,
            token=terminal_services.rotate_token(terminal=terminal, actor=actor),
            card_number=cards_of[terminal.pk],
            software_version=software_version,
        )
        for index, terminal in enumerate(terminals)
    ]
