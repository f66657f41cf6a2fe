"""Prizes payable: every Line and Bingo share, table seat payout and machine hit becomes a payable in the
transaction that awards it, and the cashier pays it once (cash, player card, ticket) with a receipt."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from bingo.traditional.models import Award, CardSeries, Game
from bingo.traditional.services.readmodels import game_recall
from halls import events
from halls.cashier.ledger import Kind
from halls.cashier.models import (
    Account,
    LedgerTransaction,
    Leg,
    Payable,
    PlayerCard,
    PlayerCardState,
    Ticket,
    TxKind,
)
from halls.cashier.services import ledger as books
from halls.cashier.services import payables
from halls.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from halls.eventtypes import EventType
from halls.models import AuditEntry, Role, StaffRole, StreamCursor, Venue
from tests.cashier.payable_support import balance, cash, line_and_bingo, new_cashier, on_shift

pytestmark = pytest.mark.django_db

D = Decimal


@pytest.fixture
def won(manual_game: Game, card_series: CardSeries, caller: User, cashier: User) -> dict[str, Any]:
    return line_and_bingo(manual_game, card_series, caller, cashier)


def written() -> dict[str, int]:
    return {
        "tx": LedgerTransaction.objects.count(),
        "legs": Leg.objects.count(),
        "audit": AuditEntry.objects.count(),
        "tickets": Ticket.objects.count(),
        "paid": Payable.objects.filter(state="paid").count(),
    }


def test_a_shared_line_and_a_bingo_become_payables_of_the_split_amounts(
    won: dict[str, Any], venue: Venue
) -> None:
    game: Game = won["game"]
    lines, bingo = won["lines"], won["bingo"]
    assert [p.amount for p in lines] == [D("0.26")] * 3  # 0.80 shared by three, 0.02 to the house
    assert bingo.amount == D("4.00")
    awards = Award.objects.filter(result__game=game).order_by("pk")
    assert sorted(p.source for p in [*lines, bingo]) == sorted(f"bingo.award:{a.pk}" for a in awards)
    first = won["line_serials"][0]
    # In the venue's language (Spanish here), whatever the person's; the room first, so two rooms' games
    # of the same number are told apart.
    room = game.room.name
    assert f"{room} · Partida {game.number} · Línea · cartón A-{first:04d}" in [p.description for p in lines]
    assert bingo.description == f"{room} · Partida {game.number} · Bingo · cartón A-{won['bingo_serial']:04d}"
    assert all(p.state == "waiting" and p.paid_at is None and p.receipt == "" for p in [*lines, bingo])
    # The award is posted: sales → prizes payable, no shift (no till is crossed).
    tx = bingo.award_tx
    assert (tx.kind, tx.shift_id, tx.key) == (TxKind.PRIZE_AWARD, None, f"award:{bingo.source}")
    legs = {leg.account.kind: leg.amount for leg in tx.legs.select_related("account")}
    assert legs == {Kind.SALES: D("4.00"), Kind.PRIZES_PAYABLE: D("-4.00")}
    assert balance(venue, Kind.PRIZES_PAYABLE) == D("4.78")
    assert books.trial_balance(venue.pk).holds
    assert AuditEntry.objects.filter(action="cashier.payable_created").count() == 4


def test_paid_in_cash_from_the_drawer_with_a_receipt_each_and_the_books_balanced(
    won: dict[str, Any], venue: Venue, cashier: User
) -> None:
    shift = on_shift(cashier, venue, "10.00")
    before = cash(shift)
    paid = [
        payables.pay_payable(payable=p, method="cash", actor=cashier, key=f"pay-{p.pk}")
        for p in [*won["lines"], won["bingo"]]
    ]
    assert [p.replayed for p in paid] == [False] * 4
    assert [p.payable.receipt for p in paid] == ["R-000001", "R-000002", "R-000003", "R-000004"]
    row = Payable.objects.get(pk=won["bingo"].pk)
    assert (row.state, row.method, row.paid_by, row.receipt) == ("paid", "cash", cashier, "R-000004")
    assert row.paid_at is not None and row.paid_at >= row.awarded_at
    tx = row.payout_tx
    assert tx is not None
    assert (tx.kind, tx.shift_id, tx.key) == (TxKind.PRIZE_PAYOUT, shift.pk, f"payout:pay-{row.pk}")
    assert cash(shift) == before - D("4.78")
    assert balance(venue, Kind.PRIZES_PAYABLE) == D("0.00")
    assert books.trial_balance(venue.pk).holds
    entry = AuditEntry.objects.get(action="cashier.payable_paid", object_id=str(row.pk))
    assert entry.data["receipt"] == "R-000004" and entry.data["till"] == shift.till.name


def test_paid_to_a_player_card_and_never_to_a_blocked_or_foreign_card(
    won: dict[str, Any], venue: Venue, other_venue: Venue, cashier: User
) -> None:
    on_shift(cashier, venue)
    card = PlayerCard.objects.create(venue=venue, number="100000000017", created_at=timezone.now())
    blocked = PlayerCard.objects.create(
        venue=venue, number="100000000025", state=PlayerCardState.BLOCKED, created_at=timezone.now()
    )
    foreign = PlayerCard.objects.create(venue=other_venue, number="200000000014", created_at=timezone.now())
    bingo = won["bingo"]
    before = written()
    with pytest.raises(Conflict) as refused:
        payables.pay_payable(payable=bingo, method="player_card", actor=cashier, key="k-1", card=blocked)
    assert refused.value.code == "card_blocked"
    with pytest.raises(NotFound) as unknown:
        payables.pay_payable(payable=bingo, method="player_card", actor=cashier, key="k-1", card=foreign)
    assert unknown.value.code == "unknown_card"
    with pytest.raises(InvalidInput) as missing:
        payables.pay_payable(payable=bingo, method="player_card", actor=cashier, key="k-1")
    assert missing.value.code == "card_required"
    assert written() == before
    payout = payables.pay_payable(payable=bingo, method="player_card", actor=cashier, key="k-1", card=card)
    assert payout.payable.method == "player_card"
    assert Account.objects.get(pk=books.card_account(card).pk).balance == D("4.00")
    tx_id = payout.payable.payout_tx_id
    assert tx_id is not None
    tx = LedgerTransaction.objects.get(pk=tx_id)
    legs = {leg.account.code: leg.amount for leg in tx.legs.select_related("account")}
    assert legs == {"prizes_payable": D("4.00"), f"card:{card.number}": D("-4.00")}
    assert books.trial_balance(venue.pk).holds


def test_paid_as_a_ticket(won: dict[str, Any], venue: Venue, cashier: User) -> None:
    on_shift(cashier, venue)
    payout = payables.pay_payable(payable=won["bingo"], method="ticket", actor=cashier, key="t-1")
    ticket = payout.ticket
    assert ticket is not None and (ticket.amount, ticket.state) == (D("4.00"), "issued")
    assert ticket.issue_tx_id == payout.payable.payout_tx_id
    assert LedgerTransaction.objects.get(pk=ticket.issue_tx_id).kind == TxKind.PRIZE_PAYOUT
    assert balance(venue, Kind.TICKETS) == D("4.00") and balance(venue, Kind.PRIZES_PAYABLE) == D("0.78")
    again = payables.pay_payable(payable=won["bingo"], method="ticket", actor=cashier, key="t-1")
    assert again.replayed and again.ticket == ticket and Ticket.objects.count() == 1
    assert books.trial_balance(venue.pk).holds


def test_paid_once_a_retry_answers_the_first_payout_and_another_payment_is_refused(
    won: dict[str, Any], venue: Venue, cashier: User
) -> None:
    shift = on_shift(cashier, venue, "10.00")
    line = won["lines"][0]
    first = payables.pay_payable(payable=line, method="cash", actor=cashier, key="once")
    after = written()
    again = payables.pay_payable(payable=line, method="cash", actor=cashier, key="once")
    assert again.replayed and again.payable.receipt == first.payable.receipt == "R-000001"
    assert written() == after
    other = new_cashier(venue, "cajera-2")
    on_shift(other, venue, "10.00")
    after = written()
    for who, key, method in ((cashier, "twice", "cash"), (other, "elsewhere", "ticket")):
        with pytest.raises(Conflict) as refused:
            payables.pay_payable(payable=line, method=method, actor=who, key=key)
        assert refused.value.code == "already_paid"
        assert "cashier" in refused.value.message and "R-000001" in refused.value.message
        assert refused.value.details["paid_by"] == "cashier"
    assert written() == after
    # The key of one payout is not the key of another: refused, nothing written.
    with pytest.raises(Conflict) as reused:
        payables.pay_payable(payable=won["lines"][1], method="cash", actor=cashier, key="once")
    assert reused.value.code == "idempotency_key_reused"
    assert written() == after
    assert LedgerTransaction.objects.filter(kind=TxKind.PRIZE_PAYOUT, shift=shift).count() == 1


def test_a_short_drawer_or_no_shift_pays_nothing_and_writes_nothing(
    won: dict[str, Any], venue: Venue, cashier: User
) -> None:
    poor = new_cashier(venue, "cajero-sin-fondo")
    on_shift(poor, venue, "1.00")
    off = new_cashier(venue, "cajero-libre")
    bingo = won["bingo"]
    before = written()
    with pytest.raises(Conflict) as short:
        payables.pay_payable(payable=bingo, method="cash", actor=poor, key="short")
    assert short.value.code == "drawer_short"
    with pytest.raises(Conflict) as no_shift:
        payables.pay_payable(payable=bingo, method="cash", actor=off, key="off")
    assert no_shift.value.code == "no_open_shift"
    caller = User.objects.get(username="caller")
    with pytest.raises(PermissionDenied):
        payables.pay_payable(payable=bingo, method="cash", actor=caller, key="caller")
    with pytest.raises(InvalidInput):
        payables.pay_payable(payable=bingo, method="cheque", actor=poor, key="cheque")
    with pytest.raises(InvalidInput):
        payables.pay_payable(payable=bingo, method="cash", actor=poor, key=" ")
    assert written() == before
    bingo.refresh_from_db()
    assert bingo.state == "waiting"
    # The refused payouts took no receipt number: the first payout is R-000001.
    on_shift(cashier, venue, "10.00")
    payout = payables.pay_payable(payable=bingo, method="cash", actor=cashier, key="ok")
    assert payout.payable.receipt == "R-000001"


def test_the_till_pages_hear_of_each_payable_and_its_payment(
    manual_game: Game,
    card_series: CardSeries,
    caller: User,
    cashier: User,
    venue: Venue,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    heard: list[events.Event] = []
    monkeypatch.setattr(events, "publish", heard.append)
    with django_capture_on_commit_callbacks(execute=True):
        won = line_and_bingo(manual_game, card_series, caller, cashier)
        on_shift(cashier, venue, "10.00")
        payables.pay_payable(payable=won["bingo"], method="cash", actor=cashier, key="heard")
    stream = [e for e in heard if e.stream == f"cashier.{venue.pk}"]
    mine = [e for e in stream if e.type in (EventType.PAYABLE_CREATED, EventType.PAYABLE_PAID)]
    assert [e.type for e in mine] == [EventType.PAYABLE_CREATED] * 4 + [EventType.PAYABLE_PAID]
    # Numbered with the till's others (the cashier fixture's shift, opened before, took the first numbers).
    assert [e.seq for e in stream] == list(range(stream[0].seq, stream[0].seq + len(stream)))
    assert mine[3].data["description"] == won["bingo"].description
    assert mine[4].data["receipt"] == "R-000001" and mine[4].data["paid_by"] == "cashier"
    assert StreamCursor.objects.get(stream=f"cashier.{venue.pk}").seq == stream[-1].seq


def test_the_recall_shows_each_share_and_who_paid_it(
    won: dict[str, Any], venue: Venue, cashier: User
) -> None:
    on_shift(cashier, venue, "10.00")
    payables.pay_payable(payable=won["bingo"], method="cash", actor=cashier, key="recall")
    recall = game_recall(won["game"])
    rows = {(r["prize"], r["serial"]): r for r in recall["payouts"]}
    assert len(rows) == 4
    bingo = rows[("bingo", won["bingo_serial"])]
    assert bingo["amount"] == D("4.00")
    assert {k: bingo["payout"][k] for k in ("state", "paid_by", "method", "receipt")} == {
        "state": "paid",
        "paid_by": "cashier",
        "method": "cash",
        "receipt": "R-000001",
    }
    waiting = rows[("line", won["line_serials"][1])]["payout"]
    assert (waiting["state"], waiting["paid_at"], waiting["paid_by"]) == ("waiting", None, "")


def test_a_zero_prize_makes_no_payable(venue: Venue) -> None:
    assert (
        payables.create_payable(
            venue_id=venue.pk, kind="table", source="pool.award:1", description="x", amount=D("0"), actor=None
        )
        is None
    )
    assert Payable.objects.count() == 0 and LedgerTransaction.objects.count() == 0


def test_creating_twice_answers_the_first_payable(venue: Venue) -> None:
    def create(amount: str) -> Payable | None:
        return payables.create_payable(
            venue_id=venue.pk,
            kind="machine",
            source="machines.hit:9",
            description="M",
            amount=D(amount),
            actor=None,
        )

    made = [create("5.00"), create("5.00")]
    assert made[0] == made[1] and Payable.objects.count() == 1 and LedgerTransaction.objects.count() == 1
    with pytest.raises(ValueError, match="exists"):
        create("6.00")


def test_only_a_cashier_of_the_venue_pays(won: dict[str, Any], other_venue: Venue) -> None:
    stranger = User.objects.create_user(username="extranjero")
    StaffRole.objects.create(user=stranger, venue=other_venue, role=Role.CASHIER)
    with pytest.raises(NotFound):
        payables.pay_payable(payable=won["bingo"], method="cash", actor=stranger, key="x")
    with pytest.raises(InvalidInput) as device:
        payables.pay_payable(payable=won["bingo"], method="cash", actor="terminal-3", key="x")
    assert device.value.code == "cashier_required"
