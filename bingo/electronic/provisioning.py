"""Provisioning of simulated terminals, shared by the demo (demo.electronic), ``manage.py terminal_simulator
--register`` and the benchmarks: terminals of a speciality registered when missing, a player card per
terminal funded at a cashier's till, and new device tokens with their simulator profiles. Everything through
the services, and only what is missing (a card keeps its balance between runs).

Each terminal's simulated player is a person admitted at the door (issue 27: a card is issued, loaded and
played only by a player admitted today, where the venue's cards need it): a DNI of their own (`sim_document`,
from the terminal's id, outside the demo register's numbers), admitted at the simulator's door once a day
(`admit_players`; the demo's beat re-admits them after the venue's midnight)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import date
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from stdnum.es import dni

from bingo.electronic.models import Purchase, Speciality, Terminal
from bingo.electronic.services import terminals as terminal_services
from bingo.electronic.simulator import SOFTWARE_VERSION, TerminalProfile
from halls.actors import Actor
from halls.cashier.models import Player, PlayerCard, Shift, ShiftState, Till
from halls.cashier.services import player_cards, shifts
from halls.door.documents import Document
from halls.door.models import Decision
from halls.door.services import admission, players
from halls.models import Role, StaffRole, Venue
from halls.services import audit

# The simulator's cashier: it loads the simulated players' cards, in cash, at a till of its own.
CASHIER = "terminal-simulator"
TILL = "Caja simulador"
# Each terminal's player card holds at least this; a card below it is topped up to it at the cashier.
FLOAT = Decimal("500.00")
# The simulated players: DNI numbers from here (plus the terminal's id), born on this day, at this door.
SIM_DNI_BASE = 98_000_000
SIM_BIRTH = date(1980, 1, 1)
SIM_DOOR = "Puerta simulador"

log = logging.getLogger(__name__)


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


def sim_document(terminal: Terminal) -> Document:
    """The terminal's simulated player's DNI (its check letter computed by python-stdnum)."""
    digits = f"{SIM_DNI_BASE + terminal.pk:08d}"
    return admission.document_from("DNI", digits + dni.calc_check_digit(digits))


def admit_players(*, terminals: Sequence[Terminal], actor: Actor) -> dict[int, Player | None]:
    """Each terminal's simulated player (by terminal id), admitted at the simulator's door unless their
    admission stands already; None for one the door refused (logged: their card will be refused)."""
    out: dict[int, Player | None] = {}
    for terminal in terminals:
        venue = terminal.speciality.venue
        document = sim_document(terminal)
        found = players.player_of(venue=venue, digest=admission.digest_of(document))
        if found is not None and players.is_admitted(found):
            out[terminal.pk] = found
            continue
        visit = admission.admit(
            venue=venue, door=SIM_DOOR, document=document, birth_date=SIM_BIRTH, actor=actor
        )
        if visit.decision != Decision.ADMITTED:
            log.warning("the door refused terminal %s's simulated player: %s", terminal.pk, visit.decision)
        out[terminal.pk] = visit.player
    return out


def ensure_cards(
    *, terminals: Sequence[Terminal], numbers: dict[int, str], cashier: User, amount: Decimal = FLOAT
) -> dict[int, str]:
    """A funded player card per terminal (by terminal id -> card number): the one in `numbers` if it is
    still a card of the venue, else a new one, of the terminal's simulated player admitted at the door
    (`admit_players`; an older run's anonymous card is linked to them); topped up to `amount` in cash at the
    cashier's open shift."""
    out: dict[int, str] = {}
    admitted = admit_players(terminals=terminals, actor=cashier)
    for terminal in terminals:
        venue_id = terminal.speciality.venue_id
        player = admitted.get(terminal.pk)
        card = PlayerCard.objects.filter(venue_id=venue_id, number=numbers.get(terminal.pk, "")).first()
        if card is not None and card.player_id is None and player is not None:
            card = player_cards.link_player(card=card, player=player, actor=cashier)
        if card is None:
            card = player_cards.issue_card(venue_id=venue_id, actor=cashier, player=player)
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
