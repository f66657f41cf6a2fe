"""Link loss and resync, the progressive broadcast, and what the floor and the cashier read."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from halls.models import AuditEntry, Venue
from jackpots.models import Pool
from machines import protocol
from machines.models import AlertKind, LinkGroup, Machine, MachineAlert, ProgressiveHit
from machines.services import (
    broadcast,
    gateway,
    handpay,
    links,
    liveness,
    push,
    readmodels,
    reconciliation,
    registry,
)
from tests.machines.machine_fixtures import (
    GRAND_RATE,
    MAJOR_RATE,
    an10_venue,
    cashier_user,
    hit,
    link,
    machine,
    make_machine_pool,
    meters_msg,
    play,
    pool_operator,
    register,
    slot_pool,
    statuses,
)

__all__ = ["an10_venue", "cashier_user", "link", "machine", "pool_operator", "slot_pool"]

pytestmark = pytest.mark.django_db

D = Decimal


@pytest.fixture
def pushed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, dict[str, Any]]]:
    sent: list[tuple[int, dict[str, Any]]] = []
    monkeypatch.setattr(push, "send_now", lambda machine_id, payload: sent.append((machine_id, payload)))
    # The link watch tells all the machines it locked from one loop (push.send_many_now).
    monkeypatch.setattr(
        push, "send_many_now", lambda machine_ids, payload: sent.extend((pk, payload) for pk in machine_ids)
    )
    return sent


def test_a_silent_machine_is_marked_offline_locked_and_alerted_then_hello_resyncs(
    machine: Machine,
    slot_pool: Pool,
    pushed: list[tuple[int, dict[str, Any]]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    gateway.receive(machine_id=machine.pk, messages=[play(1)])
    machine.refresh_from_db()
    seen = machine.last_seen_at
    assert seen is not None and machine.online
    assert liveness.mark_silent_machines_offline(now=seen + timedelta(seconds=4)) == []
    with django_capture_on_commit_callbacks(execute=True):
        assert liveness.mark_silent_machines_offline(now=seen + timedelta(seconds=6)) == [machine.pk]
    machine.refresh_from_db()
    assert (machine.online, machine.state, machine.lock_reason) == (False, "locked", "link_lost")
    (alert,) = MachineAlert.objects.filter(machine=machine, kind=AlertKind.LINK_LOST, cleared_at=None)
    assert machine.asset_number in alert.message
    entry = AuditEntry.objects.get(action="machines.link_lost")
    assert entry.data["machines"][0]["machine"] == machine.pk
    assert pushed == [(machine.pk, {"type": "lock", "reason": "link_lost"})]
    # Once marked, the next sweeps leave it alone.
    assert liveness.mark_silent_machines_offline(now=seen + timedelta(seconds=60)) == []
    # Locked until it resynchronises: its plays are refused.
    assert statuses(gateway.receive(machine_id=machine.pk, messages=[play(2)])) == [
        (2, "rejected", "machine_locked")
    ]

    welcome = gateway.hello(
        machine_id=machine.pk, message=protocol.Hello(last_seq=1, software_version="4.1.0")
    )
    assert welcome == {
        "type": "welcome",
        "machine": machine.asset_number,
        "state": "in_service",
        "lock_reason": "",
        "last_seq": 1,
        "group": "L1",
        "levels": [
            {"level": "Grand", "amount": str((D("1000") + GRAND_RATE).quantize(D("0.01"), "ROUND_DOWN"))},
            {"level": "Major", "amount": "100.00"},
        ],
    }
    machine.refresh_from_db()
    assert (machine.online, machine.state) == (True, "in_service")
    assert not MachineAlert.objects.filter(
        machine=machine, kind=AlertKind.LINK_LOST, cleared_at=None
    ).exists()
    assert AuditEntry.objects.filter(action="machine.resynchronised").exists()
    assert statuses(gateway.receive(machine_id=machine.pk, messages=[play(2)])) == [(2, "accepted", "")]


def test_the_watch_marks_a_whole_silent_floor_in_a_fixed_number_of_statements(
    an10_venue: Venue,
    pool_operator: User,
    link: LinkGroup,
    pushed: list[tuple[int, dict[str, Any]]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Set-based: 1 machine or 30, the same statements (no per-machine loop); each machine in service is
    locked and told once, one already locked (hand pay) only goes offline, an open alert is not doubled,
    a machine heard since the cutoff and a never-seen one are left alone."""
    floor = [register(an10_venue, pool_operator)[0] for _ in range(30)]
    for m in floor:
        links.join_link(group=link, machine=m, actor=pool_operator)
    t0 = timezone.now()
    gateway.receive_many([(m.pk, [play(1)]) for m in floor], received_at=t0)
    hand_paid, fresh, alerted = floor[0], floor[1], floor[2]
    gateway.receive(machine_id=hand_paid.pk, messages=[hit(2)], received_at=t0)
    gateway.receive(machine_id=fresh.pk, messages=[play(2)], received_at=t0 + timedelta(seconds=4))
    MachineAlert.objects.create(machine=alerted, kind=AlertKind.LINK_LOST, message="earlier", raised_at=t0)
    never, _ = register(an10_venue, pool_operator)

    def sweep(now: Any) -> tuple[list[int], int]:
        with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks(execute=True):
            changed = liveness.mark_silent_machines_offline(now=now)
        return changed, len(queries)

    changed, statements = sweep(t0 + timedelta(seconds=6))
    assert changed == sorted(m.pk for m in floor if m != fresh)
    assert statements <= 12  # the select, two updates, the alerts read and insert, the audit entry
    rows = {m.pk: (m.online, m.state, m.lock_reason) for m in Machine.objects.filter(pk__in=changed)}
    assert rows[hand_paid.pk] == (False, "locked", "hand_pay")
    assert {rows[pk] for pk in changed if pk != hand_paid.pk} == {(False, "locked", "link_lost")}
    fresh.refresh_from_db()
    never.refresh_from_db()
    assert (fresh.online, fresh.state) == (True, "in_service")
    assert (never.online, never.state) == (False, "in_service")
    assert sorted(pk for pk, _ in pushed) == sorted(pk for pk in changed if pk != hand_paid.pk)
    assert {payload["reason"] for _, payload in pushed} == {"link_lost"}
    open_alerts = MachineAlert.objects.filter(kind=AlertKind.LINK_LOST, cleared_at=None)
    assert sorted(open_alerts.values_list("machine_id", flat=True)) == changed
    (entry,) = AuditEntry.objects.filter(action="machines.link_lost")
    assert sorted(row["machine"] for row in entry.data["machines"]) == changed

    # The fresh one goes silent later: the next sweep takes it alone, in as many statements as before.
    pushed.clear()
    later, again = sweep(t0 + timedelta(seconds=10))
    assert later == [fresh.pk] and again == statements
    assert pushed == [(fresh.pk, {"type": "lock", "reason": "link_lost"})]

    # A storm of hellos (one batch) resynchronises them all and clears every alert.
    replies = gateway.receive_many(
        [(m.pk, [protocol.Hello(last_seq=1, software_version="4.1.0")]) for m in floor],
        received_at=t0 + timedelta(seconds=11),
    )
    assert {r[0]["type"] for r in replies} == {"welcome"}
    assert {r[0]["group"] for r in replies} == {"L1"}
    assert {r[0]["lock_reason"] for r in replies} == {"", "hand_pay"}
    assert not MachineAlert.objects.filter(kind=AlertKind.LINK_LOST, cleared_at=None).exists()
    assert set(
        Machine.objects.filter(pk__in=changed).exclude(pk=hand_paid.pk).values_list("state", flat=True)
    ) == {"in_service"}


def test_the_watch_keeps_other_locks_and_ignores_machines_never_seen(
    an10_venue: Venue, pool_operator: User, machine: Machine
) -> None:
    never, _ = register(an10_venue, pool_operator)
    gateway.receive(machine_id=machine.pk, messages=[hit(1)])
    machine.refresh_from_db()
    assert machine.last_seen_at is not None
    assert liveness.mark_silent_machines_offline(now=machine.last_seen_at + timedelta(seconds=10)) == [
        machine.pk
    ]
    machine.refresh_from_db()
    assert (machine.online, machine.state, machine.lock_reason) == (False, "locked", "hand_pay")
    never.refresh_from_db()
    assert (never.online, never.state) == (False, "in_service")
    # The hello of a hand-pay-locked machine does not unlock it: the cashier does.
    assert gateway.hello(machine_id=machine.pk)["lock_reason"] == "hand_pay"


def test_a_disconnected_machine_in_service_is_locked_by_the_watch(machine: Machine) -> None:
    gateway.connected(machine_id=machine.pk)
    gateway.disconnected(machine_id=machine.pk)
    machine.refresh_from_db()
    assert not machine.online and machine.last_seen_at is not None
    assert liveness.mark_silent_machines_offline(now=machine.last_seen_at + timedelta(seconds=6)) == [
        machine.pk
    ]
    machine.refresh_from_db()
    assert machine.lock_reason == "link_lost"


def test_an_unapproved_software_version_raises_an_alert(machine: Machine) -> None:
    gateway.hello(machine_id=machine.pk, message=protocol.Hello(last_seq=0, software_version="9.9"))
    gateway.hello(machine_id=machine.pk, message=protocol.Hello(last_seq=0, software_version="9.9"))
    (alert,) = MachineAlert.objects.filter(machine=machine, kind=AlertKind.SOFTWARE_MISMATCH)
    assert "9.9" in alert.message and "4.1.0" in alert.message


def test_progressive_broadcasts_every_linked_group_with_one_meters_read(
    an10_venue: Venue, pool_operator: User, machine: Machine, link: LinkGroup, slot_pool: Pool
) -> None:
    other_pool = make_machine_pool(an10_venue, pool_operator, code="SLOT-2")
    other = links.create_link_group(
        venue=an10_venue,
        code="L2",
        name="Isla 2",
        pool=other_pool,
        same_type_and_denomination=None,
        actor=pool_operator,
    )
    links.create_link_group(
        venue=an10_venue,
        code="EMPTY",
        name="Vacía",
        pool=other_pool,
        same_type_and_denomination=None,
        actor=pool_operator,
    )
    m2, _ = register(an10_venue, pool_operator)
    links.join_link(group=other, machine=m2, actor=pool_operator)
    gateway.receive(machine_id=machine.pk, messages=[play(1, "150.00")])
    with CaptureQueriesContext(connection) as queries:
        out = broadcast.progressive_broadcasts()
    assert [group for group, _ in out] == [f"machines.link.{link.pk}", f"machines.link.{other.pk}"]
    first = out[0][1]
    assert first["type"] == "progressive" and first["group"] == "L1" and isinstance(first["at"], int)
    assert first["levels"] == [
        {"level": "Grand", "amount": "1001.50"},
        {
            "level": "Major",
            "amount": str((D("100") + D("150.00") * MAJOR_RATE).quantize(D("0.01"), "ROUND_DOWN")),
        },
    ]
    assert out[1][1]["levels"][0] == {"level": "Grand", "amount": "1000.00"}
    # The groups, then one pool_meters call for both pools (pools, levels, and its recent hits), then one
    # read of those pools' wide-area mirrors (none here).
    assert len(queries) <= 3 + 6 + 1


def test_floor_view_and_pending_hand_pays(
    machine: Machine, an10_venue: Venue, pool_operator: User, cashier_user: User
) -> None:
    spare, _ = register(an10_venue, pool_operator, asset="Z-9")
    gateway.receive(
        machine_id=machine.pk,
        messages=[
            meters_msg(1, "10.00", 5),
            play(2, "1.00"),
            play(3, "0.40"),
            meters_msg(4, "11.40", 7),
            hit(5),
        ],
    )
    with CaptureQueriesContext(connection) as queries:
        rows = readmodels.floor_view(an10_venue)
    assert len(queries) <= 3
    by_asset = {row["asset_number"]: row for row in rows}
    row = by_asset[machine.asset_number]
    assert (row["state"], row["lock_reason"], row["online"], row["plays_today"]) == (
        "locked",
        "hand_pay",
        True,
        2,
    )
    assert (
        row["group"]["code"] == "L1" and row["meters"]["coin_in"] == D("11.40") and row["meters"]["seq"] == 4
    )
    assert (row["pending_hits"], row["pending_amount"]) == (1, D("1000.01"))
    assert (row["asset"], row["type"], row["denomination"]) == (machine.asset_number, "C", D("0.20"))
    assert by_asset["Z-9"]["group"] is None and by_asset["Z-9"]["meters"] is None
    assert by_asset["Z-9"]["pending_hits"] == 0 and by_asset["Z-9"]["plays_today"] == 0

    (pending,) = readmodels.pending_hand_pays(an10_venue)
    assert (pending["asset_number"], pending["level_name"], pending["amount"]) == (
        machine.asset_number,
        "Grand",
        D("1000.01"),
    )
    handpay.pay_hand_pay(hit=ProgressiveHit.objects.get(pk=pending["id"]), actor=cashier_user)
    assert readmodels.pending_hand_pays(an10_venue) == []
    assert spare.pk in {r["id"] for r in readmodels.floor_view(an10_venue)}


def test_the_reconciliation_report(machine: Machine) -> None:
    gateway.receive(
        machine_id=machine.pk,
        messages=[
            meters_msg(1, "10.00", 5),
            play(2, "1.00"),
            meters_msg(3, "11.00", 6),  # matches
            play(4, "1.00"),
            play(6, "0.60"),
            meters_msg(7, "13.00", 9),  # seq 5 (0.40) missing: reconciled
            play(8, "1.00"),
            meters_msg(9, "15.00", 11),  # off by 1.00 and one game, no gap: mismatch
            play(10, "0.20"),
            play(12, "0.20"),  # seq 11 missing, not reconciled yet
        ],
    )
    report = reconciliation(machine)
    assert [(r["from_seq"], r["to_seq"], r["status"]) for r in report] == [
        (None, 1, "first"),
        (1, 3, "ok"),
        (3, 7, "gap_reconciled"),
        (7, 9, "mismatch"),
        (9, None, "open"),
    ]
    gap_row = report[2]
    assert (gap_row["coin_in_delta"], gap_row["bets_recorded"], gap_row["coin_in_difference"]) == (
        D("2.00"),
        D("1.60"),
        D("0.40"),
    )
    assert [(g["first_missing"], g["missing_coin_in"]) for g in gap_row["gaps"]] == [(5, D("0.40"))]
    assert (report[3]["coin_in_difference"], report[3]["games_difference"]) == (D("1.00"), 1)
    assert report[4]["plays_recorded"] == 2 and [g["first_missing"] for g in report[4]["gaps"]] == [11]
    assert MachineAlert.objects.filter(machine=machine, kind=AlertKind.METER_MISMATCH).count() == 1


def test_state_changes_by_staff_reach_the_floor(
    machine: Machine, pool_operator: User, an10_venue: Venue
) -> None:
    registry.set_machine_state(machine=machine, state="out_of_service", reason="", actor=pool_operator)
    (row,) = readmodels.floor_view(an10_venue)
    assert (row["state"], row["lock_reason"]) == ("out_of_service", "")
