"""A shift's figures, from the ledger: what the till page shows while it is open (the running totals) and
the shift report printed when it closes. Read-only."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import Count, Sum

from halls import money
from halls.cashier.models import (
    Account,
    Leg,
    Means,
    Payable,
    PayableKind,
    PayoutMethod,
    Shift,
    ShiftState,
    TxKind,
)


@dataclass(frozen=True)
class KindTotal:
    """The shift's transactions of one kind: how many, their amount, and what they moved in each drawer
    (> 0 into the drawer, < 0 out of it)."""

    kind: str
    label: str
    count: int
    amount: Decimal
    drawer: dict[str, Decimal]


@dataclass(frozen=True)
class PrizeTotal:
    kind: str
    label: str
    method: str
    method_label: str
    count: int
    amount: Decimal


@dataclass(frozen=True)
class ShiftReport:
    shift: Shift
    # Per means: the drawer's balance (open), or what the cash-up expected (closed).
    expected: dict[str, Decimal]
    counted: dict[str, Decimal] | None
    differences: dict[str, Decimal] | None
    totals: list[KindTotal]
    prizes: list[PrizeTotal]
    transactions: int = 0
    means: list[tuple[str, str]] = field(default_factory=lambda: [(str(m), str(m.label)) for m in Means])

    @property
    def difference(self) -> Decimal | None:
        return self.shift.difference

    def total(self, kind: TxKind) -> KindTotal | None:
        return next((t for t in self.totals if t.kind == kind), None)


def _zero_by_means() -> dict[str, Decimal]:
    return {str(m): money.ZERO for m in Means}


def _decimals(stored: dict[str, str]) -> dict[str, Decimal]:
    return {m: Decimal(stored.get(m, "0")) for m in Means.values}


def shift_report(shift: Shift) -> ShiftReport:
    """The shift's figures (four queries): per kind of transaction, per means, and the prizes it paid."""
    legs = Leg.objects.filter(transaction__shift=shift)
    sizes = {
        row["transaction__kind"]: (row["n"], row["amount"])
        for row in legs.filter(amount__gt=0)
        .values("transaction__kind")
        .annotate(n=Count("transaction", distinct=True), amount=Sum("amount"))
    }
    drawer: dict[str, dict[str, Decimal]] = {}
    for row in (
        legs.filter(account__shift=shift)
        .values("transaction__kind", "account__means")
        .annotate(s=Sum("amount"))
    ):
        drawer.setdefault(row["transaction__kind"], _zero_by_means())[row["account__means"]] = row["s"]
    totals = [
        KindTotal(
            kind=str(kind),
            label=str(kind.label),
            count=sizes[kind][0],
            amount=sizes[kind][1],
            drawer=drawer.get(kind, _zero_by_means()),
        )
        for kind in TxKind
        if kind in sizes
    ]
    prizes = [
        PrizeTotal(
            kind=row["kind"],
            label=str(PayableKind(row["kind"]).label),
            method=row["method"],
            method_label=str(PayoutMethod(row["method"]).label),
            count=row["n"],
            amount=row["amount"],
        )
        for row in Payable.objects.filter(payout_tx__shift=shift)
        .values("kind", "method")
        .annotate(n=Count("pk"), amount=Sum("amount"))
        .order_by("kind", "method")
    ]
    if shift.state == ShiftState.CLOSED:
        expected = _decimals(shift.expected)
        counted: dict[str, Decimal] | None = _decimals(shift.counted)
    else:
        expected = _zero_by_means()
        for account in Account.objects.filter(shift=shift):
            expected[account.means] = account.balance
        counted = None
    differences = None if counted is None else {m: counted[m] - expected[m] for m in expected}
    return ShiftReport(
        shift=shift,
        expected=expected,
        counted=counted,
        differences=differences,
        totals=totals,
        prizes=prizes,
        transactions=sum(n for n, _amount in sizes.values()),
    )
