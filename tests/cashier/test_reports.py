"""The cashier's reports from the ledger: a day of a hall (Africa/Ceuta, UTC+1 in November) with one shift
that sells, returns, cashes cards in and out, pays prizes, issues and redeems tickets and closes short; the
day, the shift and the cashier reports to the cent, the venue's calendar day cut at its local midnights,
the tickets outstanding at the end, the trial balance; a few queries whatever the size; the API's rights.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import (
    Account,
    CashDevice,
    DeviceKind,
    Means,
    Payable,
    PayableKind,
    PayableState,
    PlayerCard,
    Shift,
    ShiftState,
    Till,
    TxKind,
)
from halls.cashier.services import ledger as books
from halls.cashier.services import player_cards, reports, shifts, tickets
from halls.errors import InvalidInput
from halls.models import Role, Venue
from tests.api_support import api_client
from tests.conftest import make_user

# The cashier opens its shift in each test, with the float the test counts.
pytestmark = pytest.mark.cashier_off_shift


D = Decimal
DAY = date(2026, 11, 20)
# 00:30 on the 20th in Ceuta is 23:30 UTC on the 19th: the day starts before the UTC date does.
START = datetime(2026, 11, 19, 23, 30, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def tick(self, minutes: int = 5) -> None:
        self.now += timedelta(minutes=minutes)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    at = Clock()
    monkeypatch.setattr(timezone, "now", at)
    return at


@dataclass
class Day:
    venue: Venue
    shift: Shift
    later: Shift  # the next day's shift, opened 00:30 local on the 21st
    card_a: PlayerCard
    card_b: PlayerCard


def _post(
    venue: Venue, kind: TxKind, key: str, debit: Account, credit: Account, amount: str, **kw: Any
) -> Any:
    return books.post(
        venue_id=venue.pk,
        kind=kind,
        key=key,
        legs=[ledger.debit(debit.pk, D(amount)), ledger.credit(credit.pk, D(amount))],
        **kw,
    ).transaction


def _award(venue: Venue, kind: PayableKind, source: Kind, amount: str, n: int) -> Payable:
    tx = _post(
        venue,
        TxKind.PRIZE_AWARD,
        f"award:{n}",
        books.venue_account(venue.pk, source),
        books.venue_account(venue.pk, Kind.PRIZES_PAYABLE),
        amount,
        actor="system",
    )
    return Payable.objects.create(
        venue=venue,
        kind=kind,
        source=f"test:{n}",
        description=f"prize {n}",
        amount=D(amount),
        awarded_at=tx.created_at,
        award_tx=tx,
    )


def _paid(payable: Payable, tx: Any, method: str, cashier: User) -> None:
    Payable.objects.filter(pk=payable.pk).update(
        state=PayableState.PAID, paid_at=tx.created_at, paid_by=cashier, method=method, payout_tx=tx
    )


@pytest.fixture
def day(venue: Venue, cashier: User, clock: Clock) -> Day:
    """The 20th: one shift at Caja 1 does everything a till does; terminals spend and take notes."""
    till = Till.objects.create(venue=venue, name="Caja 1")
    shift = shifts.open_shift(till=till, cashier=cashier, float_amount=D("100.00"), actor=cashier)
    cash = books.drawer(shift, Means.CASH)
    bank = books.drawer(shift, Means.BANK_CARD)
    sales = books.venue_account(venue.pk, Kind.SALES)
    house = books.venue_account(venue.pk, Kind.HOUSE)
    payable = books.venue_account(venue.pk, Kind.PRIZES_PAYABLE)
    at = {"actor": cashier, "shift": shift}
    card_a = player_cards.issue_card(venue_id=venue.pk, actor=cashier)
    card_b = player_cards.issue_card(venue_id=venue.pk, actor=cashier)
    a, b = books.card_account(card_a), books.card_account(card_b)
    device = CashDevice.objects.create(venue=venue, name="T1", kind=DeviceKind.TERMINAL, token_hash="0" * 64)
    stacker = books.device_account(device)
    clock.tick()
    _post(venue, TxKind.SALE, "sale:1", cash, sales, "30.00", **at)
    _post(venue, TxKind.SALE, "sale:2", cash, sales, "12.00", **at)
    _post(venue, TxKind.SALE_RETURN, "return:1", sales, cash, "6.00", **at)
    clock.tick()
    _post(venue, TxKind.CARD_CASH_IN, "in:1", cash, a, "50.00", **at)
    _post(venue, TxKind.CARD_CASH_IN, "in:2", bank, b, "20.00", **at)
    _post(venue, TxKind.DEVICE_CASH_IN, "note:1", stacker, a, "10.00", actor="T1")
    _post(venue, TxKind.CARD_CASH_OUT, "out:1", a, cash, "15.00", **at)
    _post(venue, TxKind.CARD_SPEND, "spend:1", b, sales, "8.00", actor="T1")
    clock.tick(60)
    line = _award(venue, PayableKind.LINE, Kind.SALES, "25.00", 1)
    jackpot = _award(venue, PayableKind.ACCUMULATED, Kind.POOL_FUNDING, "40.00", 2)
    _paid(line, _post(venue, TxKind.PRIZE_PAYOUT, "pay:1", payable, cash, "25.00", **at), "cash", cashier)
    prize_ticket = tickets.issue_ticket(
        venue_id=venue.pk,
        amount=D("40.00"),
        funded_by=payable,
        key="pay:2",
        actor=cashier,
        shift=shift,
        kind=TxKind.PRIZE_PAYOUT,
    ).ticket
    _paid(jackpot, prize_ticket.issue_tx, "ticket", cashier)
    clock.tick()
    sold = tickets.issue_for_payment(
        venue_id=venue.pk, amount=D("9.00"), means="cash", key="t1", actor=cashier
    )
    tickets.issue_from_card(
        venue_id=venue.pk, card_number=card_a.number, amount=D("5.00"), key="t2", actor=cashier
    )
    clock.tick()
    tickets.redeem_for_cash(venue_id=venue.pk, number=sold.ticket.number, key="r1", actor=cashier)
    # 22:00 local: the cash-up. Cash expected 100 + 30 + 12 - 6 + 50 - 15 - 25 + 9 - 9 = 146.00; 145.50
    # counted: 0.50 short. The bank card drawer: 20.00, counted right.
    clock.now = datetime(2026, 11, 20, 21, 0, tzinfo=UTC)
    assert books.drawer(shift, Means.CASH).balance == D("146.00")
    _post(venue, TxKind.OVER_SHORT, "short:1", house, cash, "0.50", **at)
    _post(venue, TxKind.CASH_UP, "up:1", house, cash, "145.50", **at)
    _post(venue, TxKind.CASH_UP, "up:2", house, bank, "20.00", **at)
    Shift.objects.filter(pk=shift.pk).update(
        state=ShiftState.CLOSED,
        closed_at=clock(),
        expected={"cash": "146.00", "bank_card": "20.00"},
        counted={"cash": "145.50", "bank_card": "20.00"},
        difference=D("-0.50"),
        witness=make_user("manager", venue, Role.OPERATOR),
    )
    # 00:30 local on the 21st (23:30 UTC on the 20th): another cashier's shift and sale, the next day.
    clock.now = datetime(2026, 11, 20, 23, 30, tzinfo=UTC)
    other = make_user("cashier2", venue, Role.CASHIER)
    till2 = Till.objects.create(venue=venue, name="Caja 2")
    later = shifts.open_shift(till=till2, cashier=other, float_amount=D("50.00"), actor=other)
    _post(
        venue, TxKind.SALE, "sale:3", books.drawer(later, Means.CASH), sales, "7.00", actor=other, shift=later
    )
    shift.refresh_from_db()
    return Day(venue, shift, later, card_a, card_b)


def _line(count: int, amount: str) -> dict[str, Any]:
    return {"count": count, "amount": amount}


@pytest.mark.django_db
def test_the_day_report_counts_every_transaction_of_the_local_day(day: Day) -> None:
    report = reports.day_report(venue=day.venue, day=DAY).as_dict()
    assert (report["start"], report["end"]) == ("2026-11-20T00:00:00+01:00", "2026-11-21T00:00:00+01:00")
    assert report["sales"] == _line(2, "42.00")  # not the 7.00 sold at 00:30 on the 21st
    assert report["returns"] == _line(1, "6.00")
    assert report["net_sales"] == "36.00"
    assert report["card_spends"] == _line(1, "8.00")
    assert report["cash_in"] == {"bank_card": _line(1, "20.00"), "cash": _line(1, "50.00")}
    assert report["device_cash_in"] == _line(1, "10.00")
    assert report["cash_out"] == {"cash": _line(1, "15.00")}
    assert report["awards"] == {"accumulated": _line(1, "40.00"), "line": _line(1, "25.00")}
    assert report["payouts"] == {
        "by_kind": {"accumulated": _line(1, "40.00"), "line": _line(1, "25.00")},
        "by_method": {"cash": _line(1, "25.00"), "ticket": _line(1, "40.00")},
    }
    assert report["tickets"] == {
        "issued": {
            "cash": _line(1, "9.00"),
            "player_card": _line(1, "5.00"),
            "prizes_payable": _line(1, "40.00"),
        },
        "redeemed": {"cash": _line(1, "9.00")},
        "expired": _line(0, "0.00"),
        "outstanding": _line(2, "45.00"),
    }
    assert report["floats"] == _line(1, "100.00")
    assert report["cash_ups"] == _line(2, "165.50")
    assert (report["over"], report["short"], report["difference"]) == (
        _line(0, "0.00"),
        _line(1, "0.50"),
        "-0.50",
    )
    assert [(s["id"], s["counted"], s["difference"], s["witness"]) for s in report["shifts"]] == [
        (day.shift.pk, {"cash": "145.50", "bank_card": "20.00"}, "-0.50", "manager")
    ]
    assert report["transactions"]["sale"] == _line(2, "42.00")
    assert sum(line["count"] for line in report["transactions"].values()) == 19
    balance = report["trial_balance"]
    assert balance["holds"] and balance["period_legs_total"] == "0.00" and balance["legs_total"] == "0.00"
    assert balance["drifted"] == []
    # At the day's end: the tickets account holds the two tickets out, the cards what is left on them.
    assert balance["by_kind"]["tickets"] == "45.00"
    assert balance["by_kind"]["player_card"] == "52.00"  # A: 50 + 10 - 15 - 5 = 40; B: 20 - 8 = 12
    assert balance["by_kind"]["drawer"] == "0.00"  # the shift's drawers went back to the house


@pytest.mark.django_db
def test_the_next_day_starts_at_local_midnight_and_the_tickets_expire_into_a_later_day(
    day: Day, clock: Clock
) -> None:
    next_day = reports.day_report(venue=day.venue, day=DAY + timedelta(days=1))
    assert (next_day.sales.count, next_day.sales.amount) == (1, D("7.00"))
    assert next_day.floats.amount == D("50.00") and [s.id for s in next_day.shifts] == [day.later.pk]
    assert next_day.tickets_outstanding == reports.Line(2, D("45.00"))
    clock.now = datetime(2026, 12, 21, 9, 0, tzinfo=UTC)  # past the 30 days' validity
    assert tickets.expire_tickets() == 2
    expiry = reports.day_report(venue=day.venue, day=date(2026, 12, 21))
    assert expiry.tickets_expired == reports.Line(2, D("45.00"))
    assert expiry.tickets_outstanding == reports.Line(0, D("0.00"))
    assert expiry.trial_balance is not None and expiry.trial_balance.by_kind["tickets"] == 0
    assert expiry.holds


@pytest.mark.django_db
def test_the_shift_and_the_cashier_report_show_what_crossed_the_till(day: Day, cashier: User) -> None:
    shift = reports.shift_report(day.shift).as_dict()
    assert shift["sales"] == _line(2, "42.00") and shift["returns"] == _line(1, "6.00")
    # What no till touched (a spend at a terminal, a device's note, the prizes awarded) is not the shift's.
    assert shift["card_spends"] == _line(0, "0.00") and shift["device_cash_in"] == _line(0, "0.00")
    assert shift["awards"] == {}
    assert shift["payouts"]["by_method"] == {"cash": _line(1, "25.00"), "ticket": _line(1, "40.00")}
    assert shift["tickets"]["outstanding"] == _line(2, "45.00")  # issued in the shift, still out
    assert shift["floats"] == _line(1, "100.00") and shift["short"] == _line(1, "0.50")
    assert shift["trial_balance"]["period_legs_total"] == "0.00" and shift["trial_balance"]["holds"]
    mine = reports.cashier_report(venue=day.venue, cashier=cashier, first=DAY, last=DAY).as_dict()
    for key in (
        "sales",
        "returns",
        "cash_in",
        "cash_out",
        "payouts",
        "tickets",
        "floats",
        "cash_ups",
        "short",
    ):
        assert mine[key] == shift[key], key
    assert [s["id"] for s in mine["shifts"]] == [day.shift.pk]
    other = User.objects.get(username="cashier2")
    theirs = reports.cashier_report(venue=day.venue, cashier=other, first=DAY, last=DAY + timedelta(days=1))
    assert theirs.sales == reports.Line(1, D("7.00")) and [s.id for s in theirs.shifts] == [day.later.pk]
    with pytest.raises(InvalidInput) as refused:
        reports.cashier_report(venue=day.venue, cashier=cashier, first=DAY, last=DAY - timedelta(days=1))
    assert refused.value.code == "bad_range"


@pytest.mark.django_db
def test_a_report_costs_the_same_few_queries_whatever_the_number_of_transactions(
    day: Day, cashier: User, django_assert_max_num_queries: Any
) -> None:
    with django_assert_max_num_queries(9):
        small = reports.day_report(venue=day.venue, day=DAY)
    sales = books.venue_account(day.venue.pk, Kind.SALES)
    drawer = books.drawer(day.later, Means.CASH)
    for n in range(40):
        _post(day.venue, TxKind.SALE, f"more:{n}", drawer, sales, "1.00", actor=cashier, shift=day.later)
    with django_assert_max_num_queries(9):
        big = reports.day_report(venue=day.venue, day=DAY + timedelta(days=1))
    assert big.sales.count == 41 and small.sales.count == 2


@pytest.mark.django_db
def test_the_trial_balance_names_an_account_whose_balance_column_drifted(day: Day) -> None:
    assert books.trial_balance(day.venue.pk).holds
    Account.objects.filter(venue=day.venue, code="house").update(balance=D("1.00"))
    drifted = books.trial_balance(day.venue.pk)
    assert drifted.drifted == ["house"] and not drifted.holds
    assert not reports.day_report(venue=day.venue, day=DAY).holds


@pytest.mark.django_db
def test_the_api_answers_each_reader_their_reports(
    day: Day, cashier: User, operator: User, other_venue: Venue
) -> None:
    mine, boss = api_client(cashier), api_client(operator)
    url = f"/api/cashier/reports/shifts/{day.shift.pk}/"
    assert mine.get(url).json()["sales"] == _line(2, "42.00")
    assert boss.get(url).status_code == 200
    theirs = api_client(User.objects.get(username="cashier2"))
    refused = theirs.get(url)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "not_your_shift"
    outsider = api_client(make_user("outsider", other_venue, Role.OPERATOR))
    assert outsider.get(url).json()["error"]["code"] == "unknown_shift"

    query: dict[str, Any] = {"venue": day.venue.pk, "date_from": "2026-11-20", "date_to": "2026-11-20"}
    assert mine.get("/api/cashier/reports/cashier/", query).json()["cashier"] == "cashier"
    someone = {**query, "cashier": day.later.cashier_id}
    assert mine.get("/api/cashier/reports/cashier/", someone).json()["error"]["code"] == "not_your_report"
    assert boss.get("/api/cashier/reports/cashier/", someone).json()["cashier"] == "cashier2"
    bad = mine.get("/api/cashier/reports/cashier/", {**query, "date_to": "2026-11-19"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_range"

    day_query: dict[str, Any] = {"venue": day.venue.pk, "day": "2026-11-20"}
    assert mine.get("/api/cashier/reports/day/", day_query).json()["error"]["code"] == "role_required"
    assert boss.get("/api/cashier/reports/day/", day_query).json()["net_sales"] == "36.00"
    assert outsider.get("/api/cashier/reports/day/", day_query).status_code == 404
    assert boss.get("/api/cashier/reports/day/", {**day_query, "day": "20-11-2026"}).status_code == 400
    sheet = boss.get("/api/cashier/reports/day/csv/", day_query)
    assert sheet.status_code == 200 and sheet["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(sheet.content.decode())))
    assert rows[0] == ["section", "item", "count", "amount"]
    assert ["sales", "card ranges sold", "2", "42.00"] in rows
    assert ["tickets", "outstanding at the end", "2", "45.00"] in rows
    assert rows[-1] == ["trial balance", "balanced", "", "yes"]
