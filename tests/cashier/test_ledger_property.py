"""Property test over the whole ledger: random interleavings of shifts opened and closed (with counted
differences and a witness), card-range sales and returns, card cash-in (at a till by cash or bank card, and
by a device's bill reader), cash-out, spends, prizes awarded and paid (cash, card, ticket), tickets issued
(for cash or from a card), redeemed (for cash or into a card) and expired, devices emptied.

A model keeps every account's expected balance and predicts every refusal (money short in a drawer, on a
card, a payable or a ticket already gone). After every step: every transaction's legs sum to zero, no
guarded account is negative, the trial balance holds (each balance column equals its legs), the ledger's
balances are the model's, and a refused operation wrote nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.db.models import Count, Sum
from django.utils import timezone
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from halls.cashier import ledger
from halls.cashier.ledger import GUARDED, Kind
from halls.cashier.models import (
    Account,
    CashDevice,
    DeviceKind,
    LedgerTransaction,
    Leg,
    Means,
    PlayerCard,
    Shift,
    ShiftState,
    Till,
    TxKind,
)
from halls.cashier.services import ledger as books
from halls.cashier.services import shifts
from halls.errors import Conflict
from halls.models import AuditEntry, Jurisdiction, Role, Venue
from tests.conftest import SQLITE_RUN, make_user

D = Decimal
_runs = itertools.count(1)

amounts = st.decimals(min_value=D("0.01"), max_value=D("80.00"), places=2)
floats = st.decimals(min_value=D("0.00"), max_value=D("300.00"), places=2)
pick = st.integers(min_value=0, max_value=10**6)
# What a cash-up counts against what the drawer holds: exact, a little over, a little short.
differences = st.sampled_from([D("0"), D("0"), D("0.01"), D("-0.01"), D("5.00"), D("-5.00"), D("-1000")])


def _of(items: Sequence[object], i: int) -> object:
    return items[i % len(items)]


@dataclass
class Owed:
    """A prize waiting at the cashier or a ticket outstanding, in the model."""

    key: str
    amount: Decimal


class LedgerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        run = next(_runs)
        self.venue = Venue.objects.create(
            name=f"L{run}", licence_number=f"LEDGER-{run}", jurisdiction=Jurisdiction.ML
        )
        self.cashiers = [make_user(f"l{run}-cashier{i}", self.venue, Role.CASHIER) for i in range(3)]
        self.witness = make_user(f"l{run}-manager", self.venue, Role.OPERATOR)
        self.tills = [Till.objects.create(venue=self.venue, name=f"Caja {i}") for i in range(3)]
        self.device = CashDevice.objects.create(
            venue=self.venue, name="Terminal 1", kind=DeviceKind.TERMINAL, token_hash="0" * 64
        )
        self.open: dict[int, Shift] = {}
        self.closed = 0
        self.cards: list[PlayerCard] = []
        self.payables: list[Owed] = []
        self.tickets: list[Owed] = []
        self.expected: dict[str, Decimal] = {}  # account code -> shown balance
        self.keys = itertools.count(1)
        self.posted = 0

    # --- the model ----------------------------------------------------------------------------------

    def key(self, what: str) -> str:
        return f"{what}:{next(self.keys)}"

    def account(self, kind: Kind) -> Account:
        return books.venue_account(self.venue.pk, kind)

    def device_account(self) -> Account:
        account, _created = Account.objects.get_or_create(
            venue=self.venue,
            code=f"device:{self.device.pk}",
            defaults={"kind": Kind.DEVICE_CASH.value, "guarded": True, "device": self.device},
        )
        return account

    def shift_of(self, i: int) -> Shift:
        return self.open[sorted(self.open)[i % len(self.open)]]

    def short(self, legs: Sequence[ledger.Leg], accounts: dict[int, Account]) -> bool:
        """Whether the model says a guarded account would go below zero."""
        for leg in legs:
            account = accounts[leg.account]
            if Kind(account.kind) in GUARDED:
                after = self.expected.get(account.code, D(0)) + ledger.shown(Kind(account.kind), leg.amount)
                if after < 0:
                    return True
        return False

    def counts(self) -> tuple[int, int, int]:
        return (LedgerTransaction.objects.count(), Leg.objects.count(), AuditEntry.objects.count())

    def post(self, kind: TxKind, what: str, legs: list[ledger.Leg], shift: Shift | None = None) -> bool:
        """Post through the service; the model predicts success or refusal. True when it was posted."""
        accounts = {a.pk: a for a in Account.objects.filter(pk__in=[leg.account for leg in legs])}
        expect_refusal = self.short(legs, accounts)
        before = self.counts()
        refused: Conflict | None = None
        try:
            books.post(
                venue_id=self.venue.pk,
                kind=kind,
                key=self.key(what),
                legs=legs,
                actor=shift.cashier if shift else "system",
                shift=shift,
            )
        except Conflict as exc:
            refused = exc
        if refused is not None:
            assert expect_refusal, (kind, refused.code, refused.message)
            assert refused.code in ("drawer_short", "insufficient_balance"), refused.code
            assert self.counts() == before, "a refusal wrote something"
            return False
        assert not expect_refusal, (kind, legs)
        for leg in legs:
            account = accounts[leg.account]
            self.expected[account.code] = self.expected.get(account.code, D(0)) + ledger.shown(
                Kind(account.kind), leg.amount
            )
        self.posted += 1
        return True

    # --- shifts -------------------------------------------------------------------------------------

    @precondition(lambda self: len(self.open) < 3)
    @rule(float_amount=floats, i=pick)
    def open_shift(self, float_amount: Decimal, i: int) -> None:
        busy_tills = {s.till_id for s in self.open.values()}
        busy_cashiers = {s.cashier_id for s in self.open.values()}
        till = next(t for t in self.tills if t.pk not in busy_tills)
        free = [c for c in self.cashiers if c.pk not in busy_cashiers]
        cashier = free[i % len(free)]
        assert isinstance(cashier, User)
        shift = shifts.open_shift(till=till, cashier=cashier, float_amount=float_amount, actor=cashier)
        self.open[shift.pk] = shift
        for means in Means:
            self.expected.setdefault(books.drawer(shift, means).code, D(0))
        if float_amount > 0:
            self.expected[books.drawer(shift, Means.CASH).code] += float_amount
            house = self.account(Kind.HOUSE)
            self.expected[house.code] = self.expected.get(house.code, D(0)) + float_amount
            self.posted += 1

    @precondition(lambda self: self.open)
    @rule(i=pick, cash_off=differences, card_off=differences)
    def close_shift(self, i: int, cash_off: Decimal, card_off: Decimal) -> None:
        """The cash-up: per means, the difference to the house, then the counted money back to it."""
        shift = self.shift_of(i)
        house = self.account(Kind.HOUSE)
        counted: dict[str, str] = {}
        for means, off in ((Means.CASH, cash_off), (Means.BANK_CARD, card_off)):
            drawer = books.drawer(shift, means)
            held = self.expected[drawer.code]
            assert drawer.balance == held
            count = max(held + off, D(0))
            counted[means.value] = str(count)
            if count > held:
                assert self.post(
                    TxKind.OVER_SHORT,
                    "over",
                    [ledger.debit(drawer.pk, count - held), ledger.credit(house.pk, count - held)],
                    shift,
                )
            elif count < held:
                assert self.post(
                    TxKind.OVER_SHORT,
                    "short",
                    [ledger.debit(house.pk, held - count), ledger.credit(drawer.pk, held - count)],
                    shift,
                )
            if count > 0:
                assert self.post(
                    TxKind.CASH_UP,
                    "cash-up",
                    [ledger.debit(house.pk, count), ledger.credit(drawer.pk, count)],
                    shift,
                )
            assert self.expected[drawer.code] == 0
        Shift.objects.filter(pk=shift.pk).update(
            state=ShiftState.CLOSED, closed_at=timezone.now(), counted=counted, witness=self.witness
        )
        del self.open[shift.pk]
        self.closed += 1

    # --- sales ----------------------------------------------------------------------------------------

    @precondition(lambda self: self.open)
    @rule(i=pick, amount=amounts)
    def sell(self, i: int, amount: Decimal) -> None:
        shift = self.shift_of(i)
        drawer, sales = books.drawer(shift, Means.CASH), self.account(Kind.SALES)
        assert self.post(
            TxKind.SALE, "sale", [ledger.debit(drawer.pk, amount), ledger.credit(sales.pk, amount)], shift
        )

    @precondition(lambda self: self.open)
    @rule(i=pick, amount=amounts)
    def return_range(self, i: int, amount: Decimal) -> None:
        shift = self.shift_of(i)
        drawer, sales = books.drawer(shift, Means.CASH), self.account(Kind.SALES)
        self.post(
            TxKind.SALE_RETURN,
            "return",
            [ledger.debit(sales.pk, amount), ledger.credit(drawer.pk, amount)],
            shift,
        )

    # --- cards ----------------------------------------------------------------------------------------

    @rule()
    def new_card(self) -> None:
        card = PlayerCard.objects.create(
            venue=self.venue, number=f"9{self.venue.pk:05d}{len(self.cards):06d}", created_at=timezone.now()
        )
        self.cards.append(card)
        self.expected.setdefault(books.card_account(card).code, D(0))

    @precondition(lambda self: self.open and self.cards)
    @rule(i=pick, c=pick, amount=amounts, means=st.sampled_from(list(Means)))
    def cash_in(self, i: int, c: int, amount: Decimal, means: Means) -> None:
        shift, card = self.shift_of(i), self.cards[c % len(self.cards)]
        drawer, mine = books.drawer(shift, means), books.card_account(card)
        assert self.post(
            TxKind.CARD_CASH_IN,
            "cash-in",
            [ledger.debit(drawer.pk, amount), ledger.credit(mine.pk, amount)],
            shift,
        )

    @precondition(lambda self: self.cards)
    @rule(c=pick, amount=amounts)
    def device_cash_in(self, c: int, amount: Decimal) -> None:
        card = self.cards[c % len(self.cards)]
        stacker, mine = self.device_account(), books.card_account(card)
        assert self.post(
            TxKind.DEVICE_CASH_IN, "note", [ledger.debit(stacker.pk, amount), ledger.credit(mine.pk, amount)]
        )

    @precondition(lambda self: self.open)
    @rule(i=pick, amount=amounts)
    def empty_device(self, i: int, amount: Decimal) -> None:
        shift = self.shift_of(i)
        stacker, drawer = self.device_account(), books.drawer(shift, Means.CASH)
        self.post(
            TxKind.DEVICE_EMPTIED,
            "emptied",
            [ledger.debit(drawer.pk, amount), ledger.credit(stacker.pk, amount)],
            shift,
        )

    @precondition(lambda self: self.open and self.cards)
    @rule(i=pick, c=pick, amount=amounts)
    def cash_out(self, i: int, c: int, amount: Decimal) -> None:
        shift, card = self.shift_of(i), self.cards[c % len(self.cards)]
        drawer, mine = books.drawer(shift, Means.CASH), books.card_account(card)
        self.post(
            TxKind.CARD_CASH_OUT,
            "cash-out",
            [ledger.debit(mine.pk, amount), ledger.credit(drawer.pk, amount)],
            shift,
        )

    @precondition(lambda self: self.cards)
    @rule(c=pick, amount=amounts)
    def spend(self, c: int, amount: Decimal) -> None:
        card = self.cards[c % len(self.cards)]
        mine, sales = books.card_account(card), self.account(Kind.SALES)
        self.post(
            TxKind.CARD_SPEND, "spend", [ledger.debit(mine.pk, amount), ledger.credit(sales.pk, amount)]
        )

    # --- prizes ---------------------------------------------------------------------------------------

    @rule(amount=amounts, pooled=st.booleans())
    def award(self, amount: Decimal, pooled: bool) -> None:
        source = self.account(Kind.POOL_FUNDING if pooled else Kind.SALES)
        payable = self.account(Kind.PRIZES_PAYABLE)
        key = f"award:{len(self.payables)}"
        assert self.post(
            TxKind.PRIZE_AWARD, key, [ledger.debit(source.pk, amount), ledger.credit(payable.pk, amount)]
        )
        self.payables.append(Owed(key, amount))

    @precondition(lambda self: self.open and self.payables)
    @rule(i=pick, p=pick, method=st.sampled_from(["cash", "card", "ticket"]), c=pick)
    def pay(self, i: int, p: int, method: str, c: int) -> None:
        shift = self.shift_of(i)
        owed = self.payables[p % len(self.payables)]
        payable = self.account(Kind.PRIZES_PAYABLE)
        if method == "card" and self.cards:
            to = books.card_account(self.cards[c % len(self.cards)])
        elif method == "ticket":
            to = self.account(Kind.TICKETS)
        else:
            to = books.drawer(shift, Means.CASH)
        paid = self.post(
            TxKind.PRIZE_PAYOUT,
            "payout",
            [ledger.debit(payable.pk, owed.amount), ledger.credit(to.pk, owed.amount)],
            shift,
        )
        if paid:
            self.payables.remove(owed)
            if to.kind == Kind.TICKETS:
                self.tickets.append(Owed(f"prize-ticket:{owed.key}", owed.amount))

    # --- tickets --------------------------------------------------------------------------------------

    @precondition(lambda self: self.open)
    @rule(i=pick, amount=amounts, c=pick, from_card=st.booleans(), means=st.sampled_from(list(Means)))
    def issue_ticket(self, i: int, amount: Decimal, c: int, from_card: bool, means: Means) -> None:
        shift = self.shift_of(i)
        tickets = self.account(Kind.TICKETS)
        source = (
            books.card_account(self.cards[c % len(self.cards)])
            if from_card and self.cards
            else books.drawer(shift, means)
        )
        if self.post(
            TxKind.TICKET_ISSUE,
            "ticket",
            [ledger.debit(source.pk, amount), ledger.credit(tickets.pk, amount)],
            shift,
        ):
            self.tickets.append(Owed(f"ticket:{len(self.tickets)}", amount))

    @precondition(lambda self: self.open and self.tickets)
    @rule(i=pick, t=pick, into_card=st.booleans(), c=pick)
    def redeem_ticket(self, i: int, t: int, into_card: bool, c: int) -> None:
        shift = self.shift_of(i)
        ticket = self.tickets[t % len(self.tickets)]
        tickets = self.account(Kind.TICKETS)
        to = (
            books.card_account(self.cards[c % len(self.cards)])
            if into_card and self.cards
            else books.drawer(shift, Means.CASH)
        )
        if self.post(
            TxKind.TICKET_REDEEM,
            "redeem",
            [ledger.debit(tickets.pk, ticket.amount), ledger.credit(to.pk, ticket.amount)],
            shift,
        ):
            self.tickets.remove(ticket)

    @precondition(lambda self: self.tickets)
    @rule(t=pick)
    def expire_ticket(self, t: int) -> None:
        ticket = self.tickets[t % len(self.tickets)]
        tickets, house = self.account(Kind.TICKETS), self.account(Kind.HOUSE)
        assert self.post(
            TxKind.TICKET_EXPIRE,
            "expire",
            [ledger.debit(tickets.pk, ticket.amount), ledger.credit(house.pk, ticket.amount)],
        )
        self.tickets.remove(ticket)

    # --- invariants -----------------------------------------------------------------------------------

    @invariant()
    def every_transaction_balances(self) -> None:
        unbalanced = (
            Leg.objects.filter(transaction__venue=self.venue)
            .values("transaction")
            .annotate(total=Sum("amount"), n=Count("id"))
            .exclude(total=0)
        )
        assert not list(unbalanced)
        assert LedgerTransaction.objects.filter(venue=self.venue).count() == self.posted

    @invariant()
    def no_guarded_account_is_negative(self) -> None:
        assert not Account.objects.filter(venue=self.venue, guarded=True, balance__lt=0).exists()

    @invariant()
    def the_trial_balance_holds(self) -> None:
        books_now = books.trial_balance(self.venue.pk)
        assert books_now.holds, books_now

    @invariant()
    def the_ledger_is_the_model(self) -> None:
        stored = {a.code: a.balance for a in Account.objects.filter(venue=self.venue)}
        assert {c: b for c, b in stored.items() if b} == {c: b for c, b in self.expected.items() if b}
        owed = sum((o.amount for o in self.payables), D(0))
        outstanding = sum((o.amount for o in self.tickets), D(0))
        assert stored.get("prizes_payable", D(0)) == owed
        assert stored.get("tickets", D(0)) == outstanding


@pytest.mark.django_db
def test_random_interleavings_keep_the_books_balanced() -> None:
    run_state_machine_as_test(
        LedgerMachine,
        settings=settings(max_examples=8 if SQLITE_RUN else 20, stateful_step_count=30, deadline=None),
    )
