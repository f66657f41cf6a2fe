"""Selling electronic cards at a terminal (EB-04, EB-05.f): a player card's balance buys cards for the
speciality's game on sale; the cards are dealt from a fresh random seed kept on the purchase.

One purchase is one transaction: the game FOR SHARE (purchases do not wait for each other; the close of
sales, FOR UPDATE, waits for those in flight, so the sold set it counts is final), the terminal (its cards
in the game are counted one purchase at a time), then the card and its account through `cards.spend`, whose
ledger entry is the purchase's audit record, then the Purchase and ECard rows, and the terminal's event.
A refusal raises before or inside it: nothing is written. `(terminal, key)` makes a retry a no-op.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo.electronic.layouts import Layout
from bingo.electronic.models import ECard, EGameState, ElectronicGame, Purchase, Terminal
from bingo.electronic.services.common import rules_of, tell_terminal
from bingo.electronic.services.locks import lock_terminal, share_egame
from bingo.electronic.services.terminals import playable
from halls import money
from halls.cashier.models import PlayerCard
from halls.cashier.services import cards as player_cards
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import ECardShown, EventType, TerminalCards

# The terminal's purchase key; the ledger's key adds "card_spend:epurchase:<terminal id>:" (at most 120).
KEY_LENGTH = 60


@dataclass(frozen=True)
class Bought:
    """A purchase and its cards; `balance` is the player card's balance now; `replayed`: a retry answered
    with the first purchase, nothing written."""

    purchase: Purchase
    cards: list[ECard]
    balance: Decimal
    replayed: bool


def _key(value: Any) -> str:
    key = str(value or "").strip()
    if not key or len(key) > KEY_LENGTH:
        raise InvalidInput(
            _("A purchase key is 1 to %(length)s characters.") % {"length": KEY_LENGTH},
            code="bad_key",
            field="key",
        )
    return key


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(_("cards is a whole number of cards from 1."), code="bad_count", field="cards")
    return value


def ledger_key(terminal: Terminal, key: str) -> str:
    """The key of the purchase's spend (cards.spend prefixes it with "card_spend:")."""
    return f"epurchase:{terminal.pk}:{key}"


def cells_of(card: ECard) -> list[int]:
    return list(bytes(card.cells))


def shown(card: ECard) -> ECardShown:
    return ECardShown(card=card.pk, cells=cells_of(card))


def _replay(terminal: Terminal, key: str, number: str, count: int, game: int | None) -> Bought | None:
    """The purchase already made under `key`, if any (the same body, else 409 key_reused)."""
    found = Purchase.objects.filter(terminal=terminal, key=key).select_related("player_card", "game").first()
    if found is None:
        return None
    if found.player_card.number != number or found.cards != count or game not in (None, found.game_id):
        raise Conflict(
            _("Purchase key %(key)s of this terminal was another purchase.") % {"key": key},
            code="key_reused",
            key=key,
        )
    cards = list(found.card_rows.order_by("position"))
    return Bought(found, cards, player_cards.balance(found.player_card), replayed=True)


def selling_game(terminal: Terminal) -> ElectronicGame | None:
    """The speciality's game on sale now (not locked), if any."""
    return ElectronicGame.objects.filter(
        speciality_id=terminal.speciality_id, state=EGameState.SELLING
    ).first()


def _sales_closed(game_id: int | None = None) -> Conflict:
    return Conflict(
        _("Sales are closed for this game: wait for the next one."), code="sales_closed", game=game_id
    )


def cards_of_terminal(terminal: Terminal, game: ElectronicGame | int) -> int:
    """How many cards the terminal has bought for `game`."""
    total = Purchase.objects.filter(game=game, terminal=terminal).aggregate(n=Sum("cards"))["n"]
    return int(total or 0)


def purchase(
    *, terminal: Terminal, card_number: str, cards: Any, key: Any, game: int | None = None
) -> Bought:
    """Buy `cards` cards with the player card `card_number` (its number or QR payload) for the speciality's
    game on sale (or `game`, which must be it). Refuses, writing nothing: 400 bad_key / bad_count /
    bad_card_number, 404 unknown_card (also another venue's), 409 terminal_out_of_service / no_session /
    terminal_not_verified / sales_closed / bad_count (not a size on sale) / max_cards / card_blocked /
    insufficient_balance / key_reused."""
    key = _key(key)
    count = _count(cards)
    number = player_cards.number_of(card_number)
    replay = _replay(terminal, key, number, count, game)
    if replay is not None:
        return replay
    found = selling_game(terminal)
    if found is None or (game is not None and game != found.pk):
        raise _sales_closed(game)
    with transaction.atomic():
        egame = share_egame(found.pk)
        locked = lock_terminal(terminal.pk)
        # Another request of this terminal under this key, decided while this one waited for the terminal.
        replay = _replay(locked, key, number, count, game)
        if replay is not None:
            return replay
        playable(locked)
        now = timezone.now()
        if egame is None or egame.state != EGameState.SELLING or now >= egame.sales_close_at:
            raise _sales_closed(found.pk)
        rules = rules_of(egame.version)
        if count not in rules.purchase_sizes:
            raise Conflict(
                _("A purchase is of %(sizes)s cards.")
                % {"sizes": ", ".join(str(n) for n in rules.purchase_sizes)},
                code="bad_count",
                sizes=list(rules.purchase_sizes),
            )
        have = cards_of_terminal(locked, egame)
        if have + count > rules.max_cards:
            raise Conflict(
                _("A terminal plays at most %(max)s cards a game; it has %(have)s.")
                % {"max": rules.max_cards, "have": have},
                code="max_cards",
                max_cards=rules.max_cards,
                have=have,
            )
        card = player_cards.find_card(venue_id=locked.device.venue_id, code=number)
        return _buy(locked, egame, card, count, key, rules.card_price, rules.layout, now)


def _buy(
    terminal: Terminal,
    game: ElectronicGame,
    card: PlayerCard,
    count: int,
    key: str,
    price: Decimal,
    layout: Layout,
    now: datetime,
) -> Bought:
    """The money, then the rows and the terminal's event (inside the purchase's transaction)."""
    seed = secrets.token_bytes(16)
    amount = money.cents(price * count)
    moved = player_cards.spend(
        card=card,
        amount=amount,
        key=ledger_key(terminal, key),
        actor=terminal.device.name,
        device=terminal.device,
        data={"game": game.pk, "terminal": terminal.pk, "key": key, "cards": count, "seed": seed.hex()},
    )
    if moved.replayed:  # cannot happen under the terminal's lock with no Purchase: a broken invariant
        raise IntegrityError(f"purchase {key} of terminal {terminal.pk} posted without its purchase")
    bought = Purchase.objects.create(
        game=game,
        terminal=terminal,
        player_card=moved.card,
        key=key,
        cards=count,
        amount=amount,
        seed=seed.hex(),
        transaction=moved.transaction,
        created_at=now,
    )
    rows = ECard.objects.bulk_create(
        ECard(game=game, purchase=bought, position=i, cells=bytes(cells))
        for i, cells in enumerate(layout.deal(seed, count), start=1)
    )
    tell_terminal(
        terminal,
        EventType.TERMINAL_CARDS,
        TerminalCards(
            terminal=terminal.pk,
            game=game.pk,
            purchase=bought.pk,
            cards=[shown(row) for row in rows],
            balance=moved.balance,
        ),
    )
    return Bought(bought, rows, moved.balance, replayed=False)
