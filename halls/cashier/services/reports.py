"""The cashier's reports, computed from the ledger: per shift, per cashier (over a range of days) and per
day (a venue's calendar day in its time zone).

Each report is a handful of GROUP BY queries whatever the number of transactions: the transactions counted
per kind; their legs summed per (transaction kind, account kind, means), which gives every breakdown (cash-in
by means, payouts by method, tickets by where the money came from or went); the payables paid and awarded
per prize kind and method; the tickets outstanding at the end; the shifts (floats, cash-ups, differences);
and the trial balance (halls.cashier.services.ledger.trial_balance, as of the end of the period).

Scopes. A shift: its transactions (everything that crossed its drawers). A cashier: the transactions of
their shifts made within the days. A day: every transaction of the venue made that day, till or not (card
spends at terminals, prizes awarded, devices' notes, expiries). The tickets outstanding at the end: those
of the scope (issued in the shift, or by the cashier's shifts) still neither redeemed nor expired at the
end; for a day, every ticket of the venue outstanding at the end of the day.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib.auth.models import User
from django.db.models import Count, Q, QuerySet, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import money
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import (
    LedgerTransaction,
    Leg,
    Means,
    Payable,
    PayoutMethod,
    Shift,
    Ticket,
    TxKind,
)
from halls.cashier.services import ledger as books
from halls.errors import InvalidInput
from halls.models import Venue

ZERO = money.ZERO
# The longest range a cashier report covers (a quarter and a bit): a longer one is refused, not slow.
MAX_DAYS = 93


@dataclass
class Line:
    """How many and how much."""

    count: int = 0
    amount: Decimal = ZERO

    def add(self, count: int, amount: Decimal) -> None:
        self.count += count
        self.amount += amount

    def as_dict(self) -> dict[str, Any]:
        return {"count": self.count, "amount": money.text_cents(self.amount)}


def _lines(lines: dict[str, Line]) -> dict[str, Any]:
    return {name: line.as_dict() for name, line in sorted(lines.items())}


@dataclass
class ShiftLine:
    """One shift of the report: its float and, once closed, its cash-up."""

    id: int
    till: str
    cashier: str
    state: str
    opened_at: datetime
    closed_at: datetime | None
    float_amount: Decimal
    expected: dict[str, str]
    counted: dict[str, str]
    difference: Decimal | None
    witness: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "till": self.till,
            "cashier": self.cashier,
            "state": self.state,
            "opened_at": self.opened_at.isoformat(),
            "closed_at": self.closed_at.isoformat() if self.closed_at else None,
            "float": money.text_cents(self.float_amount),
            "expected": self.expected,
            "counted": self.counted,
            "difference": money.text_cents(self.difference),
            "witness": self.witness,
        }


@dataclass
class Report:
    """What a report shows. Amounts are positive cents; `count` is a number of transactions."""

    scope: str  # "shift" | "cashier" | "day"
    venue_id: int
    start: datetime | None  # None: the shift's whole life
    end: datetime  # outstanding tickets and the trial balance are as of this instant
    title: dict[str, Any]
    transactions: dict[str, Line] = field(default_factory=dict)  # every kind: count and amount
    sales: Line = field(default_factory=Line)
    returns: Line = field(default_factory=Line)
    card_spends: Line = field(default_factory=Line)
    cash_in: dict[str, Line] = field(default_factory=dict)  # card cash-in at a till, by means
    device_cash_in: Line = field(default_factory=Line)  # notes into cards through devices' bill readers
    cash_out: dict[str, Line] = field(default_factory=dict)  # card cash-out at a till, by means
    devices_emptied: Line = field(default_factory=Line)
    awards: dict[str, Line] = field(default_factory=dict)  # prizes awarded, by payable kind
    payouts_by_kind: dict[str, Line] = field(default_factory=dict)
    payouts_by_method: dict[str, Line] = field(default_factory=dict)
    tickets_issued: dict[str, Line] = field(default_factory=dict)  # by where the money came from
    tickets_redeemed: dict[str, Line] = field(default_factory=dict)  # by where it went
    tickets_expired: Line = field(default_factory=Line)
    tickets_outstanding: Line = field(default_factory=Line)  # at `end`
    floats: Line = field(default_factory=Line)
    cash_ups: Line = field(default_factory=Line)
    over: Line = field(default_factory=Line)  # counted above expected
    short: Line = field(default_factory=Line)  # counted below expected
    shifts: list[ShiftLine] = field(default_factory=list)
    # The period's legs per account kind, on the kind's normal side, and their sum (zero: balanced).
    movements: dict[str, Decimal] = field(default_factory=dict)
    legs_total: Decimal = ZERO
    trial_balance: books.TrialBalance | None = None  # the venue's books as of `end`

    @property
    def net_sales(self) -> Decimal:
        return self.sales.amount - self.returns.amount

    @property
    def difference(self) -> Decimal:
        return self.over.amount - self.short.amount

    @property
    def holds(self) -> bool:
        return self.legs_total == 0 and (self.trial_balance is None or self.trial_balance.holds)

    def as_dict(self) -> dict[str, Any]:
        tb = self.trial_balance
        return {
            "scope": self.scope,
            "venue": self.venue_id,
            **self.title,
            "start": self.start.isoformat() if self.start else None,
            "end": self.end.isoformat(),
            "sales": self.sales.as_dict(),
            "returns": self.returns.as_dict(),
            "net_sales": money.text_cents(self.net_sales),
            "card_spends": self.card_spends.as_dict(),
            "cash_in": _lines(self.cash_in),
            "device_cash_in": self.device_cash_in.as_dict(),
            "cash_out": _lines(self.cash_out),
            "devices_emptied": self.devices_emptied.as_dict(),
            "awards": _lines(self.awards),
            "payouts": {"by_kind": _lines(self.payouts_by_kind), "by_method": _lines(self.payouts_by_method)},
            "tickets": {
                "issued": _lines(self.tickets_issued),
                "redeemed": _lines(self.tickets_redeemed),
                "expired": self.tickets_expired.as_dict(),
                "outstanding": self.tickets_outstanding.as_dict(),
            },
            "floats": self.floats.as_dict(),
            "cash_ups": self.cash_ups.as_dict(),
            "over": self.over.as_dict(),
            "short": self.short.as_dict(),
            "difference": money.text_cents(self.difference),
            "shifts": [s.as_dict() for s in self.shifts],
            "transactions": _lines(self.transactions),
            "trial_balance": {
                "period_legs_total": money.text_cents(self.legs_total),
                "period_movements": {k: money.text_cents(v) for k, v in sorted(self.movements.items())},
                "legs_total": money.text_cents(tb.legs_total) if tb else None,
                "by_kind": {k: money.text_cents(v) for k, v in sorted(tb.by_kind.items())} if tb else {},
                "drifted": tb.drifted if tb else [],
                "holds": self.holds,
            },
        }


# --- the periods ------------------------------------------------------------------------------------------


def day_bounds(venue: Venue, day: date) -> tuple[datetime, datetime]:
    """The venue's calendar day in its time zone: [local midnight, next local midnight)."""
    zone = ZoneInfo(venue.time_zone)
    start = datetime.combine(day, time.min, tzinfo=zone)
    end = datetime.combine(day + timedelta(days=1), time.min, tzinfo=zone)
    return start, end


def _check_days(first: date, last: date) -> None:
    if last < first:
        raise InvalidInput(
            _("The range ends (%(last)s) before it starts (%(first)s).") % {"first": first, "last": last},
            code="bad_range",
            field="to",
        )
    if (last - first).days + 1 > MAX_DAYS:
        raise InvalidInput(
            _("A report covers at most %(days)s days.") % {"days": MAX_DAYS},
            code="range_too_long",
            field="to",
        )


# --- the queries ----------------------------------------------------------------------------------------


def _fill(
    report: Report,
    transactions: QuerySet[LedgerTransaction],
    shifts: QuerySet[Shift],
    outstanding: QuerySet[Ticket],
) -> Report:
    """Every figure of `report` from the scope's transactions, shifts and tickets (a fixed few queries)."""
    for row in transactions.values("kind").annotate(n=Count("id")).order_by("kind"):
        report.transactions[row["kind"]] = Line(row["n"])
    legs = (
        Leg.objects.filter(transaction__in=transactions)
        .values("transaction__kind", "account__kind", "account__means")
        .annotate(
            n=Count("transaction", distinct=True),
            debits=Sum("amount", filter=Q(amount__gt=0)),
            credits=Sum("amount", filter=Q(amount__lt=0)),
        )
        .order_by()
    )
    for row in legs:
        _leg_row(
            report,
            TxKind(row["transaction__kind"]),
            Kind(row["account__kind"]),
            row["account__means"],
            row["n"],
            row["debits"] or ZERO,
            -(row["credits"] or ZERO),
        )
    _payables(report, transactions)
    _shifts(report, shifts)
    ticket_sum = outstanding.aggregate(n=Count("id"), total=Sum("amount"))
    report.tickets_outstanding = Line(ticket_sum["n"], ticket_sum["total"] or ZERO)
    report.trial_balance = books.trial_balance(report.venue_id, until=report.end)
    return report


def _leg_row(
    report: Report, tx: TxKind, account: Kind, means: str, n: int, debits: Decimal, credits: Decimal
) -> None:
    """One (transaction kind, account kind, means) row of summed legs, into the report's lines."""
    report.legs_total += debits - credits
    report.movements[account.value] = report.movements.get(account.value, ZERO) + ledger.shown(
        account, debits - credits
    )
    if debits:  # the total of a kind: its debit legs (every operation debits one account)
        report.transactions.setdefault(tx.value, Line()).amount += debits
    means_name = means or Means.CASH.value
    if tx == TxKind.CARD_CASH_IN and account == Kind.DRAWER and debits:
        report.cash_in.setdefault(means_name, Line()).add(n, debits)
    elif tx == TxKind.CARD_CASH_OUT and account == Kind.DRAWER and credits:
        report.cash_out.setdefault(means_name, Line()).add(n, credits)
    elif tx == TxKind.PRIZE_PAYOUT and credits:
        method = {Kind.DRAWER: PayoutMethod.CASH, Kind.PLAYER_CARD: PayoutMethod.PLAYER_CARD}.get(
            account, PayoutMethod.TICKET
        )
        report.payouts_by_method.setdefault(method.value, Line()).add(n, credits)
        if account == Kind.TICKETS:  # a prize paid as a ticket is a ticket issued
            report.tickets_issued.setdefault(Kind.PRIZES_PAYABLE.value, Line()).add(n, credits)
    elif tx == TxKind.TICKET_ISSUE and debits:
        source = means_name if account == Kind.DRAWER else account.value
        report.tickets_issued.setdefault(source, Line()).add(n, debits)
    elif tx == TxKind.TICKET_REDEEM and credits:
        into = means_name if account == Kind.DRAWER else account.value
        report.tickets_redeemed.setdefault(into, Line()).add(n, credits)
    elif tx == TxKind.OVER_SHORT and account == Kind.DRAWER:
        if debits:
            report.over.add(n, debits)
        if credits:
            report.short.add(n, credits)
    elif account in (Kind.DRAWER, Kind.DEVICE_CASH) and debits:
        simple = {
            TxKind.SALE: report.sales,
            TxKind.FLOAT: report.floats,
            TxKind.DEVICE_CASH_IN: report.device_cash_in,
            TxKind.DEVICE_EMPTIED: report.devices_emptied,
        }
        if tx in simple:
            simple[tx].add(n, debits)
    elif account == Kind.DRAWER and credits and tx in (TxKind.SALE_RETURN, TxKind.CASH_UP):
        (report.returns if tx == TxKind.SALE_RETURN else report.cash_ups).add(n, credits)
    elif tx == TxKind.CARD_SPEND and account == Kind.PLAYER_CARD and debits:
        report.card_spends.add(n, debits)
    elif tx == TxKind.TICKET_EXPIRE and account == Kind.TICKETS and debits:
        report.tickets_expired.add(n, debits)


def _payables(report: Report, transactions: QuerySet[LedgerTransaction]) -> None:
    """Prizes paid in the scope per kind, and prizes awarded in it per kind (the payables' rows)."""
    paid = (
        Payable.objects.filter(payout_tx__in=transactions)
        .values("kind")
        .annotate(n=Count("id"), total=Sum("amount"))
        .order_by("kind")
    )
    for row in paid:
        report.payouts_by_kind[row["kind"]] = Line(row["n"], row["total"])
    awarded = (
        Payable.objects.filter(award_tx__in=transactions)
        .values("kind")
        .annotate(n=Count("id"), total=Sum("amount"))
        .order_by("kind")
    )
    for row in awarded:
        report.awards[row["kind"]] = Line(row["n"], row["total"])


def _name(user: User | None) -> str | None:
    return user.get_username() if user is not None else None


def _shifts(report: Report, shifts: QuerySet[Shift]) -> None:
    for shift in shifts.select_related("till", "cashier", "witness").order_by("opened_at", "pk"):
        report.shifts.append(
            ShiftLine(
                id=shift.pk,
                till=shift.till.name,
                cashier=shift.cashier.get_username(),
                state=shift.state,
                opened_at=shift.opened_at,
                closed_at=shift.closed_at,
                float_amount=shift.float_amount,
                expected=dict(shift.expected),
                counted=dict(shift.counted),
                difference=shift.difference,
                witness=_name(shift.witness),
            )
        )


def _outstanding(venue_id: int, end: datetime) -> QuerySet[Ticket]:
    """Tickets issued before `end` and neither redeemed nor expired by then."""
    return Ticket.objects.filter(venue_id=venue_id, issued_at__lt=end).filter(
        Q(closed_at__isnull=True) | Q(closed_at__gte=end)
    )


# --- the reports ----------------------------------------------------------------------------------------


def shift_report(shift: Shift) -> Report:
    """Everything that crossed the shift's drawers, its float and cash-up; tickets it issued still out."""
    end = shift.closed_at or timezone.now()
    report = Report(
        scope="shift",
        venue_id=shift.venue_id,
        start=shift.opened_at,
        end=end,
        title={"shift": shift.pk, "till": shift.till.name, "cashier": shift.cashier.get_username()},
    )
    transactions = LedgerTransaction.objects.filter(venue_id=shift.venue_id, shift=shift)
    tickets = _outstanding(shift.venue_id, end).filter(issue_tx__shift=shift)
    return _fill(report, transactions, Shift.objects.filter(pk=shift.pk), tickets)


def cashier_report(*, venue: Venue, cashier: User, first: date, last: date) -> Report:
    """The cashier's shifts' transactions made from `first` to `last` (the venue's days, both included)."""
    _check_days(first, last)
    start, _end = day_bounds(venue, first)
    _start, end = day_bounds(venue, last)
    report = Report(
        scope="cashier",
        venue_id=venue.pk,
        start=start,
        end=end,
        title={"cashier": cashier.get_username(), "from": first.isoformat(), "to": last.isoformat()},
    )
    transactions = LedgerTransaction.objects.filter(
        venue_id=venue.pk, shift__cashier=cashier, created_at__gte=start, created_at__lt=end
    )
    shifts = _overlapping(venue.pk, start, end).filter(cashier=cashier)
    tickets = _outstanding(venue.pk, end).filter(issue_tx__shift__cashier=cashier, issued_at__gte=start)
    return _fill(report, transactions, shifts, tickets)


def day_report(*, venue: Venue, day: date) -> Report:
    """Every transaction of the venue on its calendar day; every ticket outstanding at the day's end."""
    start, end = day_bounds(venue, day)
    report = Report(scope="day", venue_id=venue.pk, start=start, end=end, title={"day": day.isoformat()})
    transactions = LedgerTransaction.objects.filter(
        venue_id=venue.pk, created_at__gte=start, created_at__lt=end
    )
    return _fill(report, transactions, _overlapping(venue.pk, start, end), _outstanding(venue.pk, end))


def _overlapping(venue_id: int, start: datetime, end: datetime) -> QuerySet[Shift]:
    """Shifts open at some moment of [start, end)."""
    return Shift.objects.filter(venue_id=venue_id, opened_at__lt=end).filter(
        Q(closed_at__isnull=True) | Q(closed_at__gte=start)
    )


# --- the day report as CSV rows ---------------------------------------------------------------------------


def rows(report: Report) -> Iterable[list[str]]:
    """The report as (section, item, count, amount) rows, for a spreadsheet."""
    yield [_("section"), _("item"), _("count"), _("amount")]

    def line(section: str, item: str, value: Line) -> list[str]:
        return [section, item, str(value.count), money.text_cents(value.amount)]

    yield line(_("sales"), _("card ranges sold"), report.sales)
    yield line(_("sales"), _("card ranges returned"), report.returns)
    yield [_("sales"), _("net"), "", money.text_cents(report.net_sales)]
    yield line(_("cards"), _("spends"), report.card_spends)
    for means, value in sorted(report.cash_in.items()):
        yield line(_("cards"), _("cash-in (%(means)s)") % {"means": means}, value)
    yield line(_("cards"), _("cash-in by devices"), report.device_cash_in)
    for means, value in sorted(report.cash_out.items()):
        yield line(_("cards"), _("cash-out (%(means)s)") % {"means": means}, value)
    yield line(_("devices"), _("emptied"), report.devices_emptied)
    for kind, value in sorted(report.awards.items()):
        yield line(_("prizes"), _("awarded (%(kind)s)") % {"kind": kind}, value)
    for kind, value in sorted(report.payouts_by_kind.items()):
        yield line(_("prizes"), _("paid (%(kind)s)") % {"kind": kind}, value)
    for method, value in sorted(report.payouts_by_method.items()):
        yield line(_("prizes"), _("paid by %(method)s") % {"method": method}, value)
    for source, value in sorted(report.tickets_issued.items()):
        yield line(_("tickets"), _("issued (%(source)s)") % {"source": source}, value)
    for into, value in sorted(report.tickets_redeemed.items()):
        yield line(_("tickets"), _("redeemed (%(into)s)") % {"into": into}, value)
    yield line(_("tickets"), _("expired"), report.tickets_expired)
    yield line(_("tickets"), _("outstanding at the end"), report.tickets_outstanding)
    yield line(_("shifts"), _("floats"), report.floats)
    yield line(_("shifts"), _("cash-ups"), report.cash_ups)
    yield line(_("shifts"), _("over"), report.over)
    yield line(_("shifts"), _("short"), report.short)
    for kind, value in sorted(report.transactions.items()):
        yield line(_("transactions"), kind, value)
    tb = report.trial_balance
    if tb is not None:
        for kind, amount in sorted(tb.by_kind.items()):
            yield [_("trial balance"), kind, "", money.text_cents(amount)]
    yield [_("trial balance"), _("balanced"), "", _("yes") if report.holds else _("no")]
