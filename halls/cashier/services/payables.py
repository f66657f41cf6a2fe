"""Prizes payable: a prize becomes a payable in the transaction that awards it; the cashier pays it once.

Creation (`create_payable`, called by bingo, the tables and the machines where they write their awards)
posts the award: sales → prizes payable for a traditional Line or Bingo, pool funding → prizes payable
for an accumulated, table or machine prize. It is idempotent by `source` (unique per venue). It moves no
money out of a guarded account, but its UPDATEs of the venue's prizes-payable, sales and pool-funding rows
lock them until commit: an awarding transaction takes them first (`hold_award_accounts`, Rank.ACCOUNT)
before its first audit entry, so it never waits for an account while holding the audit chain that a
payout (accounts, then audit) waits for.

Paying (`pay_payable`): the cashier's open shift (Rank.SHIFT), the payable (PAYABLE), the player card
(PLAYER_CARD), then `post` locks the accounts money leaves (ACCOUNT): prizes payable → the shift's cash
drawer, a player card, or a ticket (halls.cashier.services.tickets). A payable is paid once: the same
idempotency key answers the first payout (`replayed`), another attempt is refused (`already_paid`).
A kind whose award must also be settled on the awarding side (a machine hand pay unlocks the machine)
registers a payer (`register_payer`) that takes its own, lower-ranked locks and then calls the settle it
is given, in the same transaction.

The receipt number is the venue's next in one gap-free sequence ("R-000123"): a counter row bumped in
the paying transaction (`halls.events.next_seq` on "cashier.<venue>.receipts", the last lock the payout
takes), so a payout that rolls back gives its number back and two payouts never share one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from halls import db_retry, events, i18n, money
from halls.access import require_role
from halls.actors import Actor, actor_label
from halls.cashier import hooks, ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import (
    LedgerTransaction,
    Means,
    Payable,
    PayableKind,
    PayableState,
    PayoutMethod,
    PlayerCard,
    PlayerCardState,
    Ticket,
    Till,
    TxKind,
)
from halls.cashier.printing.document import Barcode, Document, Field, Line
from halls.cashier.services import ledger as books
from halls.cashier.services import tickets
from halls.cashier.services.locks import lock_accounts, lock_payable, lock_player_card
from halls.cashier.services.printing import PrintResult, print_document
from halls.cashier.services.shifts import open_shift_of
from halls.errors import Conflict, InvalidInput, NotFound
from halls.eventtypes import EventType, PayablePaid, PayableWaiting
from halls.models import AuditEntry, Role, Venue
from halls.services import audit

SALES_FUNDED = frozenset({PayableKind.LINE, PayableKind.BINGO})
MAX_KEY = 80
RECEIPT_DIGITS = 6


def stream(venue_id: int) -> str:
    """The venue's cashier stream: the till pages listen to it."""
    return f"cashier.{venue_id}"


# --- creation ----------------------------------------------------------------------------------------------


@contextlib.contextmanager
def venue_language(venue_id: int) -> Iterator[None]:
    """Texts made inside are in the venue's language (a payable's description, its receipt)."""
    language = Venue.objects.filter(pk=venue_id).values_list("language", flat=True).first()
    with translation.override(language or settings.LANGUAGE_CODE):
        yield


def _funding(kind: PayableKind) -> Kind:
    return Kind.SALES if kind in SALES_FUNDED else Kind.POOL_FUNDING


def hold_award_accounts(venue_ids: Iterable[int]) -> None:
    """Lock the accounts prize awards move in these venues (sales, pool funding, prizes payable; Rank.ACCOUNT,
    id order). An awarding transaction calls it before its first audit entry, after its game, table,
    machine and pool locks; `create_payable` then waits for nothing."""
    ids = [
        books.venue_account(venue_id, kind).pk
        for venue_id in sorted(set(venue_ids))
        for kind in (Kind.SALES, Kind.POOL_FUNDING, Kind.PRIZES_PAYABLE)
    ]
    lock_accounts(ids)


def create_payable(
    *, venue_id: int, kind: PayableKind | str, source: str, description: str, amount: Decimal, actor: Actor
) -> Payable | None:
    """The prize `source` awarded `amount` (whole cents): a payable waiting at the cashier, and the award's
    posting. None for a zero amount (nothing to pay). The same source again answers the payable made the
    first time; with another amount or kind it is a programming error (ValueError)."""
    kind = PayableKind(kind)
    if amount < 0 or amount != money.cents(amount):
        raise ValueError(f"a prize payable is a positive amount in cents, not {amount}")
    if not source or len(source) > 80:
        raise ValueError(f"a payable's source is 1-80 characters, not {source!r}")
    if amount == 0:
        return None
    with transaction.atomic():
        existing = Payable.objects.filter(venue_id=venue_id, source=source).first()
        if existing is not None:
            if existing.amount != amount or existing.kind != kind:
                raise ValueError(f"payable {source} exists for {existing.kind} {existing.amount}")
            return existing
        funding = books.venue_account(venue_id, _funding(kind))
        prizes = books.venue_account(venue_id, Kind.PRIZES_PAYABLE)
        lock_accounts([funding.pk, prizes.pk])  # held already when the caller held the award accounts
        description = description[:200]
        posted = books.post(
            venue_id=venue_id,
            kind=TxKind.PRIZE_AWARD,
            key=f"award:{source}",
            legs=[ledger.debit(funding.pk, amount), ledger.credit(prizes.pk, amount)],
            actor=actor,
            memo=description,
            data={"source": source, "payable_kind": kind.value},
        )
        payable = Payable.objects.create(
            venue_id=venue_id,
            kind=kind,
            source=source,
            description=description,
            amount=amount,
            awarded_at=posted.transaction.created_at,
            award_tx=posted.transaction,
        )
        audit.record(
            venue_id=venue_id,
            actor=actor,
            action="cashier.payable_created",
            obj=payable,
            data={
                "kind": kind.value,
                "source": source,
                "description": description,
                "amount": money.text(amount),
                "award_tx": posted.transaction.pk,
            },
        )
        events.emit(stream(venue_id), EventType.PAYABLE_CREATED, waiting_payload(payable))
    return payable


# --- paying ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Payout:
    """A payable as paid; `replayed`: this call repeated an earlier one's key, nothing was written."""

    payable: Payable
    replayed: bool

    @property
    def ticket(self) -> Ticket | None:
        """The ticket a prize paid as a ticket was printed on."""
        if self.payable.method != PayoutMethod.TICKET or self.payable.payout_tx_id is None:
            return None
        return Ticket.objects.filter(issue_tx_id=self.payable.payout_tx_id).first()


Settle = Callable[[], Payout]
# payer(payable, settle, reference): takes the awarding side's locks, calls settle() (the cashier's part),
# records its own side of the payment (with the caller's `reference`, e.g. a voucher number), and returns
# what settle returned; all in the caller's transaction.
Payer = Callable[[Payable, Settle, str], Payout]

_payers: dict[str, Payer] = {}


def register_payer(kind: PayableKind | str, payer: Payer) -> None:
    """Payables of `kind` are paid through `payer` (machines registers the hand pay's)."""
    _payers[PayableKind(kind).value] = payer


def payout_key(key: str) -> str:
    """The ledger key of a payout under the caller's idempotency key."""
    return f"payout:{key}"


def checked_key(key: object) -> str:
    text = str(key or "").strip()
    if not text or len(text) > MAX_KEY:
        raise InvalidInput(
            _("Give an idempotency key of 1 to %(max)s characters.") % {"max": MAX_KEY},
            code="bad_idempotency_key",
        )
    return text


def checked_method(method: object) -> PayoutMethod:
    if method not in PayoutMethod.values:
        raise InvalidInput(
            _("Pay a prize in cash, to a player card or as a ticket, not %(method)r.") % {"method": method},
            code="bad_method",
        )
    return PayoutMethod(str(method))


def _local(venue_id: int, at: Any) -> str:
    zone = Venue.objects.filter(pk=venue_id).values_list("time_zone", flat=True).first()
    return format(timezone.localtime(at, ZoneInfo(zone or settings.TIME_ZONE)), "%Y-%m-%d %H:%M:%S")


def _already_paid(row: Payable) -> Conflict:
    by = row.paid_by.get_username() if row.paid_by is not None else ""
    return Conflict(
        _("This prize was paid at %(paid_at)s by %(paid_by)s (receipt %(receipt)s).")
        % {"paid_at": _local(row.venue_id, row.paid_at), "paid_by": by, "receipt": row.receipt},
        code="already_paid",
        paid_at=row.paid_at.isoformat() if row.paid_at else None,
        paid_by=by,
        receipt=row.receipt,
        method=row.method,
    )


def _replay(payable_id: int, key: str) -> Payout | None:
    """The payout already made under `key` (a paid payable is never changed again: no lock needed)."""
    row = Payable.objects.select_related("paid_by", "payout_tx").filter(pk=payable_id).first()
    paid = row is not None and row.state == PayableState.PAID and row.payout_tx is not None
    if paid and row is not None and row.payout_tx is not None and row.payout_tx.key == payout_key(key):
        return Payout(row, replayed=True)
    return None


@db_retry.retried("cashier.pay_payable")
def pay_payable(
    *,
    payable: Payable,
    method: PayoutMethod | str,
    actor: Actor,
    key: str,
    card: PlayerCard | None = None,
    reference: str = "",
    identification: int | None = None,
) -> Payout:
    """`actor`, a cashier on shift in the payable's venue, pays it: in cash from the shift's drawer, to
    `card` (a player card of the venue), or as a ticket. Once: the same `key` again answers the first
    payout; any other attempt on a paid payable is refused with `already_paid` (when, by whom).
    `reference`: the caller's own note of the payment (a voucher number), kept with the ledger entry.
    `identification`: the winner's identification at the cage; the payout guards (halls.cashier.hooks: the
    cage's AML gate) refuse a prize at or above the threshold without one, before anything is written."""
    method = checked_method(method)
    key = checked_key(key)
    reference = str(reference or "").strip()
    if len(reference) > 120:
        raise InvalidInput(_("The payment reference is at most 120 characters."), code="bad_payment_ref")
    if not isinstance(actor, User):
        raise InvalidInput(_("A prize is paid by a person: a cashier."), code="cashier_required")
    require_role(actor, payable.venue_id, Role.CASHIER)
    if method == PayoutMethod.PLAYER_CARD and card is None:
        raise InvalidInput(_("Name the player card to pay the prize to."), code="card_required")
    if method != PayoutMethod.PLAYER_CARD and card is not None:
        raise InvalidInput(_("A card is named only for a payout to a player card."), code="card_not_expected")
    if card is not None and card.venue_id != payable.venue_id:
        raise NotFound(_("No card %(number)s in this venue.") % {"number": card.number}, code="unknown_card")
    replay = _replay(payable.pk, key)
    if replay is not None:
        return replay
    claim = hooks.PayoutClaim(
        venue_id=payable.venue_id,
        amount=payable.amount,
        kind=payable.kind,
        identification=identification,
        payable_id=payable.pk,
        card_id=card.pk if card is not None else None,
    )
    if payable.state != PayableState.PAID:  # a paid one is refused below, naming when and by whom
        hooks.check_payout(claim)

    def settle() -> Payout:
        return _settle(
            payable_id=payable.pk,
            method=method,
            actor=actor,
            key=key,
            card=card,
            reference=reference,
            claim=claim,
        )

    payer = _payers.get(payable.kind)
    with transaction.atomic():
        return payer(payable, settle, reference) if payer is not None else settle()


def _settle(
    *,
    payable_id: int,
    method: PayoutMethod,
    actor: User,
    key: str,
    card: PlayerCard | None,
    reference: str,
    claim: hooks.PayoutClaim,
) -> Payout:
    """The cashier's part of a payout, in order: shift, payable, card, accounts (post), receipt number."""
    ledger_key = payout_key(key)
    with transaction.atomic():
        venue_id = Payable.objects.values_list("venue_id", flat=True).get(pk=payable_id)
        shift = open_shift_of(venue_id=venue_id, cashier=actor)
        row = lock_payable(payable_id)
        if row.state == PayableState.PAID:
            tx_id = row.payout_tx_id
            if tx_id is not None and LedgerTransaction.objects.filter(pk=tx_id, key=ledger_key).exists():
                return Payout(Payable.objects.select_related("paid_by").get(pk=row.pk), replayed=True)
            raise _already_paid(row)
        prizes = books.venue_account(venue_id, Kind.PRIZES_PAYABLE)
        data = {"payable": row.pk, "source": row.source, "method": method.value, "reference": reference}
        ticket = None
        if method == PayoutMethod.TICKET:
            issued = tickets.issue_ticket(
                venue_id=venue_id,
                amount=row.amount,
                funded_by=prizes,
                key=ledger_key,
                actor=actor,
                shift=shift,
                device=shift.till.name,
                kind=TxKind.PRIZE_PAYOUT,
                memo=row.description,
                data=data,
            )
            ticket = issued.ticket
            replayed, tx = issued.replayed, ticket.issue_tx
        else:
            if method == PayoutMethod.PLAYER_CARD:
                assert card is not None
                locked = lock_player_card(card.pk)
                if locked.state == PlayerCardState.BLOCKED:
                    raise Conflict(
                        _("Card %(number)s is blocked: it cannot be paid to.") % {"number": locked.number},
                        code="card_blocked",
                    )
                target = books.card_account(locked)
                data["card"] = locked.number
            else:
                target = books.drawer(shift, Means.CASH)
            posted = books.post(
                venue_id=venue_id,
                kind=TxKind.PRIZE_PAYOUT,
                key=ledger_key,
                legs=[ledger.debit(prizes.pk, row.amount), ledger.credit(target.pk, row.amount)],
                actor=actor,
                shift=shift,
                device=shift.till.name,
                memo=row.description,
                data=data,
            )
            replayed, tx = posted.replayed, posted.transaction
        if replayed:  # the key was spent on another operation that moved the same money
            raise Conflict(
                _("Idempotency key %(key)r was used for another operation.") % {"key": key},
                code="idempotency_key_reused",
            )
        row.state = PayableState.PAID
        row.paid_at = tx.created_at
        row.paid_by = actor
        row.method = method
        row.payout_tx = tx
        row.receipt = _next_receipt(venue_id)
        row.save(update_fields=["state", "paid_at", "paid_by", "method", "payout_tx", "receipt"])
        audit.record(
            venue_id=venue_id,
            actor=actor,
            action="cashier.payable_paid",
            obj=row,
            data={
                "source": row.source,
                "amount": money.text(row.amount),
                "method": method.value,
                "receipt": row.receipt,
                "shift": shift.pk,
                "till": shift.till.name,
                "payout_tx": tx.pk,
                "card": data.get("card", ""),
                "reference": reference,
                "ticket": ticket.number if ticket is not None else "",
            },
        )
        hooks.payout_made(claim, tx.pk, actor)
        if ticket is not None:
            tickets.announce(ticket, EventType.TICKET_ISSUED)
        events.emit(stream(venue_id), EventType.PAYABLE_PAID, paid_payload(row))
    return Payout(row, replayed=False)


def _next_receipt(venue_id: int) -> str:
    return f"R-{events.next_seq(f'cashier.{venue_id}.receipts'):0{RECEIPT_DIGITS}d}"


# --- reads -------------------------------------------------------------------------------------------------


def waiting_payload(payable: Payable) -> PayableWaiting:
    return PayableWaiting(
        payable=payable.pk,
        kind=payable.kind,
        source=payable.source,
        description=payable.description,
        amount=payable.amount,
        state=payable.state,
        awarded_at=payable.awarded_at,
    )


def paid_payload(payable: Payable) -> PayablePaid:
    assert payable.paid_at is not None
    return PayablePaid(
        **waiting_payload(payable),
        paid_at=payable.paid_at,
        paid_by=actor_label(payable.paid_by),
        method=payable.method,
        receipt=payable.receipt,
    )


def waiting(venue_ids: Iterable[int]) -> list[Payable]:
    """The payables waiting at the cashier in these venues, newest first."""
    return list(
        Payable.objects.filter(venue_id__in=list(venue_ids), state=PayableState.WAITING).order_by(
            "-awarded_at", "-pk"
        )
    )


# --- the receipt -------------------------------------------------------------------------------------------


def _printed_before(payable: Payable) -> bool:
    return AuditEntry.objects.filter(
        action="cashier.printed", object_type=Payable._meta.label_lower, object_id=str(payable.pk)
    ).exists()


def receipt_document(payable: Payable, *, duplicate: bool = False) -> Document:
    """The prize receipt, in the venue's language: what was paid, to which prize, how, by whom, when."""
    tx_id = payable.payout_tx_id
    if payable.state != PayableState.PAID or payable.paid_at is None or tx_id is None:
        raise Conflict(_("This prize has not been paid: it has no receipt yet."), code="not_paid")
    venue = Venue.objects.get(pk=payable.venue_id)
    tx = LedgerTransaction.objects.select_related("shift__till").get(pk=tx_id)
    with venue_language(venue.pk):
        lines: list[Line] = [
            Field(_("Receipt"), payable.receipt),
            payable.description,
            Field(_("Prize"), str(PayableKind(payable.kind).label)),
            Field(_("Awarded"), _local(venue.pk, payable.awarded_at)),
            Field(_("Paid"), _local(venue.pk, payable.paid_at)),
            Field(_("Paid by"), payable.paid_by.get_username() if payable.paid_by is not None else ""),
            Field(_("Till"), tx.shift.till.name if tx.shift is not None else tx.device),
            Field(_("Paid as"), str(PayoutMethod(payable.method).label)),
        ]
        card = str(tx.data.get("card", ""))
        if card:
            lines.append(Field(_("Player card"), card))
        ticket = Ticket.objects.filter(issue_tx_id=tx.pk).first()
        if ticket is not None:
            lines.append(Field(_("Ticket"), ticket.number))
        footer = [_("DUPLICATE")] if duplicate else []
        return Document(
            venue=venue.name,
            title=_("Prize receipt"),
            kind="payout",
            lines=tuple(lines),
            amount=Field(_("Amount"), i18n.amount(payable.amount, venue.currency)),
            barcode=Barcode(payable.receipt),
            footer=tuple(footer),
        )


def print_receipt(*, payable: Payable, till: Till, actor: Actor) -> PrintResult:
    """Print the payable's receipt at `till` (its printer, else a PDF in the result), after the payout has
    committed; a later print says DUPLICATE. Audited by the printing service (`cashier.printed`)."""
    if till.venue_id != payable.venue_id:
        raise ValueError(f"till {till.pk} is not of the payable's venue")
    payable.refresh_from_db()
    document = receipt_document(payable, duplicate=_printed_before(payable))
    return print_document(till=till, document=document, actor=actor, subject=payable)
