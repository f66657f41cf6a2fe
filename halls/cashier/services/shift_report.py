"""A shift's figures, from the ledger: what the till page shows while it is open (the running totals) and
the shift report printed when it closes. Read-only."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.db.models import Count, Sum
from django.utils import formats, timezone
from django.utils.translation import gettext as _

from halls import i18n, money
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
from halls.cashier.printing.document import Document, Field, Paper, Rule

# The float first, the shift's operations, then the cash-up's difference and the cash-up itself.
_LAST = (TxKind.OVER_SHORT, TxKind.CASH_UP)
REPORT_ORDER = (TxKind.FLOAT, *(k for k in TxKind if k != TxKind.FLOAT and k not in _LAST), *_LAST)


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
        for kind in REPORT_ORDER
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


# --- the printed report ---------------------------------------------------------------------------------


def when(shift: Shift, value: datetime | None) -> str:
    """A time of the shift, in the venue's zone and the request's format."""
    if value is None:
        return "-"
    local = timezone.localtime(value, ZoneInfo(shift.venue.time_zone))
    return formats.date_format(local, "SHORT_DATETIME_FORMAT")


def document(report: ShiftReport) -> Document:
    """The shift report as a slip (halls.cashier.printing), in the active language."""
    shift = report.shift
    currency = shift.venue.currency
    lines: list[Field | Rule | str] = [
        Field(_("Till"), shift.till.name),
        Field(_("Shift cashier"), shift.cashier.get_username()),
        Field(_("Opened"), when(shift, shift.opened_at)),
        Field(_("Closed"), when(shift, shift.closed_at)),
        Field(_("Opening float"), i18n.amount(shift.float_amount, currency)),
        Rule(),
        _("Transactions"),
    ]
    for total in report.totals:
        lines.append(Field(f"{total.label} ({total.count})", i18n.amount(total.amount, currency)))
    if report.prizes:
        lines += [Rule(), _("Prizes paid")]
        for prize in report.prizes:
            label = f"{prize.label}, {prize.method_label} ({prize.count})"
            lines.append(Field(label, i18n.amount(prize.amount, currency)))
    lines += [Rule(), _("Cash-up")]
    for code, name in report.means:
        figures = [(_("%(means)s expected"), report.expected[code])]
        if report.counted is not None and report.differences is not None:
            figures += [
                (_("%(means)s counted"), report.counted[code]),
                (_("%(means)s difference"), report.differences[code]),
            ]
        for label, value in figures:
            lines.append(Field(label % {"means": name}, i18n.amount(value, currency)))
    if shift.witness is not None:
        lines.append(Field(_("Witness"), shift.witness.get_username()))
    if shift.note:
        lines.append(_("Note: %(note)s") % {"note": shift.note})
    difference = report.difference
    return Document(
        venue=shift.venue.name,
        title=_("Shift report"),
        kind="shift_report",
        lines=tuple(lines),
        amount=None if difference is None else Field(_("Difference"), i18n.amount(difference, currency)),
        footer=(_("Shift %(shift)s") % {"shift": shift.pk}, _("Signatures: cashier, witness")),
        paper=Paper.A4,
    )
