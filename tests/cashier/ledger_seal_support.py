"""A small day of a till (cash-ins, a ticket sold and redeemed) and the tampers of issue 28 on its ledger,
done as the database owner would: triggers off, rows edited, every balance adjusted so that the trial
balance still holds. Shared by the PostgreSQL tests and the SQLite one."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import connection

from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, LedgerTransaction, Leg, Means, PlayerCard, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import player_cards, tickets
from halls.chains import ChainReport
from halls.models import AuditEntry, Venue
from halls.services.verify import AuditReport, verify_audit
from tests.cashier.ticket_support import funded_card, open_till
from tests.tampering import as_db_owner

D = Decimal
OWNED = (LedgerTransaction, Leg, Account, AuditEntry)


@dataclass(frozen=True)
class Day:
    card: PlayerCard
    cash_in: LedgerTransaction  # the first cash-in at the till
    later_cash_in: LedgerTransaction
    redemption: LedgerTransaction  # a ticket redeemed for cash: tickets debited, the drawer credited


def a_day(venue: Venue, cashier: User) -> Day:
    open_till(venue, cashier)
    card = funded_card(venue)
    player_cards.cash_in(card=card, amount=D("20.00"), means=Means.CASH, key="in-1", actor=cashier)
    sold = tickets.issue_for_payment(
        venue_id=venue.pk, amount=D("30.00"), means=Means.CASH, key="t1", actor=cashier
    )
    tickets.redeem_for_cash(venue_id=venue.pk, number=sold.ticket.number, key="r1", actor=cashier)
    player_cards.cash_in(card=card, amount=D("5.00"), means=Means.CASH, key="in-2", actor=cashier)
    return Day(
        card=card,
        cash_in=LedgerTransaction.objects.get(venue=venue, key="card_cash_in:in-1"),
        later_cash_in=LedgerTransaction.objects.get(venue=venue, key="card_cash_in:in-2"),
        redemption=LedgerTransaction.objects.get(venue=venue, kind=TxKind.TICKET_REDEEM),
    )


def ledger_report(venue: Venue) -> tuple[AuditReport, ChainReport]:
    report = verify_audit(venue_ids=[venue.pk])
    found = [c for c in report.chains if (c.kind, c.id) == ("ledger", venue.pk)]
    assert len(found) == 1, report
    return report, found[0]


def position(tx: LedgerTransaction) -> int:
    return LedgerTransaction.objects.filter(venue_id=tx.venue_id, pk__lte=tx.pk).count()


def _adjust(account_id: int, raw: Decimal) -> None:
    """Move the account's balance column as a leg of `raw` would have (the attacker keeps the books even)."""
    account = Account.objects.get(pk=account_id)
    Account.objects.filter(pk=account_id).update(
        balance=account.balance + ledger.shown(Kind(account.kind), raw)
    )


def _set_leg(leg: Leg, amount: Decimal) -> None:
    Leg.objects.filter(pk=leg.pk).update(amount=amount)
    _adjust(leg.account_id, amount - leg.amount)


def move_one_between_the_legs(tx: LedgerTransaction) -> None:
    """1.00 less on both legs of the transaction (still balanced), both balances adjusted."""
    with as_db_owner(*OWNED):
        for leg in tx.legs.all():
            _set_leg(leg, leg.amount - D("1.00") if leg.amount > 0 else leg.amount + D("1.00"))


def delete_with_legs(tx: LedgerTransaction) -> None:
    """The whole transaction gone, its legs' effect taken off the balances."""
    with as_db_owner(*OWNED):
        for leg in tx.legs.all():
            _adjust(leg.account_id, -leg.amount)
        Leg.objects.filter(transaction=tx).delete()
        LedgerTransaction.objects.filter(pk=tx.pk).delete()


def change_amount(tx: LedgerTransaction, amount: Decimal) -> None:
    """Every leg to ±amount, balances adjusted."""
    with as_db_owner(*OWNED):
        for leg in tx.legs.all():
            _set_leg(leg, amount if leg.amount > 0 else -amount)


def move_leg_to(tx: LedgerTransaction, kind: Kind, account: Account) -> None:
    """The leg on an account of `kind` moved onto `account`, both balances adjusted."""
    with as_db_owner(*OWNED):
        leg = tx.legs.get(account__kind=kind)
        Leg.objects.filter(pk=leg.pk).update(account=account)
        _adjust(leg.account_id, -leg.amount)
        _adjust(account.pk, leg.amount)


def insert_leg(tx: LedgerTransaction, account: Account, amount: Decimal) -> None:
    with as_db_owner(*OWNED):
        Leg.objects.create(transaction=tx, account=account, amount=amount)
        _adjust(account.pk, amount)


def edit_balance(account: Account, balance: Decimal) -> None:
    with as_db_owner(*OWNED):
        Account.objects.filter(pk=account.pk).update(balance=balance)


def renumber(tx: LedgerTransaction, new_id: int) -> None:
    """The transaction under another id, its legs following it."""
    table, legs = LedgerTransaction._meta.db_table, Leg._meta.db_table
    with as_db_owner(*OWNED), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        cursor.execute(f'UPDATE "{table}" SET id = %s WHERE id = %s', [new_id, tx.pk])  # noqa: S608
        cursor.execute(
            f'UPDATE "{legs}" SET transaction_id = %s WHERE transaction_id = %s',  # noqa: S608
            [new_id, tx.pk],
        )
        if connection.vendor == "postgresql":
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def delete_seal(tx: LedgerTransaction) -> None:
    """The transaction's audit entry deleted (the venue's chain breaks there too)."""
    with as_db_owner(*OWNED):
        AuditEntry.objects.filter(object_type="cashier.ledgertransaction", object_id=str(tx.pk)).delete()


def venue_account(venue: Venue, kind: Kind) -> Account:
    return books.venue_account(venue.pk, kind)
