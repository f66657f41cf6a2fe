"""Progressive hits from machines: awarded by the pool engine in arrival order, the machine in hand-pay
lock-up until a cashier pays the hit at the cashier."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import DatabaseError, transaction

from halls.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from halls.eventtypes import EventType
from halls.models import AuditEntry, Role, StaffRole, Venue
from jackpots.models import Award, Contribution, Pool, PoolLevel, PoolSettlement
from jackpots.services import notify, reports
from machines.models import LinkGroup, Machine, ProgressiveHit
from machines.services import gateway, handpay, links, push, registry
from tests.machines.machine_fixtures import (
    GRAND_RATE,
    an10_venue,
    cashier_user,
    hit,
    link,
    live_amounts,
    machine,
    play,
    pool_operator,
    register,
    send,
    slot_pool,
    statuses,
)
from tests.threads import in_threads

__all__ = ["an10_venue", "cashier_user", "link", "machine", "pool_operator", "slot_pool"]

D = Decimal


@pytest.fixture
def pushed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, dict[str, Any]]]:
    sent: list[tuple[int, dict[str, Any]]] = []
    monkeypatch.setattr(push, "send_now", lambda machine_id, payload: sent.append((machine_id, payload)))
    return sent


@pytest.mark.django_db
def test_a_hit_pays_the_meter_locks_the_machine_and_announces_it(
    machine: Machine, slot_pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def listener(pool: Pool, type_: str, data: dict[str, Any]) -> None:
        seen.append((type_, data))

    notify.register_pool_event_listener(listener)
    try:
        replies = send(machine, play(1, "10.00"), play(2, "7.50"), hit(3, "Grand", "g-77"), play(4, "1.00"))
    finally:
        notify.unregister_pool_event_listener(listener)
    meter = D("1000") + D("17.50") * GRAND_RATE  # the plays before the hit are in its meter
    assert replies[2] == {
        "type": "ack",
        "seq": 3,
        "status": "accepted",
        "code": "",
        "message": "",
        "amount": "1000.17",
        "lock": "hand_pay",
    }
    assert statuses(replies)[3] == (4, "rejected", "machine_locked")  # in hand-pay lock-up from the hit on
    row = ProgressiveHit.objects.get(machine=machine)
    assert (row.seq, row.level.name, row.game_id, row.amount, row.paid_at) == (
        3,
        "Grand",
        "g-77",
        D("1000.17"),
        None,
    )
    award = Award.objects.get(settlement_id=row.settlement_id)
    assert (award.source, award.hand, award.amount) == (str(machine.source), "g-77", D("1000.17"))
    machine.refresh_from_db()
    assert (machine.state, machine.lock_reason, machine.last_seq) == ("locked", "hand_pay", 3)
    # The level restarts from its seed: the kept fraction of a cent counts towards it, the operator seeds
    # the rest (OP-23).
    assert live_amounts(slot_pool)["Grand"] == D("1000")
    settlement = PoolSettlement.objects.get(pk=row.settlement_id)
    assert settlement.operator_seed == D("1000") - (meter - D("1000.17"))
    hits = [data for type_, data in seen if type_ == EventType.POOL_HIT]
    assert len(hits) == 1 and hits[0]["source"] == str(machine.source) and hits[0]["amount"] == D("1000.17")
    assert AuditEntry.objects.filter(action="machine.hit", object_id=str(row.pk)).exists()
    # A retry of the hit answers as the first time, and pays nothing more.
    again = send(machine, hit(3, "Grand", "g-77"))
    assert again[0]["status"] == "duplicate" and again[0]["amount"] == "1000.17"
    assert ProgressiveHit.objects.count() == 1 and Award.objects.count() == 1


@pytest.mark.django_db
def test_an_unknown_level_is_refused(machine: Machine) -> None:
    assert statuses(send(machine, hit(1, "Mega"))) == [(1, "rejected", "unknown_level")]
    machine.refresh_from_db()
    assert machine.state == "in_service"


@pytest.mark.django_db
def test_two_hits_in_one_instant_are_both_recorded_the_second_from_the_reset(
    an10_venue: Venue, pool_operator: User, link: LinkGroup, machine: Machine, slot_pool: Pool
) -> None:
    other, _ = register(an10_venue, pool_operator)
    links.join_link(group=link, machine=other, actor=pool_operator)
    send(machine, play(1, "100.00"))
    instant = machine.created_at
    first = gateway.receive(machine_id=machine.pk, messages=[hit(2)], received_at=instant)
    second = gateway.receive(machine_id=other.pk, messages=[hit(1)], received_at=instant)
    assert (first[0]["amount"], second[0]["amount"]) == ("1001.00", "1000.00")
    assert ProgressiveHit.objects.filter(reported_at=instant).count() == 2
    level = PoolLevel.objects.get(pool=slot_pool, name="Grand")
    assert (level.hits, level.total_paid) == (2, D("2001.00"))


@pytest.mark.django_db
def test_pay_hand_pay_records_the_payment_and_unlocks(
    machine: Machine,
    cashier_user: User,
    pushed: list[tuple[int, dict[str, Any]]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    send(machine, hit(1))
    row = ProgressiveHit.objects.get(machine=machine)
    with django_capture_on_commit_callbacks(execute=True):
        paid = handpay.pay_hand_pay(hit=row, actor=cashier_user, payment_ref="TCK-0042")
    assert paid.paid_at is not None and paid.paid_by == cashier_user
    assert (paid.paid_by_label, paid.payment_ref) == ("slot-cashier", "TCK-0042")
    machine.refresh_from_db()
    assert (machine.state, machine.lock_reason) == ("in_service", "")
    assert pushed == [(machine.pk, {"type": "unlock"})]
    entry = AuditEntry.objects.get(action="machine.hand_pay_paid")
    assert (
        entry.actor == cashier_user and entry.data["amount"] == "1000.00" and entry.data["unlocked"] is True
    )
    with pytest.raises(Conflict) as info:
        handpay.pay_hand_pay(hit=row, actor=cashier_user)
    assert info.value.code == "already_paid"
    assert statuses(send(machine, play(2))) == [(2, "accepted", "")]  # plays on


@pytest.mark.django_db
def test_the_machine_stays_locked_while_another_hit_waits(
    machine: Machine, cashier_user: User, pool_operator: User, pushed: list[tuple[int, dict[str, Any]]]
) -> None:
    send(machine, hit(1))
    # An operator lock-and-unlock cannot clear a hand pay either.
    with pytest.raises(Conflict):
        registry.set_machine_state(machine=machine, state="in_service", reason="", actor=pool_operator)
    first = ProgressiveHit.objects.get(machine=machine)
    # A second hit row (e.g. recorded before a restart) keeps the machine locked after the first is paid.
    ProgressiveHit.objects.create(
        machine=machine,
        seq=99,
        group=first.group,
        level=first.level,
        settlement_id=0,
        amount=D("5.00"),
        reported_at=first.reported_at,
    )
    handpay.pay_hand_pay(hit=first, actor=cashier_user)
    machine.refresh_from_db()
    assert (machine.state, machine.lock_reason) == ("locked", "hand_pay")
    handpay.pay_hand_pay(hit=ProgressiveHit.objects.get(seq=99), actor=cashier_user)
    machine.refresh_from_db()
    assert machine.state == "in_service"


@pytest.mark.django_db
def test_only_a_cashier_of_the_venue_pays(machine: Machine, other_venue: Venue) -> None:
    send(machine, hit(1))
    row = ProgressiveHit.objects.get(machine=machine)
    caller = User.objects.create_user(username="slot-caller")
    StaffRole.objects.create(user=caller, venue=machine.venue, role=Role.CALLER)
    stranger = User.objects.create_user(username="stranger")
    StaffRole.objects.create(user=stranger, venue=other_venue, role=Role.CASHIER)
    with pytest.raises(PermissionDenied):
        handpay.pay_hand_pay(hit=row, actor=caller)
    with pytest.raises(NotFound):
        handpay.pay_hand_pay(hit=row, actor=stranger)
    with pytest.raises(InvalidInput):
        handpay.pay_hand_pay(hit=row, actor="gateway")
    row.refresh_from_db()
    assert row.paid_at is None


# --- two machines hitting one level at the same moment, for real ---------------------------------------


@pytest.mark.django_db(transaction=True)
def test_simultaneous_hits_on_one_level_from_two_machines(
    an10_venue: Venue, pool_operator: User, slot_pool: Pool
) -> None:
    group = links.create_link_group(
        venue=an10_venue,
        code="LX",
        name="Isla X",
        pool=slot_pool,
        same_type_and_denomination=None,
        actor=pool_operator,
    )
    machines = []
    for _ in range(4):
        m, _ = register(an10_venue, pool_operator)
        links.join_link(group=group, machine=m, actor=pool_operator)
        machines.append(m)
    for m in machines:
        send(m, play(1, "25.00"))
    replies: dict[int, list[dict[str, Any]]] = {}

    def hitter(m: Machine) -> Callable[[], None]:
        def go() -> None:
            replies[m.pk] = send(m, play(2, "1.00"), hit(3))

        return go

    assert in_threads([hitter(m) for m in machines], timeout=60) == []
    amounts = sorted((D(r[1]["amount"]) for r in replies.values()), reverse=True)
    # Every hit is recorded; the first takes the meter (seed + 100.00 played + up to 4.00 more), each later
    # one the reset amount plus what was contributed in between (at most the 4.00 of the other calls).
    assert ProgressiveHit.objects.count() == 4
    assert D("1001.00") <= amounts[0] <= D("1001.04")
    assert all(D("1000.00") <= a <= D("1000.04") for a in amounts[1:])
    level = PoolLevel.objects.get(pool=slot_pool, name="Grand")
    assert level.hits == 4 and level.total_paid == sum(amounts)
    # Exact: every contribution is in (104.00 played × the rate), and the pool's ledger balances.
    assert (
        sum(Contribution.objects.filter(level=level).values_list("to_meter", flat=True))
        == D("104.00") * GRAND_RATE
    )
    assert reports.balance(slot_pool).holds


@pytest.mark.django_db
def test_what_was_won_is_never_edited_and_a_hand_pay_is_written_once(
    machine: Machine, cashier_user: User, pushed: list[tuple[int, dict[str, Any]]]
) -> None:
    send(machine, hit(1))
    row = ProgressiveHit.objects.get(machine=machine)
    for edit in (
        lambda: ProgressiveHit.objects.filter(pk=row.pk).update(amount=D("1.00")),
        lambda: ProgressiveHit.objects.filter(pk=row.pk).delete(),
    ):
        with pytest.raises(DatabaseError), transaction.atomic():
            edit()
    handpay.pay_hand_pay(hit=row, actor=cashier_user, payment_ref="TCK-1")  # the one payment is allowed
    with pytest.raises(DatabaseError), transaction.atomic():
        ProgressiveHit.objects.filter(pk=row.pk).update(payment_ref="TCK-2")
    assert ProgressiveHit.objects.get(pk=row.pk).payment_ref == "TCK-1"
