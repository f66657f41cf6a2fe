"""Player cards (tarjeta de jugador): issued anonymous, found by their printed number or QR payload, loaded
at the cashier (cash or bank card) or by a device's bill reader (services.devices), spent by terminals,
cashed out in cash; blocked when lost, replaced (the new card takes the balance), optionally linked to a
registered player.

A card's money is its ledger account (services.ledger.card_account); every move is a ledger transaction
posted under the caller's key, so a retry is a no-op. A blocked card refuses every operation
(`card_blocked`). Lock order: the cashier's shift, the card, then the accounts `post` takes money from.
Personal data (a player's name and ID document) never goes into the audit's data or an event.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from halls import access, db_retry, i18n, money
from halls.access import require_role
from halls.actors import Actor
from halls.cashier import cardnumber, hooks, ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import (
    Account,
    CashDevice,
    LedgerTransaction,
    Leg,
    Means,
    Player,
    PlayerCard,
    PlayerCardState,
    Shift,
    Till,
    TxKind,
)
from halls.cashier.printing.document import Barcode, Document, Field, Symbology
from halls.cashier.services import admitted
from halls.cashier.services import ledger as books
from halls.cashier.services.locks import (
    lock_accounts,
    lock_card_accounts,
    lock_player_card,
    lock_player_cards,
)
from halls.cashier.services.printing import PrintResult, print_document
from halls.cashier.services.shifts import open_shift_of, open_shifts_of
from halls.errors import Conflict, DomainError, InvalidInput, NotFound
from halls.group_commit import ProcessGroup, together_or_one_by_one
from halls.models import Role, Venue
from halls.services import audit

# The largest amount a ledger leg holds: numeric(14, 2).
MAX_AMOUNT = money.MAX_BET
log = logging.getLogger(__name__)
KEY_LENGTH = 80  # the caller's idempotency key; the ledger key adds the operation's prefix


@dataclass(frozen=True)
class CardMove:
    """A move of a card's money: the transaction (the first one, for a retry) and the card's balance now."""

    card: PlayerCard
    transaction: LedgerTransaction
    amount: Decimal
    balance: Decimal
    replayed: bool


@dataclass(frozen=True)
class HistoryEntry:
    """One leg on the card: + money in, - money out; `balance` is the card's balance after it."""

    transaction_id: int
    kind: str
    kind_label: str
    amount: Decimal
    balance: Decimal
    at: datetime
    by: str  # the cashier's or the device's label
    device: str
    memo: str


@dataclass(frozen=True)
class Replacement:
    old: PlayerCard
    new: PlayerCard
    moved: Decimal  # the balance the new card received
    transaction: LedgerTransaction | None  # none when the old card was empty
    replayed: bool  # the card had been replaced already: this is that replacement


# --- checks ---------------------------------------------------------------------------------------------


def amount_of(value: Any, *, field: str = "amount") -> Decimal:
    """A money amount for a card: positive, whole cents, at most MAX_AMOUNT; InvalidInput naming `field`."""
    try:
        amount = money.parse(field, value, places=money.CENT_PLACES, positive=True, maximum=MAX_AMOUNT)
    except money.MoneyError:
        raise InvalidInput(
            _("%(field)s must be an amount above 0 in whole cents, at most %(maximum)s; got %(value)s.")
            % {"field": field, "maximum": i18n.amount(MAX_AMOUNT), "value": value},
            code="bad_amount",
            field=field,
        ) from None
    return money.cents(amount)


def _key(value: str) -> str:
    key = str(value or "").strip()
    if not key or len(key) > KEY_LENGTH:
        raise InvalidInput(
            _("The idempotency key is 1 to %(length)s characters.") % {"length": KEY_LENGTH},
            code="bad_idempotency_key",
            field="idempotency_key",
        )
    return key


def number_of(code: str, *, field: str = "card") -> str:
    """The card number in a typed number or a QR payload; InvalidInput naming `field` if it is not one."""
    try:
        return cardnumber.parse(str(code or ""))
    except cardnumber.BadNumber:
        raise InvalidInput(
            _(
                "%(field)s %(code)r is not a card number: %(length)s digits whose last is a check digit "
                "(a digit may be mistyped)."
            )
            % {"field": field, "code": str(code)[:40], "length": cardnumber.LENGTH},
            code="bad_card_number",
            field=field,
        ) from None


def find_card(*, venue_id: int, code: str, field: str = "card") -> PlayerCard:
    """The venue's card with this number or QR payload; 404 unknown_card (also for another venue's)."""
    number = number_of(code, field=field)
    card = PlayerCard.objects.filter(venue_id=venue_id, number=number).first()
    if card is None:
        raise unknown_card(number)
    return card


def unknown_card(number: str) -> NotFound:
    """No card `number` in the venue (a batch that reads its cards at once refuses each missing one so)."""
    return NotFound(
        _("No card %(number)s in this venue.") % {"number": cardnumber.printed(number)}, code="unknown_card"
    )


def short(account: Account, balance: Decimal, needed: Decimal) -> Conflict:
    """The ledger's insufficient_balance for a card account holding `balance` (a batch of spends checks the
    balances it holds locked before it posts them all, books.post_many)."""
    return books._short(account, balance, needed)


def check_active(card: PlayerCard) -> None:
    if card.state == PlayerCardState.BLOCKED:
        raise Conflict(
            _("Card %(number)s is blocked: it cannot be used.") % {"number": cardnumber.printed(card.number)},
            code="card_blocked",
            number=card.number,
        )


def _usable(card: PlayerCard, ledger_key: str) -> None:
    """`check_active`, unless `ledger_key` was posted already: a retry of a move made before the card was
    blocked answers that move (post compares its legs), so a till that lost the answer learns the money
    moved instead of reading card_blocked as "not done"."""
    if card.state == PlayerCardState.BLOCKED and _previous(card.venue_id, ledger_key) is None:
        check_active(card)


def _admitted(card: PlayerCard, ledger_key: str) -> None:
    """admitted.check_card (a load or a use needs the card's player admitted today, where the venue's cards
    need it), unless `ledger_key` was posted already: a retry answers the move made while they were."""
    try:
        admitted.check_card(card)
    except Conflict:
        if _previous(card.venue_id, ledger_key) is None:
            raise


def balance(card: PlayerCard) -> Decimal:
    """What the hall owes the card's bearer."""
    return books.card_account(card).balance


def _move(card: PlayerCard, posted: books.Posted, amount: Decimal) -> CardMove:
    return CardMove(
        card=card,
        transaction=posted.transaction,
        amount=amount,
        balance=balance(card),
        replayed=posted.replayed,
    )


def _previous(venue_id: int, key: str) -> LedgerTransaction | None:
    return LedgerTransaction.objects.filter(venue_id=venue_id, key=key).first()


# --- issuing --------------------------------------------------------------------------------------------


def _new_card(venue_id: int, player: Player | None) -> PlayerCard:
    """A card with a fresh random number and its account (no audit: the caller writes it last)."""
    for _attempt in range(5):
        number = cardnumber.new_number(secrets.randbelow)
        try:
            with transaction.atomic():  # a savepoint: a number already taken is drawn again
                card = PlayerCard.objects.create(
                    venue_id=venue_id, number=number, player=player, created_at=timezone.now()
                )
                books.card_account(card)
            return card
        except IntegrityError:  # the number is taken (1 in 10^15 per card): draw another
            continue
    raise RuntimeError("no free card number after 5 draws")


def _audit_issued(card: PlayerCard, actor: Actor) -> None:
    audit.record(
        venue_id=card.venue_id,
        actor=actor,
        action="cashier.card_issued",
        obj=card,
        data={"number": card.number, "player": card.player_id},
    )


def issue_card(*, venue_id: int, actor: Actor, player: Player | None = None) -> PlayerCard:
    """A new card with a fresh random number (unique; a Luhn check digit), balance zero: anonymous, or the
    player's. Where the venue's cards need admission (services.admitted), only for a player admitted today
    (409 player_not_admitted, nothing written)."""
    if player is not None and player.venue_id != venue_id:
        raise NotFound(_("No such player in this venue."), code="unknown_player")
    admitted.check_player(player, venue_id=venue_id)
    with transaction.atomic():
        card = _new_card(venue_id, player)
        _audit_issued(card, actor)
    return card


# --- money in and out at the cashier --------------------------------------------------------------------


def cash_in(*, card: PlayerCard, amount: Decimal, means: Means | str, key: str, actor: User) -> CardMove:
    """The cashier loads `amount` onto the card, paid in cash or by bank card: that drawer of the
    cashier's open shift is debited, the card credited. Retried under `key`: the first move.

    On PostgreSQL, outside a caller's transaction, the cash-ins this process receives at once are written
    in one transaction (a group commit, HALL_CASH_IN_GROUP_*: see `_cash_ins_together`), each answered as
    if alone: one audit append and one commit for the group, not one each on the venue's chain. The
    cashier's role is checked there too, for the group's cashiers in one query (before anything is locked;
    a refused one is answered its refusal), so a caller joins the group at once."""
    grouped = (
        _cash_in_group.enabled()
        and connection.vendor == "postgresql"
        and not connection.in_atomic_block
        and not access.reading_now()  # an inspector's read rights are the request's own: checked here
    )
    if not grouped:
        require_role(actor, card.venue_id, Role.CASHIER)
    amount = amount_of(amount)
    if means not in Means.values:
        raise InvalidInput(
            _("The means of payment is one of %(means)s.") % {"means": ", ".join(Means.values)},
            code="bad_means",
            field="means",
        )
    order = _CashIn(
        card_id=card.pk,
        venue_id=card.venue_id,
        amount=amount,
        means=str(means),
        ledger_key=f"card_cash_in:{_key(key)}",
        actor=actor,
        language=translation.get_language(),
        role_checked=not grouped,
    )
    if grouped:
        return _cash_in_group.get().submit(order)
    return _cash_in_alone(order)


@dataclass(frozen=True)
class _CashIn:
    """One cash-in as `cash_in` was asked for it (checked), for a group or alone."""

    card_id: int
    venue_id: int
    amount: Decimal
    means: str
    ledger_key: str
    actor: User
    language: str | None
    role_checked: bool = True  # False: the cashier's role is checked where it is written (a group)


def _cash_in_alone(order: _CashIn) -> CardMove:
    return db_retry.run("cashier.cash_in", lambda: _cash_in_once(order))


def _cash_in_once(order: _CashIn) -> CardMove:
    if not order.role_checked:
        require_role(order.actor, order.venue_id, Role.CASHIER)
    with transaction.atomic():
        shift = open_shift_of(venue_id=order.venue_id, cashier=order.actor)
        locked = lock_player_card(order.card_id)
        _usable(locked, order.ledger_key)
        _admitted(locked, order.ledger_key)
        posting = _cash_in_posting(
            order, shift, locked, books.drawer(shift, order.means), books.card_account(locked)
        )
        (posted,) = books.post_many(venue_id=order.venue_id, postings=[posting])
        return _move(locked, posted, order.amount)


def _cash_in_posting(
    order: _CashIn, shift: Shift, card: PlayerCard, till: Account, account: Account
) -> books.Posting:
    return books.Posting(
        kind=TxKind.CARD_CASH_IN,
        key=order.ledger_key,
        legs=[ledger.debit(till.pk, order.amount), ledger.credit(account.pk, order.amount)],
        actor=order.actor,
        shift=shift,
        device=shift.till.name,
        data={"card": card.number, "means": order.means},
    )


def _cash_ins_together(orders: Sequence[_CashIn]) -> list[CardMove | BaseException]:
    """A group of one venue's cash-ins: the cashiers' roles of those not checked yet, in one query (a
    refused one is answered its refusal), then the others in one transaction (`_cash_ins_allowed`)."""
    answers: list[CardMove | BaseException | None] = [None] * len(orders)
    unchecked = [o.actor for o in orders if not o.role_checked]
    held = access.write_roles_of(unchecked, orders[0].venue_id) if unchecked else {}
    here = translation.get_language()
    for i, order in enumerate(orders):
        if not order.role_checked:
            with _speaking(order.language, here):
                answers[i] = access.role_refusal(held[order.actor.pk], Role.CASHIER)
    allowed = [i for i, answer in enumerate(answers) if answer is None]
    if allowed:
        written = _cash_ins_allowed([orders[i] for i in allowed])
        for i, answer in zip(allowed, written, strict=True):
            answers[i] = answer
    return [a for a in answers if a is not None]


def _cash_ins_allowed(orders: Sequence[_CashIn]) -> list[CardMove | BaseException]:
    """A group of one venue's cash-ins in one transaction, as `_cash_in_once` would write them one after
    the other: the cashiers' open shifts locked in id order, then the cards, then the drawers and the
    cards' accounts (halls.locks), each cash-in checked in turn (a refused one is answered its refusal and
    writes nothing), the others posted by one `post_many` (one audit append for them all)."""
    venue_id = orders[0].venue_id
    answers: list[CardMove | BaseException | None] = [None] * len(orders)
    with transaction.atomic():
        cashiers = list({o.actor.pk: o.actor for o in orders}.values())
        shifts = open_shifts_of(venue_id=venue_id, cashiers=cashiers)
        shifts_by_id = {shift.pk: shift for shift in shifts.values() if isinstance(shift, Shift)}
        cards = lock_player_cards(o.card_id for o in orders)
        codes = {
            (shift.pk, means): books.drawer_code(shift.pk, means)
            for shift in shifts.values()
            if isinstance(shift, Shift)
            for means in sorted({o.means for o in orders if o.actor.pk == shift.cashier_id})
        }
        # The drawers and the cards' accounts found by their codes and cards, and locked, in one statement,
        # in id order (a shift's first load makes its drawer, a card's its account: made, then locked).
        locked = {a.pk: a for a in lock_card_accounts(cards, venue_id=venue_id, codes=codes.values())}
        accounts = {a.card_id: a for a in locked.values() if a.card_id is not None}
        by_code = {a.code: a for a in locked.values() if a.kind == Kind.DRAWER}
        made_drawers = {
            key: books.drawer(shifts_by_id[key[0]], key[1])
            for key, code in sorted(codes.items())
            if code not in by_code
        }
        made = {
            card_id: books.card_account(cards[card_id]) for card_id in sorted(cards.keys() - accounts.keys())
        }
        relocked = lock_accounts([*(a.pk for a in made.values()), *(a.pk for a in made_drawers.values())])
        for card_id, account in made.items():
            locked[account.pk] = accounts[card_id] = relocked[account.pk]
        for account in made_drawers.values():
            locked[account.pk] = by_code[account.code] = relocked[account.pk]
        drawers = {key: by_code[code] for key, code in codes.items()}
        earlier = books.posted_under(venue_id, (o.ledger_key for o in orders))  # under the cards' locks
        running = {pk: a.balance for pk, a in locked.items()}
        postings: list[books.Posting] = []
        chosen: list[int] = []
        after: dict[int, Decimal] = {}
        seen: set[str] = set()
        until = admitted.admissions_of(list(cards.values()))
        here = translation.get_language()
        for i, order in enumerate(orders):
            card = cards[order.card_id]
            account = locked[accounts[card.pk].pk]
            shift = shifts[order.actor.pk]
            fresh = order.ledger_key not in earlier and order.ledger_key not in seen
            try:
                with _speaking(order.language, here):
                    if isinstance(shift, Conflict):
                        raise shift
                    if fresh:
                        check_active(card)
                        admitted.check_until(card, until[card.pk])
            except DomainError as exc:
                answers[i] = exc
                continue
            if fresh:
                running[account.pk] += order.amount
                seen.add(order.ledger_key)
            till = drawers[(shift.pk, order.means)]
            postings.append(_cash_in_posting(order, shift, card, till, account))
            chosen.append(i)
            after[i] = running[account.pk]
        posted = books.post_many(venue_id=venue_id, postings=postings, held=locked, looked_up=earlier)
        for i, one in zip(chosen, posted, strict=True):
            order = orders[i]
            balance = after[i] if not one.replayed else running[accounts[order.card_id].pk]
            answers[i] = CardMove(
                card=cards[order.card_id],
                transaction=one.transaction,
                amount=order.amount,
                balance=balance,
                replayed=one.replayed,
            )
    return [a for a in answers if a is not None]


def _cash_in_alone_speaking(order: _CashIn) -> CardMove:
    with _speaking(order.language):
        return _cash_in_alone(order)


def write_cash_ins(orders: Sequence[_CashIn]) -> list[CardMove | BaseException]:
    """Each cash-in's answer: each venue's cash-ins together in one transaction, or one by one if they
    cannot commit as a whole (a database error, a deadlock)."""
    return _by_venue(orders, _cash_ins_together, _cash_in_alone_speaking, what="card cash-ins")


_cash_in_group: ProcessGroup[_CashIn, CardMove] = ProcessGroup(write_cash_ins, "HALL_CASH_IN_GROUP")


@db_retry.retried("cashier.cash_out")
def cash_out(
    *,
    card: PlayerCard,
    amount: Decimal | None,
    key: str,
    actor: User,
    identification: int | None = None,
) -> CardMove:
    """The cashier pays the card's balance out in cash: `amount`, or all of it when None. The card is
    debited, the cash drawer of the cashier's open shift credited. Refuses `insufficient_balance` (the
    card holds less) and `drawer_short` (the drawer does), writing nothing. A payout to a person: the
    payout guards (halls.cashier.hooks, the cage's AML gate) refuse an amount at or above the threshold
    without the bearer's `identification`, and record it after."""
    require_role(actor, card.venue_id, Role.CASHIER)
    wanted = None if amount is None else amount_of(amount)
    key = _key(key)
    ledger_key = f"card_cash_out:{key}"
    with transaction.atomic():
        shift = open_shift_of(venue_id=card.venue_id, cashier=actor)
        locked = lock_player_card(card.pk)
        _usable(locked, ledger_key)
        account = books.card_account(locked)
        if wanted is None:
            previous = _previous(card.venue_id, ledger_key)
            if previous is not None:  # a retry of "all of it": what was paid then
                paid = next((leg.amount for leg in previous.legs.all() if leg.account_id == account.pk), None)
                wanted = paid if paid is not None and paid > 0 else account.balance
            else:
                wanted = account.balance
            if wanted <= 0:
                raise Conflict(
                    _("The card's balance is %(balance)s: there is nothing to pay out.")
                    % {"balance": i18n.amount(account.balance)},
                    code="insufficient_balance",
                    balance=money.text(account.balance),
                )
        if wanted > account.balance and _previous(card.venue_id, ledger_key) is None:
            # The card's shortfall is named before the drawer's (post checks accounts in id order).
            raise Conflict(
                _("The card's balance is %(balance)s: %(needed)s is more than it holds.")
                % {
                    "balance": i18n.amount(account.balance),
                    "needed": i18n.amount(wanted),
                },
                code="insufficient_balance",
                balance=money.text(account.balance),
                needed=money.text(wanted),
            )
        claim = hooks.PayoutClaim(
            venue_id=card.venue_id,
            amount=wanted,
            kind="card_cash_out",
            identification=identification,
            card_id=locked.pk,
        )
        first = _previous(card.venue_id, ledger_key) is None
        if first:  # a retry answers the move already made
            hooks.check_payout(claim)
        till = books.drawer(shift, Means.CASH)
        posted = books.post(
            venue_id=card.venue_id,
            kind=TxKind.CARD_CASH_OUT,
            key=ledger_key,
            legs=[ledger.debit(account.pk, wanted), ledger.credit(till.pk, wanted)],
            actor=actor,
            shift=shift,
            device=shift.till.name,
            data={"card": locked.number},
        )
        if not posted.replayed:  # after post's audit entry: the venue's audit chain is held
            hooks.payout_made(claim, posted.transaction.pk, actor)
        return _move(locked, posted, wanted)


# --- spending (electronic bingo's terminals) ------------------------------------------------------------


@dataclass(frozen=True)
class _Spend:
    """One spend as `spend` was asked for it (checked), for a group or alone."""

    card_id: int
    venue_id: int
    amount: Decimal
    ledger_key: str
    actor: Actor
    device: str
    memo: str
    data: dict[str, Any]
    language: str | None


def spend(
    *,
    card: PlayerCard,
    amount: Decimal,
    key: str,
    actor: Actor,
    device: CashDevice | str = "",
    memo: str = "",
    data: dict[str, Any] | None = None,
) -> CardMove:
    """Take `amount` from the card for a purchase (card debit, sales credit; no shift: no till is
    crossed). `key` makes it idempotent (ledger key "card_spend:<key>"); `device` is the terminal (a
    CashDevice or its label). Refuses `card_blocked`, `insufficient_balance` (nothing written). Two spends
    of one card at once are decided one after the other (the card, then its account, are locked).

    On PostgreSQL, outside a caller's transaction, the spends this process receives at once are written in
    one transaction (a group commit, HALL_SPEND_GROUP_*: see `_spend_together`), each answered as if alone."""
    label = device.name if isinstance(device, CashDevice) else str(device)
    order = _Spend(
        card_id=card.pk,
        venue_id=card.venue_id,
        amount=amount_of(amount),
        ledger_key=f"card_spend:{_key(key)}",
        actor=actor,
        device=label[:80],
        memo=memo[:200],
        data=dict(data or {}),
        language=translation.get_language(),
    )
    if _spend_group.enabled() and connection.vendor == "postgresql" and not connection.in_atomic_block:
        return _spend_group.get().submit(order)
    return _spend_alone(order)


def _spend_alone(order: _Spend) -> CardMove:
    return db_retry.run("cashier.spend", lambda: _spend_once(order))


def _spend_once(order: _Spend) -> CardMove:
    with transaction.atomic():
        locked = lock_player_card(order.card_id)
        _usable(locked, order.ledger_key)
        _admitted(locked, order.ledger_key)
        sales = books.venue_account(locked.venue_id, Kind.SALES)
        posted = books.post(
            venue_id=locked.venue_id,
            kind=TxKind.CARD_SPEND,
            key=order.ledger_key,
            legs=[
                ledger.debit(books.card_account(locked).pk, order.amount),
                ledger.credit(sales.pk, order.amount),
            ],
            actor=order.actor,
            device=order.device,
            memo=order.memo,
            data={"card": locked.number, **order.data},
        )
        return _move(locked, posted, order.amount)


def _spend_posting(order: _Spend, card: PlayerCard, account: Account, sales: Account) -> books.Posting:
    return books.Posting(
        kind=TxKind.CARD_SPEND,
        key=order.ledger_key,
        legs=[ledger.debit(account.pk, order.amount), ledger.credit(sales.pk, order.amount)],
        actor=order.actor,
        device=order.device,
        memo=order.memo,
        data={"card": card.number, **order.data},
    )


def _spend_together(orders: Sequence[_Spend]) -> list[CardMove | BaseException]:
    """A group of one venue's spends in one transaction, as `_spend_once` would write them one after the
    other: the cards locked in id order, then their accounts (halls.locks), each spend checked in turn on
    the balances held (a refused one is answered its refusal and writes nothing), the others posted by one
    `post_many` (one audit append for them all)."""
    venue_id = orders[0].venue_id
    answers: list[CardMove | BaseException | None] = [None] * len(orders)
    with transaction.atomic():
        cards = lock_player_cards(o.card_id for o in orders)
        # The cards' accounts found and locked in one statement (a card's first spend makes its account).
        accounts = {a.card_id: a for a in lock_card_accounts(cards)}
        missing = cards.keys() - accounts.keys()
        made = [books.card_account(cards[card_id]) for card_id in sorted(missing)]
        accounts.update({a.card_id: a for a in lock_accounts(a.pk for a in made).values()})
        locked = {a.pk: a for a in accounts.values()}
        # The sales account (read, locked when its balance moves) and the keys posted, under the cards' locks.
        sales, earlier = books.venue_account_and_posted(venue_id, Kind.SALES, (o.ledger_key for o in orders))
        running = {pk: a.balance for pk, a in locked.items()}
        postings: list[books.Posting] = []
        chosen: list[int] = []
        after: dict[int, Decimal] = {}
        seen: set[str] = set()
        until = admitted.admissions_of(list(cards.values()))
        here = translation.get_language()
        for i, order in enumerate(orders):
            card = cards[order.card_id]
            account = locked[accounts[card.pk].pk]
            fresh = order.ledger_key not in earlier and order.ledger_key not in seen
            try:
                with _speaking(order.language, here):
                    if fresh:
                        check_active(card)
                        admitted.check_until(card, until[card.pk])
                        if running[account.pk] < order.amount:
                            raise short(account, running[account.pk], order.amount)
            except DomainError as exc:
                answers[i] = exc
                continue
            if fresh:
                running[account.pk] -= order.amount
                seen.add(order.ledger_key)
            postings.append(_spend_posting(order, card, account, sales))
            chosen.append(i)
            after[i] = running[account.pk]
        held = {**{a.pk: a for a in locked.values()}, sales.pk: sales}
        posted = books.post_many(venue_id=venue_id, postings=postings, held=held, looked_up=earlier)
        for i, one in zip(chosen, posted, strict=True):
            order = orders[i]
            balance = after[i] if not one.replayed else running[accounts[order.card_id].pk]
            answers[i] = CardMove(
                card=cards[order.card_id],
                transaction=one.transaction,
                amount=order.amount,
                balance=balance,
                replayed=one.replayed,
            )
    return [a for a in answers if a is not None]


def _speaking(language: str | None, here: str | None = None) -> contextlib.AbstractContextManager[None]:
    """A refusal in the asker's language (a group is written on one caller's thread). `here`: the language
    active now, when the caller knows it (a group's loop over its orders): no switch to the same one."""
    if not language or language == (here if here is not None else translation.get_language()):
        return contextlib.nullcontext()
    return translation.override(language)


def _spend_alone_speaking(order: _Spend) -> CardMove:
    with _speaking(order.language):
        return _spend_alone(order)


def write_spends(orders: Sequence[_Spend]) -> list[CardMove | BaseException]:
    """Each spend's answer: each venue's spends together in one transaction, or one by one if they cannot
    commit as a whole (a database error, a deadlock)."""
    return _by_venue(orders, _spend_together, _spend_alone_speaking, what="card spends")


_Order = TypeVar("_Order", _Spend, _CashIn)


def _by_venue(
    orders: Sequence[_Order],
    together: Callable[[Sequence[_Order]], list[CardMove | BaseException]],
    alone: Callable[[_Order], CardMove],
    *,
    what: str,
) -> list[CardMove | BaseException]:
    """Each order's answer: each venue's orders `together` in one transaction, or each `alone` if they
    cannot commit as a whole."""
    answers: dict[int, CardMove | BaseException] = {}
    for venue_id in sorted({o.venue_id for o in orders}):
        mine = [i for i, o in enumerate(orders) if o.venue_id == venue_id]
        got = together_or_one_by_one([orders[i] for i in mine], together, alone, log=log, what=what)
        answers.update(zip(mine, got, strict=True))
    return [answers[i] for i in range(len(orders))]


_spend_group: ProcessGroup[_Spend, CardMove] = ProcessGroup(write_spends, "HALL_SPEND_GROUP")


# --- history --------------------------------------------------------------------------------------------


def history(card: PlayerCard, *, limit: int = 100) -> list[HistoryEntry]:
    """The card's moves, newest first (at most `limit`), each with the balance after it."""
    account = books.card_account(card)
    legs = (
        Leg.objects.filter(account=account)
        .select_related("transaction")
        .order_by("transaction_id")
        .only(
            "amount",
            "transaction__id",
            "transaction__kind",
            "transaction__created_at",
            "transaction__actor_label",
            "transaction__device",
            "transaction__memo",
        )
    )
    labels = dict(TxKind.choices)
    running = money.ZERO
    entries: list[HistoryEntry] = []
    for leg in legs:
        moved = ledger.shown(Kind.PLAYER_CARD, leg.amount)
        running += moved
        tx = leg.transaction
        entries.append(
            HistoryEntry(
                transaction_id=tx.pk,
                kind=tx.kind,
                kind_label=str(labels.get(tx.kind, tx.kind)),
                amount=moved,
                balance=running,
                at=tx.created_at,
                by=tx.actor_label,
                device=tx.device,
                memo=tx.memo,
            )
        )
    entries.reverse()
    return entries[:limit]


# --- blocking and replacing -----------------------------------------------------------------------------


def block_card(*, card: PlayerCard, reason: str, actor: Actor) -> PlayerCard:
    """Block a lost or stolen card (any cashier): it refuses every operation from now on. Blocking a
    blocked card changes nothing."""
    text = str(reason or "").strip()
    if not text:
        raise InvalidInput(
            _("Say why the card is blocked (lost, stolen...)."), code="reason_required", field="reason"
        )
    if len(text) > 200:
        raise InvalidInput(_("The reason is at most 200 characters."), code="too_long", field="reason")
    with transaction.atomic():
        locked = lock_player_card(card.pk)
        if locked.state == PlayerCardState.BLOCKED:
            return locked
        locked.state = PlayerCardState.BLOCKED
        locked.blocked_reason = text
        locked.save(update_fields=["state", "blocked_reason"])
        audit.record(
            venue_id=locked.venue_id,
            actor=actor,
            action="cashier.card_blocked",
            obj=locked,
            data={"number": locked.number, "reason": text},
        )
    return locked


def block_cards_of(*, player_ids: list[int], reason: str, actor: Actor) -> list[PlayerCard]:
    """Block every active card of these players at once (the door withdrew their admission: a register
    listed them, they self-excluded), with `reason` (which names no register's reason): the cards locked in
    id order, then each blocked and audited. The cards it blocked, in id order (none already blocked)."""
    with transaction.atomic():
        ids = sorted(
            PlayerCard.objects.filter(player_id__in=player_ids, state=PlayerCardState.ACTIVE).values_list(
                "pk", flat=True
            )
        )
        locked = [lock_player_card(pk) for pk in ids]  # every lock before the first audit row
        blocked = [card for card in locked if card.state == PlayerCardState.ACTIVE]
        for card in blocked:
            card.state = PlayerCardState.BLOCKED
            card.blocked_reason = reason[:200]
            card.save(update_fields=["state", "blocked_reason"])
        for card in sorted(blocked, key=lambda c: (c.venue_id, c.pk)):  # the audit heads in venue order
            audit.record(
                venue_id=card.venue_id,
                actor=actor,
                action="cashier.card_blocked",
                obj=card,
                data={"number": card.number, "reason": card.blocked_reason, "player": card.player_id},
            )
    return blocked


def unblock_card(*, card: PlayerCard, actor: User) -> PlayerCard:
    """Unblock a card found again (the operator only: a card found is not proof of its bearer). A card
    already replaced stays blocked: its balance is on the new card."""
    require_role(actor, card.venue_id, Role.OPERATOR)
    with transaction.atomic():
        locked = lock_player_card(card.pk)
        if locked.replaced_by_id is not None:
            raise Conflict(
                _("Card %(number)s was replaced: its balance is on the new card.")
                % {"number": cardnumber.printed(locked.number)},
                code="card_replaced",
            )
        if locked.state == PlayerCardState.ACTIVE:
            return locked
        locked.state = PlayerCardState.ACTIVE
        locked.blocked_reason = ""
        locked.save(update_fields=["state", "blocked_reason"])
        audit.record(
            venue_id=locked.venue_id,
            actor=actor,
            action="cashier.card_unblocked",
            obj=locked,
            data={"number": locked.number},
        )
    return locked


def replace_card(*, card: PlayerCard, actor: Actor) -> Replacement:
    """A new card for a blocked (lost) one: it receives the old card's whole balance in one ledger
    transaction and its player link. Done once per card: again, it answers the same replacement."""
    with transaction.atomic():
        locked = lock_player_card(card.pk)
        if locked.replaced_by_id is not None:
            new = PlayerCard.objects.get(pk=locked.replaced_by_id)
            tx = LedgerTransaction.objects.filter(
                venue_id=locked.venue_id, key=f"card_transfer:{locked.number}"
            ).first()
            moved = money.ZERO
            if tx is not None:
                moved = next(leg.amount for leg in tx.legs.all() if leg.amount > 0)
            return Replacement(old=locked, new=new, moved=moved, transaction=tx, replayed=True)
        if locked.state != PlayerCardState.BLOCKED:
            raise Conflict(
                _("Card %(number)s is not blocked: block a lost card before replacing it.")
                % {"number": cardnumber.printed(locked.number)},
                code="card_not_blocked",
            )
        new = _new_card(locked.venue_id, locked.player)
        old_account = books.card_account(locked)
        moved = old_account.balance
        posted = None
        if moved > 0:
            posted = books.post(
                venue_id=locked.venue_id,
                kind=TxKind.CARD_TRANSFER,
                key=f"card_transfer:{locked.number}",
                legs=[ledger.debit(old_account.pk, moved), ledger.credit(books.card_account(new).pk, moved)],
                actor=actor,
                data={"from": locked.number, "to": new.number},
            )
        locked.replaced_by = new
        locked.save(update_fields=["replaced_by"])
        _audit_issued(new, actor)
        audit.record(
            venue_id=locked.venue_id,
            actor=actor,
            action="cashier.card_replaced",
            obj=locked,
            data={"number": locked.number, "new": new.number, "moved": money.text(moved)},
        )
    return Replacement(
        old=locked,
        new=new,
        moved=moved,
        transaction=posted.transaction if posted else None,
        replayed=False,
    )


# --- players --------------------------------------------------------------------------------------------


def _text(field: str, value: Any, *, max_length: int, required: bool) -> str:
    text = str(value or "").strip()
    if required and not text:
        raise InvalidInput(_("%(field)s is required.") % {"field": field}, code="required", field=field)
    if len(text) > max_length:
        raise InvalidInput(
            _("%(field)s is at most %(length)s characters.") % {"field": field, "length": max_length},
            code="too_long",
            field=field,
        )
    return text


def register_player(*, venue_id: int, name: str, id_document: str = "", actor: Actor) -> Player:
    """A registered player (for halls that register them). The audit keeps the player's id only."""
    full_name = _text("name", name, max_length=150, required=True)
    document = _text("id_document", id_document, max_length=40, required=False)
    with transaction.atomic():
        player = Player.objects.create(
            venue_id=venue_id, name=full_name, id_document=document, created_at=timezone.now()
        )
        audit.record(venue_id=venue_id, actor=actor, action="cashier.player_registered", obj=player, data={})
    return player


def link_player(*, card: PlayerCard, player: Player | None, actor: Actor) -> PlayerCard:
    """Link the card to a registered player of its venue, or unlink it (None)."""
    if player is not None and player.venue_id != card.venue_id:
        raise NotFound(_("No such player in this venue."), code="unknown_player")
    with transaction.atomic():
        locked = lock_player_card(card.pk)
        check_active(locked)
        if locked.player_id == (player.pk if player else None):
            return locked
        locked.player = player
        locked.save(update_fields=["player"])
        audit.record(
            venue_id=locked.venue_id,
            actor=actor,
            action="cashier.card_player_linked" if player else "cashier.card_player_unlinked",
            obj=locked,
            data={"number": locked.number, "player": player.pk if player else None},
        )
    return locked


# --- printing -------------------------------------------------------------------------------------------


def card_document(card: PlayerCard) -> Document:
    """The printed card: its number as printed, its QR payload and a CODE128 barcode of the number (for a
    scanner that reads bars only). No balance (it changes) and no personal data."""
    venue = Venue.objects.only("name").get(pk=card.venue_id)
    return Document(
        venue=venue.name,
        title=_("Player card"),
        kind="card",
        lines=(Field(_("Card number"), cardnumber.printed(card.number)),),
        barcode=Barcode(card.number, Symbology.CODE128),
        qr=cardnumber.qr_payload(card.number),
        footer=(
            _("The balance of this card belongs to its bearer. If you lose it, ask the cashier to block it."),
        ),
    )


def print_card(*, card: PlayerCard, till: Till, actor: Actor) -> PrintResult:
    """Print the card at `till` (its printer, else a PDF in the result); audited by print_document. A
    blocked card is not printed (card_blocked)."""
    if till.venue_id != card.venue_id:
        raise ValueError(f"till {till.pk} is not of the card's venue")
    card.refresh_from_db()
    check_active(card)
    return print_document(till=till, document=card_document(card), actor=actor, subject=card)
