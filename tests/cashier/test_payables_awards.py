"""The pools' prizes at the cashier: a table seat's payout and a machine's hit become payables when the pool
awards them; paying a machine's at the cashier pays the hit and unlocks the machine; the pool's ledger,
the hand and the hit show the payment."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User

from demo import machines as demo_machines
from halls.cashier.ledger import Kind
from halls.cashier.models import Payable, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import payables
from halls.errors import Conflict
from halls.models import AuditEntry, Venue
from jackpots.models import Award, Pool
from jackpots.services import reports
from jackpots.tables.models import SeatPayout
from jackpots.tables.services.readmodels import hand_view
from machines.models import LinkGroup, Machine, ProgressiveHit
from machines.services import handpay, links, push, readmodels
from tests.cashier.payable_support import balance, cash, new_cashier, on_shift
from tests.jackpots.tables.conftest import Casino, play
from tests.machines.machine_fixtures import (
    an10_venue,
    cashier_user,
    hit,
    link,
    machine,
    pool_operator,
    register,
    send,
    slot_pool,
)

__all__ = ["an10_venue", "cashier_user", "link", "machine", "pool_operator", "slot_pool"]

pytestmark = pytest.mark.django_db

D = Decimal
SF_K = "KS QS JS TS 9S"
NOTHING = "2C 5D 9H JD 3D"


@pytest.fixture
def pushed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, dict[str, Any]]]:
    sent: list[tuple[int, dict[str, Any]]] = []
    monkeypatch.setattr(push, "send_now", lambda machine_id, payload: sent.append((machine_id, payload)))
    return sent


def test_a_table_seat_payout_becomes_a_payable_and_the_reads_show_its_payment() -> None:
    house = Casino("AN10")
    table = house.table("AN10_PSD_CARRUSEL")
    hand = play(table, house.croupier, {1: SF_K, 2: NOTHING})
    won = SeatPayout.objects.get(hand=hand, seat=1)
    assert won.amount > 0
    payable = Payable.objects.get(venue=house.venue)  # one payable: seat 2's hand wins nothing
    assert (payable.kind, payable.amount) == ("table", won.amount)
    assert payable.source == f"pool.award:{won.award_id}"
    assert payable.description == f"Mesa {table.number} · asiento 1 · escalera de color"
    legs = {leg.account.kind: leg.amount for leg in payable.award_tx.legs.select_related("account")}
    assert legs == {Kind.POOL_FUNDING: won.amount, Kind.PRIZES_PAYABLE: -won.amount}
    cashier = new_cashier(house.venue, f"cajero-{house.venue.pk}")
    shift = on_shift(cashier, house.venue, "50000.00")
    payables.pay_payable(payable=payable, method="cash", actor=cashier, key="mesa")
    assert cash(shift) == D("50000.00") - won.amount
    assert books.trial_balance(house.venue.pk).holds
    seat = next(s for s in hand_view(hand)["seats"] if s["seat"] == 1)
    assert seat["payment"]["state"] == "paid" and seat["payment"]["paid_by"] == cashier.get_username()
    assert next(s for s in hand_view(hand)["seats"] if s["seat"] == 2)["payment"] is None
    ledger = reports.ledger(Pool.objects.get(casino_tables=table))
    award = next(a for s in ledger.settlements for a in s["awards"] if a["seat"] == "1")
    assert [(p["state"], p["receipt"]) for p in award["payouts"]] == [("paid", "R-000001")]


def test_a_machine_hit_becomes_a_payable_and_paying_it_at_the_cashier_unlocks_the_machine(
    machine: Machine,
    slot_pool: Pool,
    an10_venue: Venue,
    cashier_user: User,
    pushed: list[tuple[int, dict[str, Any]]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    send(machine, hit(1))
    row = ProgressiveHit.objects.get(machine=machine)
    payable = Payable.objects.get(venue=an10_venue, kind="machine")
    award = Award.objects.get(settlement_id=row.settlement_id)
    assert (payable.amount, payable.source) == (row.amount, f"pool.award:{award.pk}")
    assert payable.description == f"Máquina {machine.asset_number} · Grand · pago manual"
    assert balance(an10_venue, Kind.POOL_FUNDING) == row.amount
    with django_capture_on_commit_callbacks(execute=True):
        payout = payables.pay_payable(payable=payable, method="cash", actor=cashier_user, key="maquina")
    assert payout.payable.receipt == "R-000001"
    row.refresh_from_db()
    assert (row.paid_by, row.payment_ref) == (cashier_user, "R-000001")
    machine.refresh_from_db()
    assert (machine.state, machine.lock_reason) == ("in_service", "")
    assert pushed == [(machine.pk, {"type": "unlock"})]
    assert AuditEntry.objects.filter(action="machine.hand_pay_paid", object_id=str(row.pk)).count() == 1
    # One record of the payment: the machines' page reads the cashier's, and cannot pay it again.
    shown = readmodels.hit_row(row, readmodels.hit_payouts([row]).get(row.pk))
    assert shown["payout"]["receipt"] == "R-000001" and shown["payout"]["paid_by"] == "slot-cashier"
    with pytest.raises(Conflict) as again:
        handpay.pay_hand_pay(hit=row, actor=cashier_user)
    assert again.value.code == "already_paid"
    assert payables.pay_payable(payable=payable, method="cash", actor=cashier_user, key="maquina").replayed
    assert books.trial_balance(an10_venue.pk).holds
    assert (
        Payable.objects.get(pk=payable.pk).payout_tx.kind == TxKind.PRIZE_PAYOUT  # type: ignore[union-attr]
    )


def test_the_hand_pay_page_pays_through_the_cashier(
    machine: Machine, an10_venue: Venue, cashier_user: User, pushed: list[tuple[int, dict[str, Any]]]
) -> None:
    send(machine, hit(1))
    row = ProgressiveHit.objects.get(machine=machine)
    shift = on_shift(cashier_user, an10_venue)
    before = cash(shift)
    handpay.pay_hand_pay(hit=row, actor=cashier_user, payment_ref="VALE-7", idempotency_key="vale-7")
    payable = Payable.objects.get(venue=an10_venue, kind="machine")
    assert (payable.state, payable.method, payable.paid_by) == ("paid", "cash", cashier_user)
    assert cash(shift) == before - row.amount
    row.refresh_from_db()
    assert row.payment_ref == "VALE-7"
    # A retry with the same key answers as the first; the hand pay is written once.
    again = handpay.pay_hand_pay(hit=row, actor=cashier_user, payment_ref="VALE-7", idempotency_key="vale-7")
    assert again.paid_at == row.paid_at
    assert AuditEntry.objects.filter(action="cashier.payable_paid").count() == 1


def test_a_hand_pay_the_drawer_cannot_cover_leaves_the_machine_locked(
    machine: Machine, an10_venue: Venue, pushed: list[tuple[int, dict[str, Any]]]
) -> None:
    send(machine, hit(1))
    row = ProgressiveHit.objects.get(machine=machine)
    poor = new_cashier(an10_venue, "cajero-corto")
    on_shift(poor, an10_venue, "10.00")
    with pytest.raises(Conflict) as short:
        handpay.pay_hand_pay(hit=row, actor=poor)
    assert short.value.code == "drawer_short"
    row.refresh_from_db()
    machine.refresh_from_db()
    assert (row.paid_at, machine.state, pushed) == (None, "locked", [])
    assert Payable.objects.get(kind="machine").state == "waiting"
    paid = ["machine.hand_pay_paid", "cashier.payable_paid"]
    assert not AuditEntry.objects.filter(action__in=paid).exists()


def test_the_demo_attendant_pays_overdue_hand_pays_from_its_own_shift(
    an10_venue: Venue,
    pool_operator: User,
    link: LinkGroup,
    pushed: list[tuple[int, dict[str, Any]]],
) -> None:
    demo_machine, _token = register(an10_venue, pool_operator, asset=f"{demo_machines.ASSET_PREFIX}01")
    links.join_link(group=link, machine=demo_machine, actor=pool_operator)
    send(demo_machine, hit(1))
    row = ProgressiveHit.objects.get(machine=demo_machine)
    person = demo_machines.attendant(an10_venue)
    assert demo_machines.attendant(an10_venue) == person  # one shift, opened once
    assert demo_machines._pay_overdue_hand_pays(an10_venue, -1.0, person) == 1
    row.refresh_from_db()
    assert row.paid_by == person
    payable = Payable.objects.get(kind="machine")
    assert (payable.state, payable.paid_by) == ("paid", person)
