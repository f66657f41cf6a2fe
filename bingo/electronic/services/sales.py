"""Selling electronic cards at a terminal (EB-04, EB-05.f): a player card's balance buys cards for the
speciality's game on sale; the cards are dealt from a fresh random seed kept on the purchase.

One purchase is one transaction: the game FOR SHARE (purchases do not wait for each other; the close of
sales, FOR UPDATE, waits for those in flight, so the sold set it counts is final), the terminal (its cards
in the game are counted one purchase at a time), then the card, checked against its player's limits and its
session's reality check (halls.cashier.services.limits.check_stake, the one check before a card stakes), and
its account through `cards.spend`, whose ledger entry is the purchase's audit record, then the Purchase and
ECard rows, and the terminal's event. A refusal raises before or inside it: nothing is written.
`(terminal, key)` makes a retry a no-op.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Sum
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from bingo.electronic.models import (
    ECard,
    EGameState,
    ElectronicGame,
    ElectronicSession,
    Purchase,
    Terminal,
)
from bingo.electronic.services.locks import (
    lock_player_cards_where,
    lock_terminal,
    lock_terminals_by_id,
    share_egame,
)
from bingo.electronic.services.readmodels import playable, playable_in
from bingo.electronic.services.steps import rules_of, tell_terminal
from halls import events, money
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, PlayerCard, TxKind
from halls.cashier.services import admitted, limits, player_cards
from halls.cashier.services import ledger as books
from halls.cashier.services.locks import lock_accounts, lock_accounts_where
from halls.errors import Conflict, DomainError, InvalidInput
from halls.eventtypes import ECardShown, EventType, TerminalCards
from halls.group_commit import GroupCommit, ProcessGroup, answer_of, together_or_one_by_one
from halls.services import venueclock

log = logging.getLogger(__name__)

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
    return None if found is None else _replayed(found, key, number, count, game)


def _key_reused(key: str) -> Conflict:
    return Conflict(
        _("Purchase key %(key)s of this terminal was another purchase.") % {"key": key},
        code="key_reused",
        key=key,
    )


def _replayed(found: Purchase, key: str, number: str, count: int, game: int | None) -> Bought:
    """The first answer of the purchase `found` under `key`, if the retry asks the same (else 409)."""
    if found.player_card.number != number or found.cards != count or game not in (None, found.game_id):
        raise _key_reused(key)
    cards = list(found.card_rows.order_by("position"))
    return Bought(found, cards, player_cards.balance(found.player_card), replayed=True)


def selling_game(terminal: Terminal) -> ElectronicGame | None:
    """The speciality's game on sale now (not locked), if any."""
    return (
        ElectronicGame.objects.filter(speciality_id=terminal.speciality_id, state=EGameState.SELLING)
        .select_related("version")
        .first()
    )


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
    reality_check_due / limit_reached / insufficient_balance / key_reused.

    Called outside a transaction on PostgreSQL (the API), the purchase goes to the process's group (see
    `write_group`); inside a caller's transaction or on SQLite it is written inline."""
    order = prepare(terminal=terminal, card_number=card_number, cards=cards, key=key, game=game)
    if isinstance(order, Bought):
        return order
    if _grouped():
        return purchase_group().submit(order)
    return _write_alone(order)


def prepare(
    *, terminal: Terminal, card_number: str, cards: Any, key: Any, game: int | None = None
) -> Order | Bought:
    """A purchase checked as far as it can be without a lock, its cards dealt (or, for a retry, the first
    answer)."""
    key = _key(key)
    count = _count(cards)
    number = player_cards.number_of(card_number)
    replay = _replay(terminal, key, number, count, game)
    if replay is not None:
        return replay  # a retry: answered at once
    return _order(terminal, number, count, key, game, selling_game(terminal))


def _order(
    terminal: Terminal, number: str, count: int, key: str, game: int | None, found: ElectronicGame | None
) -> Order:
    """The purchase for the game on sale `found`, its cards dealt; 409 sales_closed / bad_count."""
    if found is None or (game is not None and game != found.pk):
        raise _sales_closed(game)
    rules = rules_of(found.version)  # a game's version never changes: read before any lock
    if count not in rules.purchase_sizes:
        raise Conflict(
            _("A purchase is of %(sizes)s cards.")
            % {"sizes": ", ".join(str(n) for n in rules.purchase_sizes)},
            code="bad_count",
            sizes=list(rules.purchase_sizes),
        )
    # The cards are dealt before any lock is taken (what the locks guard does not need them).
    seed = secrets.token_bytes(16)
    return Order(
        terminal=terminal,
        number=number,
        count=count,
        key=key,
        asked=game,
        game=found.pk,
        price=rules.card_price,
        max_cards=rules.max_cards,
        seed=seed,
        cells=tuple(bytes(card) for card in rules.layout.deal(seed, count)),
        language=translation.get_language(),
    )


@dataclass(frozen=True)
class Order:
    """A purchase asked for and checked as far as it can be without a lock, its cards dealt."""

    terminal: Terminal
    number: str
    count: int
    key: str
    asked: int | None  # the game the terminal named, if any (its retry must name the same)
    game: int  # the game on sale when it was asked
    price: Decimal
    max_cards: int
    seed: bytes
    cells: tuple[bytes, ...]
    language: str | None = None  # the asker's: its refusal is told in it, whichever thread writes it


def _on_sale(order: Order, egame: ElectronicGame | None, venue_now: datetime) -> ElectronicGame:
    """The order's game, locked, still selling at `venue_now` (the venue's clock, halls.services.venueclock,
    as the game's `sales_close_at` is); else 409 sales_closed."""
    if egame is None or egame.state != EGameState.SELLING or venue_now >= egame.sales_close_at:
        raise _sales_closed(order.game)
    return egame


def _within_max(order: Order, have: int) -> None:
    """409 max_cards when the order takes the terminal (holding `have` cards of the game) past the max."""
    if have + order.count > order.max_cards:
        raise Conflict(
            _("A terminal plays at most %(max)s cards a game; it has %(have)s.")
            % {"max": order.max_cards, "have": have},
            code="max_cards",
            max_cards=order.max_cards,
            have=have,
        )


Told = list[tuple[str, EventType, Mapping[str, Any]]]


def _spend_data(order: Order, terminal: Terminal) -> dict[str, Any]:
    """What the purchase's ledger entry (its audit record) says of it."""
    return {
        "game": order.game,
        "terminal": terminal.pk,
        "key": order.key,
        "cards": order.count,
        "seed": order.seed.hex(),
    }


def _write_alone(order: Order) -> Bought:
    with transaction.atomic():
        egame = share_egame(order.game)
        locked = lock_terminal(order.terminal.pk)
        return _write_one(order, egame, locked, None, None)


def _write_one(
    order: Order, egame: ElectronicGame | None, locked: Terminal, card: PlayerCard | None, told: Told | None
) -> Bought:
    """The purchase under its game's share lock and its terminal's lock: the checks that need them, the
    money, the rows, the terminal's event (`told` collects it in a group; else it is emitted now)."""
    # Another request of this terminal under this key, decided while this one waited for the terminal.
    replay = _replay(locked, order.key, order.number, order.count, order.asked)
    if replay is not None:
        return replay
    playable(locked)
    now = timezone.now()
    egame = _on_sale(order, egame, venueclock.at(locked.device.venue_id, now))
    _within_max(order, cards_of_terminal(locked, egame))
    if card is None:
        card = player_cards.find_card(venue_id=locked.device.venue_id, code=order.number)
    amount = money.cents(order.price * order.count)
    stakes = limits.Stakes(now)
    card = limits.check_stake(card, amount, now, stakes=stakes)  # the player's limits, the reality check
    moved = player_cards.spend(
        card=card,
        amount=amount,
        key=ledger_key(locked, order.key),
        actor=locked.device.name,
        device=locked.device,
        data=_spend_data(order, locked),
    )
    if moved.replayed:  # cannot happen under the terminal's lock with no Purchase: a broken invariant
        raise IntegrityError(f"purchase {order.key} of terminal {locked.pk} posted without its purchase")
    stakes.playing([(locked.device, moved.card)])
    bought = Purchase.objects.create(
        game=egame,
        terminal=locked,
        player_card=moved.card,
        key=order.key,
        cards=order.count,
        amount=amount,
        seed=order.seed.hex(),
        transaction=moved.transaction,
        created_at=now,
    )
    rows = ECard.objects.bulk_create(
        ECard(game=egame, purchase=bought, position=i, cells=cells)
        for i, cells in enumerate(order.cells, start=1)
    )
    payload = TerminalCards(
        terminal=locked.pk,
        game=egame.pk,
        purchase=bought.pk,
        cards=[shown(row) for row in rows],
        balance=moved.balance,
    )
    if told is None:
        tell_terminal(locked, EventType.TERMINAL_CARDS, payload)
    else:
        told.append((locked.stream, EventType.TERMINAL_CARDS, payload))
    return Bought(bought, rows, moved.balance, replayed=False)


# --- groups ---------------------------------------------------------------------------------------------
#
# Every purchase of a venue updates its sales account and its audit chain's head, each held until commit:
# one at a time, and under load the hand-over between transactions is what costs. So, as the casino
# tables' bets do (jackpots.tables.services.bets), the purchases a process receives at once (the HTTP
# door's requests through `purchase_group`, the terminal sockets' frames through a batch of the door's,
# bingo.electronic.purchase_frames) are written in ONE transaction with set-based statements
# (`_write_together`): the group's games FOR SHARE, terminals, player cards and their accounts locked
# first, in id order, one statement each (the order a purchase alone takes them); each purchase checked in
# turn against what is held (a refused one writes nothing of its own and spoils nothing: its checks come
# before its money); the money of the others through books.post_many, their rows in bulk, their events in
# one emit_many, one commit. If the group cannot commit as a whole (a database error, a deadlock) its
# purchases are written again one by one, each answered as if alone.


def _grouped() -> bool:
    return (
        _group.enabled()
        and connection.vendor == "postgresql"
        and not transaction.get_connection().in_atomic_block
    )


def purchase_group() -> GroupCommit[Order, Bought]:
    """This process's group of purchases (a new one after a fork), sized by electronic sales' own settings
    (HALL_SALES_GROUP_SIZE, _WAIT_MS, _RUNNERS)."""
    return _group.get()


_Answer = Bought | BaseException


def _speaking(language: str | None) -> contextlib.AbstractContextManager[None]:
    """A refusal in the asker's language (a group is written on one caller's thread, or a door's)."""
    return translation.override(language) if language else contextlib.nullcontext()


def _write_alone_speaking(order: Order) -> Bought:
    with _speaking(order.language):
        return _write_alone(order)


def _alone(order: Order) -> _Answer:
    return answer_of(_write_alone_speaking, order)


def write_group(orders: Sequence[Order]) -> list[_Answer]:
    """Each purchase's answer (bought, or its refusal): together in one transaction, or one by one if the
    group cannot commit as a whole."""
    return together_or_one_by_one(orders, _write_together, _write_alone_speaking, log=log, what="purchases")


_group: ProcessGroup[Order, Bought] = ProcessGroup(write_group, "HALL_SALES_GROUP")


def _write_together(orders: Sequence[Order]) -> list[_Answer]:
    """The group in one transaction with set-based statements: the games FOR SHARE, the terminals, player
    cards and their accounts locked in id order, one statement each (the documented lock order); the keys
    already bought under those locks and the cards each terminal has in each game, one query each; then
    each purchase checked in arrival order against what is held (a refusal writes nothing of its own and
    spoils nothing); the money of all the others through one `books.post_many` per venue (its transactions,
    legs and audit entries in bulk), their Purchase and ECard rows in bulk, their events in one emit_many.

    A purchase whose key an earlier purchase of the group took is that one's retry (its answer, with the
    card's balance as it stood then) or key_reused, as it would be one after the other."""
    answers: dict[int, _Answer] = {}
    with transaction.atomic():
        games = {pk: share_egame(pk) for pk in sorted({o.game for o in orders})}
        terminals = lock_terminals_by_id(o.terminal.pk for o in orders)
        pairs = {(o.terminal.pk, o.key) for o in orders}
        earlier = {
            (p.terminal_id, p.key): p
            for p in Purchase.objects.filter(
                terminal_id__in={t for t, _k in pairs}, key__in={k for _t, k in pairs}
            ).select_related("player_card", "game")
        }
        sessions = {
            s.speciality_id: s
            for s in ElectronicSession.objects.filter(
                speciality_id__in={t.speciality_id for t in terminals.values()}, closed_at__isnull=True
            )
        }
        venues = {t.device.venue_id for t in terminals.values()}
        cards = lock_player_cards_where(venue_id__in=venues, number__in={o.number for o in orders})
        found = {(c.venue_id, c.number): c for c in cards.values()}
        # The players' limits (locked after the cards) and reality checks; the group's stakes counted.
        stakes = limits.Stakes(timezone.now())
        stakes.load(cards.values())
        accounts = {a.pk: a for a in lock_accounts_where(card_id__in=cards)}
        funded = {a.card_id for a in accounts.values()}
        # A card never funded has no account yet (as cards.spend makes it): made and locked after the rest.
        unfunded = [books.card_account(card) for card in cards.values() if card.pk not in funded]
        accounts.update(lock_accounts(a.pk for a in unfunded))
        # Each card's player's admission (services.admitted), read once, where a venue's cards need it.
        gated = {v for v in venues if admitted.cards_need_admission(v)}
        admissions = admitted.admissions_of([c for c in cards.values() if c.venue_id in gated])
        by_card = {a.card_id: a for a in accounts.values() if a.card_id is not None}
        have = {
            (row["terminal_id"], row["game_id"]): int(row["n"] or 0)
            for row in Purchase.objects.filter(game_id__in=games, terminal_id__in=terminals)
            .values("terminal_id", "game_id")
            .annotate(n=Sum("cards"))
            .order_by()
        }
        balances = {pk: a.balance for pk, a in accounts.items()}
        now = timezone.now()
        offsets: dict[int, timedelta] = {}  # each venue's clock, read once for the group
        taken: dict[int, tuple[PlayerCard, Decimal, Decimal]] = {}  # order -> its card, amount, balance after
        first_of: dict[tuple[int, str], int] = {}  # a key taken by an order of the group: that order
        again: dict[int, tuple[int, Decimal]] = {}  # its retry in the group -> the order, the balance then
        for i, order in enumerate(orders):  # in arrival order: one terminal's purchases one after another
            pair = (order.terminal.pk, order.key)
            locked = terminals[order.terminal.pk]
            try:
                with _speaking(order.language):
                    if pair in first_of:  # a retry of a purchase of this group
                        j = first_of[pair]
                        if (orders[j].number, orders[j].count) != (order.number, order.count) or (
                            order.asked not in (None, orders[j].game)
                        ):
                            raise _key_reused(order.key)
                        again[i] = (j, balances[by_card[taken[j][0].pk].pk])
                        continue
                    if pair in earlier:  # bought while this one waited for the terminal: its answer
                        first = _replayed(earlier[pair], order.key, order.number, order.count, order.asked)
                        held_now = by_card.get(first.purchase.player_card_id)  # its card's balance now
                        answers[i] = (
                            first if held_now is None else replace(first, balance=balances[held_now.pk])
                        )
                        continue
                    venue_id = locked.device.venue_id
                    if venue_id not in offsets:
                        offsets[venue_id] = venueclock.offset(venue_id)
                    venue_now = now + offsets[venue_id]
                    card, amount = _check(
                        order, locked, games[order.game], venue_now, sessions, have, found, cards
                    )
                    if card.pk in admissions and not admitted.admitted(admissions[card.pk], venue_now):
                        raise admitted.card_not_admitted(card)
                    account = by_card[card.pk]
                    if balances[account.pk] < amount:
                        raise player_cards.short(account, balances[account.pk], amount)
                    stakes.check(card, amount)
            except DomainError as exc:
                answers[i] = exc  # refused before its money: nothing of its own written
                continue
            balances[account.pk] -= amount
            have[(locked.pk, order.game)] = have.get((locked.pk, order.game), 0) + order.count
            taken[i] = (card, amount, balances[account.pk])
            first_of[pair] = i
        if taken:
            _write_taken(orders, taken, terminals, games, accounts, now, answers)
            stakes.playing(
                (terminals[orders[i].terminal.pk].device, card) for i, (card, _a, _b) in taken.items()
            )
    for i, (j, balance) in again.items():
        bought = answers[j]
        assert isinstance(bought, Bought)
        answers[i] = replace(bought, balance=balance, replayed=True)
    return [answers[i] for i in range(len(orders))]


def _check(
    order: Order,
    terminal: Terminal,
    egame: ElectronicGame | None,
    venue_now: datetime,
    sessions: Mapping[int, ElectronicSession],
    have: Mapping[tuple[int, int], int],
    found: Mapping[tuple[int, str], PlayerCard],
    locked_cards: Mapping[int, PlayerCard],
) -> tuple[PlayerCard, Decimal]:
    """`_write_one`'s checks on what the group holds locked: the locked card and the amount, or why not."""
    playable_in(terminal, sessions.get(terminal.speciality_id))
    egame = _on_sale(order, egame, venue_now)
    _within_max(order, have.get((terminal.pk, egame.pk), 0))
    read = found.get((terminal.device.venue_id, order.number))
    if read is None:
        raise player_cards.unknown_card(order.number)
    card = locked_cards[read.pk]
    player_cards.check_active(card)
    return card, money.cents(order.price * order.count)


def _write_taken(
    orders: Sequence[Order],
    taken: Mapping[int, tuple[PlayerCard, Decimal, Decimal]],
    terminals: Mapping[int, Terminal],
    games: Mapping[int, ElectronicGame | None],
    accounts: Mapping[int, Account],
    now: datetime,
    answers: dict[int, _Answer],
) -> None:
    """The money of the purchases the group took (one post_many per venue, on the card accounts the group
    holds), their rows written inside it before the venue's shared rows are taken, then their events."""
    by_card = {a.card_id: a for a in accounts.values() if a.card_id is not None}
    rows_of: dict[int, tuple[Purchase, list[ECard]]] = {}
    for venue_id in sorted({terminals[orders[i].terminal.pk].device.venue_id for i in taken}):
        mine = [i for i in taken if terminals[orders[i].terminal.pk].device.venue_id == venue_id]
        sales_account = books.venue_account(venue_id, Kind.SALES)
        postings = []
        for i in mine:
            order, (card, amount, _after) = orders[i], taken[i]
            terminal = terminals[order.terminal.pk]
            postings.append(
                books.Posting(
                    kind=TxKind.CARD_SPEND,
                    key=f"card_spend:{ledger_key(terminal, order.key)}",
                    legs=[
                        ledger.debit(by_card[card.pk].pk, amount),
                        ledger.credit(sales_account.pk, amount),
                    ],
                    actor=terminal.device.name,
                    device=terminal.device.name[:80],
                    data={"card": card.number, **_spend_data(order, terminal)},
                )
            )

        def rows(posted: list[books.Posted], mine: list[int] = mine) -> None:
            for i, moved in zip(mine, posted, strict=True):
                if moved.replayed:  # cannot happen under the terminal's lock with no Purchase
                    raise IntegrityError(f"purchase {orders[i].key} posted without its purchase")
            rows_of.update(_purchase_rows(orders, taken, terminals, games, mine, posted, now))

        books.post_many(
            venue_id=venue_id,
            postings=postings,
            held={**accounts, sales_account.pk: sales_account},
            then=rows,
        )
    told: Told = []
    for i in taken:
        purchase, mine_rows = rows_of[i]
        terminal = terminals[orders[i].terminal.pk]
        balance = taken[i][2]
        told.append(
            (
                terminal.stream,
                EventType.TERMINAL_CARDS,
                TerminalCards(
                    terminal=terminal.pk,
                    game=orders[i].game,
                    purchase=purchase.pk,
                    cards=[shown(row) for row in mine_rows],
                    balance=balance,
                ),
            )
        )
        answers[i] = Bought(purchase, mine_rows, balance, replayed=False)
    events.emit_many(told)


def _purchase_rows(
    orders: Sequence[Order],
    taken: Mapping[int, tuple[PlayerCard, Decimal, Decimal]],
    terminals: Mapping[int, Terminal],
    games: Mapping[int, ElectronicGame | None],
    mine: Sequence[int],
    posted: Sequence[books.Posted],
    now: datetime,
) -> dict[int, tuple[Purchase, list[ECard]]]:
    """The Purchase and ECard rows of the orders `mine`, each on its posted transaction, in bulk."""
    bought = Purchase.objects.bulk_create(
        Purchase(
            game=games[orders[i].game],
            terminal=terminals[orders[i].terminal.pk],
            player_card=taken[i][0],
            key=orders[i].key,
            cards=orders[i].count,
            amount=taken[i][1],
            seed=orders[i].seed.hex(),
            transaction=moved.transaction,
            created_at=now,
        )
        for i, moved in zip(mine, posted, strict=True)
    )
    cards = ECard.objects.bulk_create(
        ECard(game_id=orders[i].game, purchase=purchase, position=n, cells=cells)
        for i, purchase in zip(mine, bought, strict=True)
        for n, cells in enumerate(orders[i].cells, start=1)
    )
    made: dict[int, tuple[Purchase, list[ECard]]] = {}
    at = 0
    for i, purchase in zip(mine, bought, strict=True):
        made[i], at = (purchase, cards[at : at + orders[i].count]), at + orders[i].count
    return made


# --- many at once (a socket door's batch) ------------------------------------------------------------------


@dataclass(frozen=True)
class Ask:
    """A purchase as a door received it, nothing checked yet; `language`: the one its refusal is told in."""

    terminal: Terminal  # with its device
    card_number: Any
    cards: Any
    key: Any
    game: Any = None
    language: str | None = None


def _game(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(
            _("game is a game id, or null for the game on sale."), code="bad_game", field="game"
        )
    return int(value)


@dataclass(frozen=True)
class Prepared:
    """A batch of asks checked as far as they can be without a lock: the answers known already (refusals,
    retries' first answers) and the orders to write, each by its ask's index."""

    size: int
    answers: Mapping[int, _Answer]
    orders: Mapping[int, Order]


def purchase_many(asks: Sequence[Ask]) -> list[_Answer]:
    """Each purchase's answer (bought, a retry's first answer, or its refusal), as `purchase` would give it
    one by one, with a few queries for the whole batch: the retries found in one query, the games on sale
    read in one, then the new purchases written together (`write_group`; on SQLite, or inside a caller's
    transaction, one after the other)."""
    return write_prepared(prepare_many(asks))


def prepare_many(asks: Sequence[Ask]) -> Prepared:
    """`purchase_many`'s first half, with no lock taken: the asks checked, the retries answered, the games
    on sale read and the new orders' cards dealt (a door prepares one batch while another is written)."""
    answers: dict[int, _Answer] = {}
    checked: dict[int, tuple[str, int, str, int | None]] = {}
    for i, ask in enumerate(asks):
        try:
            with _speaking(ask.language):
                number = player_cards.number_of(ask.card_number if isinstance(ask.card_number, str) else "")
                checked[i] = (_key(ask.key), _count(ask.cards), number, _game(ask.game))
        except DomainError as exc:
            answers[i] = exc
    if checked:
        pairs = {(asks[i].terminal.pk, c[0]) for i, c in checked.items()}
        earlier = {
            (p.terminal_id, p.key): p
            for p in Purchase.objects.filter(
                terminal_id__in={t for t, _k in pairs}, key__in={k for _t, k in pairs}
            ).select_related("player_card", "game")
        }
        specialities = {asks[i].terminal.speciality_id for i in checked}
        on_sale = {
            g.speciality_id: g
            for g in ElectronicGame.objects.filter(
                speciality_id__in=specialities, state=EGameState.SELLING
            ).select_related("version")
        }
    orders: dict[int, Order] = {}
    for i, (key, count, number, game) in checked.items():
        ask = asks[i]
        try:
            with _speaking(ask.language):
                found = earlier.get((ask.terminal.pk, key))
                if found is not None:
                    answers[i] = _replayed(found, key, number, count, game)
                else:
                    order = _order(
                        ask.terminal, number, count, key, game, on_sale.get(ask.terminal.speciality_id)
                    )
                    orders[i] = replace(order, language=ask.language)
        except DomainError as exc:
            answers[i] = exc
    return Prepared(len(asks), answers, orders)


def write_prepared(prepared: Prepared) -> list[_Answer]:
    """`purchase_many`'s second half: the prepared orders written (together in one transaction on
    PostgreSQL outside a caller's transaction, else one after the other); every ask's answer in order."""
    answers = dict(prepared.answers)
    if prepared.orders:
        orders = list(prepared.orders.values())
        written = write_group(orders) if _grouped() else [_alone(order) for order in orders]
        answers.update(zip(prepared.orders, written, strict=True))
    return [answers[i] for i in range(prepared.size)]
