"""Tickets (TITO, ticket in / ticket out): issued for an amount, redeemed once, expired after the venue's
validity; every moment of a ticket's life is a TicketEvent.

- `issue_ticket` is the one place a ticket is made: it posts funded_by → tickets and writes the ticket and
  its "issued" event, inside the caller's transaction when there is one (the payables pay a prize as a
  ticket so). It takes no lock of its own: `post` locks the account money leaves (Rank.ACCOUNT) and the
  audit chain's tip. It publishes nothing; `announce` does, at the end of the caller's transaction.
- The cashier's doors: `issue_for_payment` (cash or a bank card paid in, into that means' drawer),
  `issue_from_card` (a player card's balance), `redeem_for_cash`, `redeem_into_card`; each holds the
  cashier's open shift first (Rank.SHIFT), then the ticket (TICKET), then the card (PLAYER_CARD).
- The terminals' device messages: `cash_out_to_ticket` (the inserted card's balance onto a ticket) and
  `redeem_at_device` (a ticket into the inserted card), idempotent by (device, seq).
- `print_ticket`: the ticket's slip at a till (its thermal printer, or a PDF), a reprint marked as one;
  both written into its life.
- `expire_tickets(now)`: the beat's job, one ticket per transaction (resumable), each at most once.

The venue's ticket limits (halls.cashier.services.cashier_settings, decided by halls.cashier.ticketrules):
no ticket above its maximum value is issued, whoever issues it (`issue_ticket` refuses
`ticket_above_maximum`, nothing written); a ticket above its cage figure is redeemed only at a till, never
by a device (`redeem_at_device` refuses `ticket_cage_only`, the money and the ticket untouched).

A ticket is closed (redeemed or expired) by the ledger key "ticket:<id>:close": whatever the races, its money
leaves the tickets account once. A refused redemption of a known ticket is written into its life after the
refusal rolled back (the money and the ticket are untouched).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.formats import number_format
from django.utils.translation import gettext as _

from halls import db_retry, events, i18n, money
from halls.access import require_role
from halls.actors import Actor, actor_label
from halls.cashier import cardnumber, hooks, ledger, tito
from halls.cashier.ledger import Kind
from halls.cashier.models import (
    AMOUNT_DIGITS,
    Account,
    CashDevice,
    CashierSettings,
    DeviceMessage,
    LedgerTransaction,
    Means,
    PlayerCard,
    Shift,
    Ticket,
    TicketEvent,
    TicketEventKind,
    TicketState,
    Till,
    TxKind,
)
from halls.cashier.printing.document import Barcode, Document, Field, Rule, Symbology
from halls.cashier.services import admitted, cashier_settings, player_cards
from halls.cashier.services import ledger as books
from halls.cashier.services.locks import lock_player_card, lock_ticket
from halls.cashier.services.printing import PrintResult, print_document
from halls.cashier.services.shifts import open_shift_of
from halls.errors import Conflict, DomainError, InvalidInput, NotFound, PermissionDenied
from halls.eventtypes import EventType, TicketChanged
from halls.models import Role, Venue
from halls.services import audit

DEFAULT_VALID_DAYS = 30
MAX_AMOUNT = Decimal(10) ** (AMOUNT_DIGITS - money.CENT_PLACES) - money.CENT
_NUMBER_TRIES = 5  # 10^17 numbers: a clash is already a one-in-billions event


@dataclass(frozen=True)
class Issued:
    ticket: Ticket
    replayed: bool  # the key was already used for this ticket: nothing was written


@dataclass(frozen=True)
class Redeemed:
    ticket: Ticket
    replayed: bool  # the same request was already served: nothing was written


def stream(venue_id: int) -> str:
    return f"cashier.{venue_id}"


# --- checks and look-ups --------------------------------------------------------------------------------


def checked_amount(amount: object, field: str = "amount") -> Decimal:
    """A ticket's amount: whole cents, above zero, what the ledger holds. InvalidInput `bad_amount`."""
    try:
        return money.cents(
            money.parse(field, amount, places=money.CENT_PLACES, positive=True, maximum=MAX_AMOUNT)
        )
    except money.MoneyError as exc:
        raise InvalidInput(
            _("%(field)s: give an amount in euros and cents, above zero and at most %(max)s (got %(value)s).")
            % {"field": field, "max": i18n.amount(MAX_AMOUNT), "value": amount},
            code="bad_amount",
            field=field,
        ) from exc


def checked_number(number: str, field: str = "number") -> str:
    """A typed or scanned validation number, as stored. InvalidInput `bad_ticket_number` when it cannot be
    one (not 18 digits, or the check digit does not match: a mistyped digit)."""
    digits = tito.normalise(number)
    if not tito.is_valid(digits):
        raise InvalidInput(
            _(
                "%(field)s: %(number)r is not a ticket's validation number "
                "(18 digits, the last a check digit)."
            )
            % {"field": field, "number": number[:40]},
            code="bad_ticket_number",
            field=field,
        )
    return digits


def _unknown(number: str) -> NotFound:
    return NotFound(
        _("No ticket %(number)s in this venue.") % {"number": tito.grouped(number)},
        code="unknown_ticket",
        number=number,
    )


def find(venue_ids: list[int], number: str) -> Ticket:
    """The ticket of that validation number among `venue_ids`' (another venue's: unknown_ticket, 404)."""
    digits = checked_number(number)
    ticket = Ticket.objects.filter(venue_id__in=venue_ids, number=digits).first()
    if ticket is None:
        raise _unknown(digits)
    return ticket


def life(ticket: Ticket) -> list[TicketEvent]:
    """The ticket's events, oldest first."""
    return list(TicketEvent.objects.filter(ticket=ticket).order_by("at", "pk"))


@dataclass(frozen=True)
class ShiftTicket:
    """A ticket issued or redeemed at a shift's till: what the till lists as "Tickets of this shift"."""

    at: datetime
    number: str
    kind: str  # "issued" or "redeemed"
    means: str  # issued for "cash" / "bank_card", from a "card" or for a "prize"; redeemed: "cash" or "card"
    amount: Decimal


def of_shift(shift: Shift) -> list[ShiftTicket]:
    """The tickets issued and redeemed in `shift`, newest first, read from their lives (each event names
    its shift): the till's list survives a reload of the page."""
    events = (
        TicketEvent.objects.filter(shift=shift, kind__in=[TicketEventKind.ISSUED, TicketEventKind.REDEEMED])
        .select_related("ticket")
        .order_by("-at", "-pk")
    )
    return [
        ShiftTicket(
            at=event.at,
            number=event.ticket.number,
            kind=event.kind,
            means=_means_of(event),
            amount=event.ticket.amount,
        )
        for event in events
    ]


def _means_of(event: TicketEvent) -> str:
    if event.kind == TicketEventKind.REDEEMED:
        return str(event.data.get("into", ""))
    funded_by = event.data.get("funded_by")
    if funded_by == Kind.PLAYER_CARD:
        return "card"
    if funded_by == Kind.PRIZES_PAYABLE:  # a prize paid as a ticket
        return "prize"
    return str(event.data.get("account", "")).rsplit(":", 1)[-1]  # "drawer:<shift>:<means>"


def valid_days(venue_id: int) -> int:
    days = (
        CashierSettings.objects.filter(venue_id=venue_id).values_list("ticket_valid_days", flat=True).first()
    )
    return DEFAULT_VALID_DAYS if days is None else int(days)


def local(venue_id: int, at: datetime) -> str:
    """A moment as the venue's staff read it: "2026-11-26 10:12" in the venue's time zone."""
    zone = Venue.objects.filter(pk=venue_id).values_list("time_zone", flat=True).first() or "UTC"
    return timezone.localtime(at, ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M")


def _card(venue_id: int, number: str) -> PlayerCard:
    """The venue's card of that number or QR payload (bad_card_number 400, unknown_card 404)."""
    return player_cards.find_card(venue_id=venue_id, code=number)


def card_balance(venue_id: int, card_number: str) -> Decimal:
    """A player card's balance (unknown_card: 404)."""
    return books.card_account(_card(venue_id, card_number)).balance


def _usable_card(card_id: int) -> PlayerCard:
    """The card, locked (Rank.PLAYER_CARD); refused `card_blocked` when it is blocked."""
    card = lock_player_card(card_id)
    player_cards.check_active(card)
    return card


def _active(device: CashDevice) -> None:
    if not device.active:
        raise PermissionDenied(
            _("Device %(device)s is not in service.") % {"device": device.name}, code="device_inactive"
        )


def _event(
    ticket: Ticket,
    kind: TicketEventKind,
    *,
    actor: Actor,
    device: str = "",
    shift: Shift | None = None,
    tx: LedgerTransaction | None = None,
    reason: str = "",
    data: Mapping[str, Any] | None = None,
) -> TicketEvent:
    return TicketEvent.objects.create(
        venue_id=ticket.venue_id,
        ticket=ticket,
        kind=kind,
        at=timezone.now(),
        actor=actor if isinstance(actor, User) else None,
        actor_label=actor_label(actor),
        device=device,
        shift=shift,
        transaction=tx,
        reason=reason,
        data=dict(data or {}),
    )


def announce(ticket: Ticket, type: EventType) -> None:
    """Tell the venue's till pages (stream cashier.<venue>), at the end of the caller's transaction (it
    takes the stream's lock, the last of halls.locks.Rank)."""
    payload: TicketChanged = {
        "ticket": ticket.pk,
        "number": ticket.number,
        "amount": ticket.amount,
        "state": ticket.state,
        "at": ticket.closed_at or ticket.issued_at,
    }
    events.emit(stream(ticket.venue_id), type, payload)


# --- issuing --------------------------------------------------------------------------------------------


def _new_ticket(venue_id: int, amount: Decimal, issued_by: str, tx: LedgerTransaction) -> Ticket:
    issued_at = tx.created_at
    expires_at = issued_at + timedelta(days=valid_days(venue_id))
    for attempt in range(_NUMBER_TRIES):
        try:
            with transaction.atomic():  # a savepoint: a number already taken is drawn again
                return Ticket.objects.create(
                    venue_id=venue_id,
                    number=tito.new_number(),
                    amount=amount,
                    issued_at=issued_at,
                    expires_at=expires_at,
                    issued_by=issued_by[:150],
                    issue_tx=tx,
                )
        except IntegrityError:
            if attempt == _NUMBER_TRIES - 1:
                raise
    raise AssertionError("unreachable")


def issue_ticket(
    *,
    venue_id: int,
    amount: Decimal,
    funded_by: Account,
    key: str,
    actor: Actor,
    shift: Shift | None = None,
    device: str = "",
    kind: TxKind = TxKind.TICKET_ISSUE,
    memo: str = "",
    data: Mapping[str, Any] | None = None,
) -> Issued:
    """Post `amount` from `funded_by` to the tickets account under ledger `key` and make the ticket (a new
    validation number, expiring after the venue's ticket_valid_days), with its "issued" event and audit.

    Works inside the caller's transaction (or opens its own); takes no lock but `post`'s (the account
    money leaves, Rank.ACCOUNT; the audit tip): a caller holding a shift, a payable or a card is in order,
    but must call this before its own audit record. The same key again answers the same ticket
    (replayed=True); refusals (bad_amount, drawer_short, insufficient_balance, idempotency_key_reused)
    write nothing. Publishes nothing: call `announce(ticket, EventType.TICKET_ISSUED)` last if a till page
    should learn of it.
    """
    amount = checked_amount(amount)
    if funded_by.venue_id != venue_id:
        raise ValueError(f"account {funded_by.code} is not of venue {venue_id}")
    _within_maximum(venue_id, amount, key)
    tickets = books.venue_account(venue_id, Kind.TICKETS)
    if funded_by.pk == tickets.pk:
        raise ValueError("a ticket cannot be funded by the tickets account")
    with transaction.atomic():
        posted = books.post(
            venue_id=venue_id,
            kind=kind,
            key=key,
            legs=[ledger.debit(funded_by.pk, amount), ledger.credit(tickets.pk, amount)],
            actor=actor,
            shift=shift,
            device=device,
            memo=memo,
            data=data,
        )
        if posted.replayed:
            return Issued(_ticket_of(posted.transaction, key), replayed=True)
        ticket = _new_ticket(venue_id, amount, device or actor_label(actor), posted.transaction)
        _event(
            ticket,
            TicketEventKind.ISSUED,
            actor=actor,
            device=device,
            shift=shift,
            tx=posted.transaction,
            data={"funded_by": funded_by.kind, "account": funded_by.code, "amount": money.text(amount)},
        )
        audit.record(
            venue_id=venue_id,
            actor=actor,
            action="cashier.ticket_issued",
            obj=ticket,
            data={
                "number": ticket.number,
                "amount": money.text(amount),
                "funded_by": funded_by.code,
                "expires_at": ticket.expires_at.isoformat(),
                "device": device,
            },
        )
    return Issued(ticket, replayed=False)


def _within_maximum(venue_id: int, amount: Decimal, key: str) -> None:
    """Refuse (409 ticket_above_maximum) a ticket above the venue's maximum value, unless `key` was
    already posted (a retry answers what was done, whatever the limit is now)."""
    limits = cashier_settings.ticket_limits(venue_id)
    if limits.may_issue(amount):
        return
    if LedgerTransaction.objects.filter(venue_id=venue_id, key=key).exists():
        return
    raise Conflict(
        _("A ticket of %(amount)s cannot be issued: the maximum value of a ticket in this venue is %(max)s.")
        % {"amount": i18n.amount(amount), "max": i18n.amount(limits.maximum)},
        code="ticket_above_maximum",
        amount=money.text(amount),
        maximum=money.text(limits.maximum),
    )


def _ticket_of(tx: LedgerTransaction, key: str) -> Ticket:
    ticket = Ticket.objects.filter(issue_tx=tx).first()
    if ticket is None:  # the key was posted by something that made no ticket
        raise Conflict(
            _("Idempotency key %(key)r was used for another operation.") % {"key": key},
            code="idempotency_key_reused",
        )
    return ticket


def _earlier_issue(venue_id: int, key: str, amount: Decimal | None) -> Issued | None:
    """A retry of an issue already done under ledger `key`: its ticket (same amount, if one was asked)."""
    tx = LedgerTransaction.objects.filter(venue_id=venue_id, key=key).first()
    if tx is None:
        return None
    ticket = _ticket_of(tx, key)
    if amount is not None and ticket.amount != amount:
        raise Conflict(
            _("Idempotency key %(key)r was used for another operation.") % {"key": key},
            code="idempotency_key_reused",
        )
    return Issued(ticket, replayed=True)


@db_retry.retried("cashier.issue_for_payment")
def issue_for_payment(*, venue_id: int, amount: Decimal, means: Means | str, key: str, actor: User) -> Issued:
    """The cashier sells a ticket for money paid in (cash or a bank card): that means' drawer → tickets, in
    the cashier's open shift (no_open_shift otherwise). `key`: the request's idempotency key."""
    require_role(actor, venue_id, Role.CASHIER)
    amount = checked_amount(amount)
    if means not in Means.values:
        raise InvalidInput(
            _("means: %(means)r is not a means of payment (cash, bank_card).") % {"means": str(means)[:40]},
            code="bad_means",
            field="means",
        )
    ledger_key = f"ticket:issue:{key}"
    earlier = _earlier_issue(venue_id, ledger_key, amount)
    if earlier is not None:
        return earlier
    with transaction.atomic():
        shift = open_shift_of(venue_id=venue_id, cashier=actor)
        issued = issue_ticket(
            venue_id=venue_id,
            amount=amount,
            funded_by=books.drawer(shift, means),
            key=ledger_key,
            actor=actor,
            shift=shift,
            device=shift.till.name,
            data={"means": str(means)},
        )
        if not issued.replayed:
            announce(issued.ticket, EventType.TICKET_ISSUED)
    return issued


def _card_balance_amount(account: Account, amount: Decimal | None) -> Decimal:
    if amount is not None:
        return amount
    if account.balance <= 0:
        raise Conflict(
            _("The card's balance is %(balance)s: there is nothing to put on a ticket.")
            % {"balance": i18n.amount(account.balance)},
            code="insufficient_balance",
            balance=money.text(account.balance),
        )
    return account.balance


@db_retry.retried("cashier.issue_from_card")
def issue_from_card(
    *, venue_id: int, card_number: str, amount: Decimal | None, key: str, actor: User
) -> Issued:
    """The cashier turns a player card's balance (all of it when `amount` is None) into a ticket: card →
    tickets, in the cashier's open shift. Refused card_blocked, insufficient_balance, unknown_card."""
    require_role(actor, venue_id, Role.CASHIER)
    if amount is not None:
        amount = checked_amount(amount)
    ledger_key = f"ticket:issue:{key}"
    earlier = _earlier_issue(venue_id, ledger_key, amount)
    if earlier is not None:
        return earlier
    card = _card(venue_id, card_number)
    with transaction.atomic():
        shift = open_shift_of(venue_id=venue_id, cashier=actor)
        card = _usable_card(card.pk)
        account = books.card_account(card)
        issued = issue_ticket(
            venue_id=venue_id,
            amount=_card_balance_amount(account, amount),
            funded_by=account,
            key=ledger_key,
            actor=actor,
            shift=shift,
            device=shift.till.name,
            data={"card": card.number},
        )
        if not issued.replayed:
            announce(issued.ticket, EventType.TICKET_ISSUED)
    return issued


def device_key(device: CashDevice, seq: int) -> str:
    """The ledger key of a device's message (the cards' bill-in uses the same): a resent message posts
    nothing twice."""
    return f"device:{device.pk}:seq:{seq}"


TICKET_OUT = "ticket_out"
TICKET_IN = "ticket_in"


def _seq_reused(seq: int) -> Conflict:
    return Conflict(
        _("Message %(seq)s of this device was another message.") % {"seq": seq}, code="seq_reused", seq=seq
    )


def _device_answered(device: CashDevice, seq: int, kind: str, body: dict[str, str]) -> Ticket | None:
    """The ticket a message already answered with (a retry), or None; the same seq for another message
    is refused `seq_reused` (DeviceMessage: once per device and seq, whatever the message)."""
    previous = DeviceMessage.objects.filter(device=device, seq=seq).first()
    if previous is None:
        return None
    if previous.kind != kind or previous.body != body:
        raise _seq_reused(seq)
    return Ticket.objects.get(venue_id=device.venue_id, number=previous.result["ticket"])


def _device_message(
    device: CashDevice, seq: int, kind: str, body: dict[str, str], ticket: Ticket, tx: LedgerTransaction
) -> None:
    """The message kept with its answer, in the operation's transaction (seq_reused if another message
    took the seq at this instant: the operation rolls back)."""
    try:
        with transaction.atomic():
            DeviceMessage.objects.create(
                device=device,
                seq=seq,
                kind=kind,
                body=body,
                result={"ticket": ticket.number, "amount": money.text(ticket.amount), "state": ticket.state},
                transaction=tx,
                received_at=timezone.now(),
            )
    except IntegrityError:
        raise _seq_reused(seq) from None


@db_retry.retried("cashier.cash_out_to_ticket")
def cash_out_to_ticket(
    *, device: CashDevice, card_number: str, seq: int, amount: Decimal | None = None
) -> Issued:
    """A terminal's cash-out (device message): the inserted card's balance (all of it when `amount` is None)
    onto a ticket the terminal prints. No shift: no till is crossed. The same (device, seq) again answers
    the same ticket; the seq of another message is refused seq_reused."""
    _active(device)
    if amount is not None:
        amount = checked_amount(amount)
    number = player_cards.number_of(card_number)
    body = {"card": number, "amount": money.text(amount) if amount is not None else "all"}
    earlier = _device_answered(device, seq, TICKET_OUT, body)
    if earlier is not None:
        return Issued(earlier, replayed=True)
    card = _card(device.venue_id, number)
    with transaction.atomic():
        card = _usable_card(card.pk)
        account = books.card_account(card)
        try:
            issued = issue_ticket(
                venue_id=device.venue_id,
                amount=_card_balance_amount(account, amount),
                funded_by=account,
                key=device_key(device, seq),
                actor=device.name,
                device=device.name,
                data={"card": card.number, "seq": seq},
            )
        except Conflict as exc:
            if exc.code == "idempotency_key_reused":  # the seq posted by another message
                raise _seq_reused(seq) from None
            raise
        if issued.replayed:  # the same message answered at this instant by another request
            return issued
        _device_message(device, seq, TICKET_OUT, body, issued.ticket, issued.ticket.issue_tx)
        announce(issued.ticket, EventType.TICKET_ISSUED)
    return issued


# --- redeeming ------------------------------------------------------------------------------------------


def close_key(ticket: Ticket) -> str:
    """The one ledger key that closes a ticket (redeemed or expired): its money leaves once."""
    return f"ticket:{ticket.pk}:close"


def _where(event: TicketEvent | None) -> str:
    if event is None:
        return "?"
    if event.data.get("into") == "card":
        return _("%(device)s, into card %(card)s") % {
            "device": event.device,
            "card": cardnumber.printed(str(event.data.get("card", ""))),
        }
    return _("%(device)s, in cash") % {"device": event.device}


def _refuse_closed(ticket: Ticket, now: datetime) -> None:
    """Refuse a ticket that cannot be redeemed: redeemed (when, where), expired (when)."""
    number = tito.grouped(ticket.number)
    if ticket.state == TicketState.REDEEMED:
        assert ticket.closed_at is not None
        redeemed = TicketEvent.objects.filter(ticket=ticket, kind=TicketEventKind.REDEEMED).first()
        when, where = local(ticket.venue_id, ticket.closed_at), _where(redeemed)
        raise Conflict(
            _("Ticket %(number)s was already redeemed on %(when)s at %(where)s.")
            % {"number": number, "when": when, "where": where},
            code="ticket_redeemed",
            redeemed_at=ticket.closed_at.isoformat(),
            where=where,
        )
    if ticket.state == TicketState.EXPIRED or now >= ticket.expires_at:
        raise Conflict(
            _("Ticket %(number)s expired on %(when)s.")
            % {"number": number, "when": local(ticket.venue_id, ticket.expires_at)},
            code="ticket_expired",
            expired_at=ticket.expires_at.isoformat(),
        )


def _served(ticket: Ticket, request: str, want: Mapping[str, str]) -> bool:
    """Whether `request` already redeemed this ticket (a retry); the same key for another target is
    refused idempotency_key_reused."""
    if ticket.state != TicketState.REDEEMED or not request:
        return False
    tx = LedgerTransaction.objects.filter(pk=ticket.close_tx_id or 0).first()
    earlier = dict(tx.data) if tx is not None else {}
    if earlier.get("request") != request:
        return False
    if any(earlier.get(k, "") != v for k, v in want.items()):
        raise Conflict(
            _("Idempotency key %(key)r was used for another operation.") % {"key": request},
            code="idempotency_key_reused",
        )
    return True


@dataclass(frozen=True)
class _Target:
    """Where a redeemed ticket's money goes."""

    account: Account
    into: str  # "cash" or "card"
    card: str = ""


def _redeem(
    *,
    venue_id: int,
    number: str,
    request: str,
    actor: Actor,
    device: Callable[[Shift | None], str],
    shift_of: Callable[[], Shift | None],
    target: Callable[[Shift | None], _Target],
    want: Mapping[str, str],
    check: Callable[[Ticket], None] | None = None,
    after: Callable[[Ticket, LedgerTransaction], None] | None = None,
) -> Redeemed:
    """Redeem once: the shift (if a till), the ticket locked, then where the money goes; refusals written
    into the ticket's life after they rolled back. `check(ticket)` may refuse a redeemable ticket before any
    money moves (a DomainError: a terminal's cage figure, the cage's identification at the payout);
    `after(ticket, tx)` runs after the redemption's audit entry."""
    digits = checked_number(number)
    ticket_id = Ticket.objects.filter(venue_id=venue_id, number=digits).values_list("pk", flat=True).first()
    if ticket_id is None:
        raise _unknown(digits)
    seen = Ticket.objects.get(pk=ticket_id)
    if _served(seen, request, want):  # a retry: answered before the shift is even looked at
        return Redeemed(seen, replayed=True)
    where = ""
    shift: Shift | None = None
    try:
        with transaction.atomic():
            shift = shift_of()
            where = device(shift)
            ticket = lock_ticket(ticket_id)
            if _served(ticket, request, want):  # the same request, served while this one waited
                return Redeemed(ticket, replayed=True)
            now = timezone.now()
            _refuse_closed(ticket, now)
            if check is not None:
                check(ticket)
            goes = target(shift)
            tickets = books.venue_account(venue_id, Kind.TICKETS)
            posted = books.post(
                venue_id=venue_id,
                kind=TxKind.TICKET_REDEEM,
                key=close_key(ticket),
                legs=[ledger.debit(tickets.pk, ticket.amount), ledger.credit(goes.account.pk, ticket.amount)],
                actor=actor,
                shift=shift,
                device=where,
                memo=tito.grouped(ticket.number),
                data={"ticket": ticket.number, "request": request, "into": goes.into, "card": goes.card},
            )
            ticket.state = TicketState.REDEEMED
            ticket.closed_at = posted.transaction.created_at
            ticket.close_tx = posted.transaction
            ticket.save(update_fields=["state", "closed_at", "close_tx"])
            _event(
                ticket,
                TicketEventKind.REDEEMED,
                actor=actor,
                device=where,
                shift=shift,
                tx=posted.transaction,
                data={"into": goes.into, "card": goes.card, "account": goes.account.code},
            )
            audit.record(
                venue_id=venue_id,
                actor=actor,
                action="cashier.ticket_redeemed",
                obj=ticket,
                data={
                    "number": ticket.number,
                    "amount": money.text(ticket.amount),
                    "into": goes.into,
                    "card": goes.card,
                    "device": where,
                },
            )
            if after is not None:
                after(ticket, posted.transaction)
            announce(ticket, EventType.TICKET_REDEEMED)
    except DomainError as exc:
        _record_refusal(ticket_id, exc, actor=actor, device=where, shift=shift)
        raise
    return Redeemed(ticket, replayed=False)


def _record_refusal(
    ticket_id: int, exc: DomainError, *, actor: Actor, device: str, shift: Shift | None
) -> None:
    """A refused redemption in the ticket's life (its own transaction: the refusal rolled everything else
    back)."""
    with transaction.atomic():
        ticket = Ticket.objects.get(pk=ticket_id)
        shift_row = Shift.objects.filter(pk=shift.pk).first() if shift is not None else None
        _event(
            ticket,
            TicketEventKind.REFUSED,
            actor=actor,
            device=device,
            shift=shift_row,
            reason=exc.code[:40],
            data={"message": exc.message[:300]},
        )
        audit.record(
            venue_id=ticket.venue_id,
            actor=actor,
            action="cashier.ticket_refused",
            obj=ticket,
            data={"number": ticket.number, "reason": exc.code, "device": device},
        )


@db_retry.retried("cashier.redeem_for_cash")
def redeem_for_cash(
    *, venue_id: int, number: str, key: str, actor: User, identification: int | None = None
) -> Redeemed:
    """The cashier pays a ticket in cash from the shift's drawer (drawer_short when it does not hold it).
    A payout to a person: the payout guards (halls.cashier.hooks, the cage's AML gate) refuse a ticket at
    or above the threshold without the bearer's `identification`."""
    require_role(actor, venue_id, Role.CASHIER)

    def till_shift() -> Shift:
        return open_shift_of(venue_id=venue_id, cashier=actor)

    def claim(ticket: Ticket) -> hooks.PayoutClaim:
        return hooks.PayoutClaim(
            venue_id=venue_id,
            amount=ticket.amount,
            kind="ticket",
            identification=identification,
            ticket_id=ticket.pk,
        )

    def guarded(ticket: Ticket) -> None:
        hooks.check_payout(claim(ticket))

    def told(ticket: Ticket, tx: LedgerTransaction) -> None:
        hooks.payout_made(claim(ticket), tx.pk, actor)

    return _redeem(
        venue_id=venue_id,
        number=number,
        request=key,
        actor=actor,
        device=lambda shift: shift.till.name if shift else "",
        shift_of=till_shift,
        target=lambda shift: _Target(books.drawer(_open(shift), Means.CASH), "cash"),
        want={"into": "cash"},
        check=guarded,
        after=told,
    )


def _open(shift: Shift | None) -> Shift:
    assert shift is not None
    return shift


def _into_card(venue_id: int, card_number: str) -> Callable[[Shift | None], _Target]:
    card = _card(venue_id, card_number)

    def target(shift: Shift | None) -> _Target:
        locked = _usable_card(card.pk)
        admitted.check_card(locked)  # a load: for a player admitted today, where the venue's cards need it
        return _Target(books.card_account(locked), "card", locked.number)

    return target


@db_retry.retried("cashier.redeem_into_card")
def redeem_into_card(*, venue_id: int, number: str, card_number: str, key: str, actor: User) -> Redeemed:
    """The cashier loads a ticket into a player card (card_blocked, unknown_card, player_not_admitted
    refused)."""
    require_role(actor, venue_id, Role.CASHIER)
    card = player_cards.number_of(card_number)
    target = _into_card(venue_id, card)

    def till_shift() -> Shift:
        return open_shift_of(venue_id=venue_id, cashier=actor)

    return _redeem(
        venue_id=venue_id,
        number=number,
        request=key,
        actor=actor,
        device=lambda shift: shift.till.name if shift else "",
        shift_of=till_shift,
        target=target,
        want={"into": "card", "card": card},
    )


def _refuse_cage_only(ticket: Ticket) -> None:
    """Refuse (409 ticket_cage_only) a ticket above the venue's cage figure: a device never pays it, the
    player takes it to the cage (a cashier's till)."""
    limits = cashier_settings.ticket_limits(ticket.venue_id)
    if not limits.cage_only(ticket.amount):
        return
    raise Conflict(
        _(
            "Ticket %(number)s is for %(amount)s: tickets above %(limit)s are paid only at the cage. "
            "Please take it to the cashier."
        )
        % {
            "number": tito.grouped(ticket.number),
            "amount": i18n.amount(ticket.amount),
            "limit": i18n.amount(limits.cage_above),
        },
        code="ticket_cage_only",
        amount=money.text(ticket.amount),
        cage_above=money.text(limits.cage_above),
    )


@db_retry.retried("cashier.redeem_at_device")
def redeem_at_device(*, device: CashDevice, number: str, card_number: str, seq: int) -> Redeemed:
    """A terminal's ticket-in (device message): the ticket into the card inserted in it. No shift. The same
    (device, seq) again answers the first result; the seq of another message is refused seq_reused."""
    _active(device)
    digits = checked_number(number)
    card = player_cards.number_of(card_number)
    body = {"ticket": digits, "card": card}
    earlier = _device_answered(device, seq, TICKET_IN, body)
    if earlier is not None:
        return Redeemed(earlier, replayed=True)

    def keep(ticket: Ticket, tx: LedgerTransaction) -> None:
        _device_message(device, seq, TICKET_IN, body, ticket, tx)

    return _redeem(
        venue_id=device.venue_id,
        number=digits,
        request=device_key(device, seq),
        actor=device.name,
        device=lambda shift: device.name,
        shift_of=lambda: None,
        target=_into_card(device.venue_id, card),
        want={"into": "card", "card": card},
        check=_refuse_cage_only,
        after=keep,
    )


# --- expiry ---------------------------------------------------------------------------------------------

EXPIRY_ACTOR = "beat"


def expire_tickets(now: datetime | None = None, *, batch: int = 500) -> int:
    """Expire every ticket still issued whose time ran out by `now`: tickets → house, one ticket per
    transaction (a run cut short leaves the rest to the next). A ticket is expired once, whatever the runs
    at the same time. Returns how many this run expired."""
    now = now or timezone.now()
    done, after = 0, 0
    while True:
        due = list(
            Ticket.objects.filter(state=TicketState.ISSUED, expires_at__lte=now, pk__gt=after)
            .order_by("pk")
            .values_list("pk", flat=True)[:batch]
        )
        if not due:
            return done
        for pk in due:
            done += _expire_one(pk, now)
        after = due[-1]


@db_retry.retried("cashier.expire_one")
def _expire_one(ticket_id: int, now: datetime) -> bool:
    with transaction.atomic():
        ticket = lock_ticket(ticket_id)
        if ticket.state != TicketState.ISSUED or ticket.expires_at > now:
            return False  # redeemed or expired meanwhile
        tickets = books.venue_account(ticket.venue_id, Kind.TICKETS)
        house = books.venue_account(ticket.venue_id, Kind.HOUSE)
        posted = books.post(
            venue_id=ticket.venue_id,
            kind=TxKind.TICKET_EXPIRE,
            key=close_key(ticket),
            legs=[ledger.debit(tickets.pk, ticket.amount), ledger.credit(house.pk, ticket.amount)],
            actor=EXPIRY_ACTOR,
            memo=tito.grouped(ticket.number),
            data={"ticket": ticket.number, "expires_at": ticket.expires_at.isoformat()},
        )
        ticket.state = TicketState.EXPIRED
        ticket.closed_at = posted.transaction.created_at
        ticket.close_tx = posted.transaction
        ticket.save(update_fields=["state", "closed_at", "close_tx"])
        _event(ticket, TicketEventKind.EXPIRED, actor=EXPIRY_ACTOR, tx=posted.transaction)
        audit.record(
            venue_id=ticket.venue_id,
            actor=EXPIRY_ACTOR,
            action="cashier.ticket_expired",
            obj=ticket,
            data={"number": ticket.number, "amount": money.text(ticket.amount)},
        )
        announce(ticket, EventType.TICKET_EXPIRED)
    return True


# --- printing -------------------------------------------------------------------------------------------


def ticket_document(ticket: Ticket, *, reprinted_at: datetime | None = None) -> Document:
    """The ticket's slip, in the venue's language (a player reads it): the amount big, the validation
    number in groups and as an ITF barcode, when it was issued and where, until when it pays. A reprint
    says so in its title and when it was reprinted."""
    venue = Venue.objects.get(pk=ticket.venue_id)
    with translation.override(venue.language):
        title = _("TICKET")
        lines: list[Field | Rule | str] = [
            Field(_("Validation number"), tito.grouped(ticket.number)),
            Field(_("Issued"), local(venue.pk, ticket.issued_at)),
            Field(_("Issued at"), ticket.issued_by),
            Field(_("Valid until"), local(venue.pk, ticket.expires_at)),
        ]
        if reprinted_at is not None:
            title = _("TICKET - REPRINT")
            lines += [Rule(), Field(_("Reprinted"), local(venue.pk, reprinted_at))]
        return Document(
            venue=venue.name,
            title=title,
            kind="ticket",
            lines=tuple(lines),
            amount=Field(_("Amount"), f"{number_format(ticket.amount, 2, force_grouping=True)} €"),
            barcode=Barcode(ticket.number, Symbology.ITF),
            footer=(_("Pays once, at the cashier or at a terminal, until it expires."),),
        )


@dataclass(frozen=True)
class PrintedTicket:
    result: PrintResult
    reprint: bool


def print_ticket(*, ticket: Ticket, till: Till, actor: Actor) -> PrintedTicket:
    """Print the ticket's slip at `till` (its printer, else a PDF in the result), after the issue has
    committed (no lock waits on a printer). The first print is the original, every later one a reprint
    marked as such; each is written into the ticket's life. A redeemed or expired ticket is not printed
    (ticket_redeemed, ticket_expired): a duplicate of a paid ticket is worth nothing and would mislead."""
    if till.venue_id != ticket.venue_id:
        raise ValueError(f"till {till.pk} is not of the ticket's venue")
    ticket.refresh_from_db()
    _refuse_closed(ticket, timezone.now())
    reprint = TicketEvent.objects.filter(
        ticket=ticket, kind__in=[TicketEventKind.PRINTED, TicketEventKind.REPRINTED]
    ).exists()
    now = timezone.now()
    result = print_document(
        till=till,
        document=ticket_document(ticket, reprinted_at=now if reprint else None),
        actor=actor,
        subject=ticket,
    )
    with transaction.atomic():
        _event(
            ticket,
            TicketEventKind.REPRINTED if reprint else TicketEventKind.PRINTED,
            actor=actor,
            device=till.name,
            data={"medium": result.medium, "printer": result.printer, "sha256": result.sha256},
        )
    return PrintedTicket(result, reprint)
