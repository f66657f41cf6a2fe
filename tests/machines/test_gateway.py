"""The gateway's receive: idempotency by (machine, seq), reused seqs, gaps and their reconciliation,
states that refuse plays, the pool's exactness, and how few statements a call costs."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from halls import money
from halls.models import Venue
from jackpots.models import Contribution, Pool
from jackpots.services import contributions
from machines import protocol
from machines.models import (
    AlertKind,
    LinkGroup,
    Machine,
    MachineAlert,
    MachineEvent,
    MeterSnapshot,
    Play,
    SequenceGap,
)
from machines.services import gateway, gateway_batch, links, registry
from tests.machines.machine_fixtures import (
    SEEDS,
    an10_venue,
    expected,
    link,
    live_amounts,
    machine,
    meters_msg,
    nothing_written,
    play,
    pool_operator,
    register,
    send,
    slot_pool,
    statuses,
)

__all__ = ["an10_venue", "link", "machine", "pool_operator", "slot_pool"]

pytestmark = pytest.mark.django_db

D = Decimal


def keys_of(m: Machine) -> list[str]:
    return sorted(set(Contribution.objects.filter(source=m.source).values_list("idempotency_key", flat=True)))


def test_the_same_play_three_times_is_one_play_and_one_contribution(
    machine: Machine, slot_pool: Pool
) -> None:
    first = send(machine, play(1, "2.00"))
    again = send(machine, play(1, "2.00"))
    third = send(machine, play(1, "2.00"))
    assert [r["status"] for r in first + again + third] == ["accepted", "duplicate", "duplicate"]
    assert first[0] == {"type": "ack", "seq": 1, "status": "accepted", "code": "", "message": ""}
    assert Play.objects.filter(machine=machine).count() == 1
    assert keys_of(machine) == [f"machine:{machine.pk}:1"]
    assert Contribution.objects.filter(pool=slot_pool).count() == 2  # one row per level, once
    assert live_amounts(slot_pool) == expected(SEEDS, D("2.00"))
    machine.refresh_from_db()
    assert machine.last_seq == 1


def test_duplicates_inside_one_call(machine: Machine, slot_pool: Pool) -> None:
    replies = send(machine, play(1), play(1), play(2), play(1))
    assert statuses(replies) == [
        (1, "accepted", ""),
        (1, "duplicate", ""),
        (2, "accepted", ""),
        (1, "duplicate", ""),
    ]
    assert Play.objects.filter(machine=machine).count() == 2
    assert live_amounts(slot_pool) == expected(SEEDS, D("2.00"))


def test_the_same_seq_with_other_content_is_rejected_and_changes_nothing(
    machine: Machine, slot_pool: Pool
) -> None:
    send(machine, play(1, "1.00"), protocol.Event(seq=2, kind="door_open"))
    with nothing_written():
        replies = send(
            machine,
            play(1, "5.00"),  # another bet
            play(1, "1.00", win="3.00"),  # another win
            protocol.Event(seq=2, kind="door_closed"),
            play(2),  # another type
        )
    assert {r["code"] for r in replies} == {"seq_reused"}
    assert {r["status"] for r in replies} == {"rejected"}
    assert live_amounts(slot_pool) == expected(SEEDS, D("1.00"))


def test_out_of_order_seqs_are_all_taken_once(machine: Machine, slot_pool: Pool) -> None:
    replies = send(machine, play(1, "1.00"), play(4, "4.00"), play(3, "3.00"))
    assert [r["status"] for r in replies] == ["accepted"] * 3
    (gap,) = SequenceGap.objects.filter(machine=machine)
    assert (gap.first_missing, gap.last_missing, gap.reconciled_at) == (2, 3, None)
    assert (
        MachineAlert.objects.filter(machine=machine, kind=AlertKind.SEQUENCE_GAP, cleared_at=None).count()
        == 1
    )
    # The missing seq 2 arrives later: still inside the open gap, so it is taken.
    assert statuses(send(machine, play(2, "2.00"), play(3, "3.00"))) == [
        (2, "accepted", ""),
        (3, "duplicate", ""),
    ]
    machine.refresh_from_db()
    assert machine.last_seq == 4
    assert sorted(Play.objects.filter(machine=machine).values_list("seq", flat=True)) == [1, 2, 3, 4]
    assert live_amounts(slot_pool) == expected(SEEDS, D("10.00"))


def test_a_gap_is_reconciled_from_the_next_snapshot_and_its_coin_in_contributed_once(
    machine: Machine, slot_pool: Pool
) -> None:
    send(machine, meters_msg(1, "100.00", 50), play(2, "1.00"))
    # seqs 3 (a 2.00 play) and 4 (a 0.60 play) never arrive.
    replies = send(machine, play(5, "1.00"), meters_msg(6, "104.60", 54))
    assert [r["status"] for r in replies] == ["accepted", "accepted"]
    (gap,) = SequenceGap.objects.filter(machine=machine)
    assert (gap.first_missing, gap.last_missing) == (3, 4)
    assert gap.reconciled_at is not None
    assert (gap.missing_coin_in, gap.missing_games) == (D("2.60"), 2)
    assert gap.snapshot == MeterSnapshot.objects.get(machine=machine, seq=6)
    assert not MachineAlert.objects.filter(
        machine=machine, kind=AlertKind.SEQUENCE_GAP, cleared_at=None
    ).exists()
    assert not MachineAlert.objects.filter(machine=machine, kind=AlertKind.METER_MISMATCH).exists()
    assert f"machine:{machine.pk}:gap:{gap.pk}" in keys_of(machine)
    # The pool follows the machine's meters: 1.00 + 1.00 played + 2.60 reconciled.
    assert live_amounts(slot_pool) == expected(SEEDS, D("4.60"))

    # The snapshot again: a duplicate; nothing is contributed twice.
    assert statuses(send(machine, meters_msg(6, "104.60", 54))) == [(6, "duplicate", "")]
    # A late seq of the reconciled gap is refused: its coin-in was already counted.
    with nothing_written():
        assert statuses(send(machine, play(3, "2.00"))) == [(3, "rejected", "gap_reconciled")]
    assert live_amounts(slot_pool) == expected(SEEDS, D("4.60"))


def test_a_late_seq_after_the_snapshot_in_the_same_call_is_refused(machine: Machine, slot_pool: Pool) -> None:
    send(machine, meters_msg(1, "0.00", 0))
    replies = send(machine, play(3, "1.00"), meters_msg(4, "1.50", 2), play(2, "0.50"))
    assert statuses(replies) == [(3, "accepted", ""), (4, "accepted", ""), (2, "rejected", "gap_reconciled")]
    assert live_amounts(slot_pool) == expected(SEEDS, D("1.50"))


def test_a_late_seq_taken_before_the_snapshot_is_not_counted_twice(machine: Machine, slot_pool: Pool) -> None:
    send(machine, meters_msg(1, "0.00", 0), play(4, "1.00"))
    send(machine, play(2, "0.50"))  # late, inside the open gap 2-3
    send(machine, meters_msg(5, "2.25", 3))  # seq 3 (0.75) never came
    gap = SequenceGap.objects.get(machine=machine)
    assert (gap.missing_coin_in, gap.missing_games) == (D("0.75"), 1)
    assert live_amounts(slot_pool) == expected(SEEDS, D("2.25"))


def test_a_late_snapshot_inside_an_open_gap_is_stored_not_reconciled(
    machine: Machine, slot_pool: Pool
) -> None:
    send(machine, meters_msg(1, "0.00", 0), play(4, "1.00"))
    assert statuses(send(machine, meters_msg(2, "0.50", 1))) == [(2, "accepted", "")]
    assert MeterSnapshot.objects.filter(machine=machine, seq=2).exists()
    gap = SequenceGap.objects.get(machine=machine)
    assert ((gap.first_missing, gap.last_missing), gap.reconciled_at) == ((2, 3), None)
    assert live_amounts(slot_pool) == expected(SEEDS, D("1.00"))


def test_a_seq_neither_stored_nor_missing_is_refused(machine: Machine) -> None:
    Machine.objects.filter(pk=machine.pk).update(last_seq=5)  # seqs 1-5 were never stored nor missed
    with nothing_written():
        assert statuses(send(machine, play(3))) == [(3, "rejected", "bad_seq")]
    assert gateway.receive_many([(machine.pk, [])]) == [[]]


def test_meters_that_do_not_match_the_plays_raise_an_alert(machine: Machine, slot_pool: Pool) -> None:
    send(machine, meters_msg(1, "10.00", 10), play(2, "1.00"), meters_msg(3, "12.00", 11))
    (alert,) = MachineAlert.objects.filter(machine=machine, kind=AlertKind.METER_MISMATCH)
    assert "no seq is missing" in alert.message
    assert live_amounts(slot_pool) == expected(SEEDS, D("1.00"))  # nothing is made up without a gap


@pytest.mark.parametrize(
    ("state", "code"), [("locked", "machine_locked"), ("out_of_service", "machine_out_of_service")]
)
def test_a_play_from_a_locked_or_out_of_service_machine_is_refused(
    machine: Machine, slot_pool: Pool, pool_operator: User, state: str, code: str, settings: Any
) -> None:
    settings.MACHINE_LOCK_GRACE_SECONDS = 0  # no game in flight at the lock (the tests below take one)
    send(machine, play(1))
    registry.set_machine_state(machine=machine, state=state, reason="inspection", actor=pool_operator)
    with nothing_written():
        replies = send(machine, play(2), play(5), protocol.Hit(seq=6, level="Grand", game_id="g"))
    assert [r["code"] for r in replies] == [code] * 3
    assert live_amounts(slot_pool) == expected(SEEDS, D("1.00"))
    # Meters and events are still recorded (the doors of a locked machine matter).
    assert [
        r["status"] for r in send(machine, protocol.Event(seq=2, kind="door_open"), meters_msg(3, "1", 1))
    ] == [
        "accepted",
        "accepted",
    ]
    # The refused seq was not consumed: once back in service, the board sends seq 4 and plays on.
    registry.set_machine_state(machine=machine, state="in_service", reason="done", actor=pool_operator)
    assert statuses(send(machine, play(4))) == [(4, "accepted", "")]
    assert not SequenceGap.objects.filter(machine=machine).exists()


def test_the_game_an_operators_lock_found_in_progress_is_taken_once(
    machine: Machine, slot_pool: Pool, pool_operator: User
) -> None:
    """The machine ends the game it was playing when the lock came; that play reaches the hall after the
    lock: it is recorded and contributes (``after_lock``), once. Any other play of the locked machine, and
    a hit, is refused, and the game's resend is a duplicate."""
    send(machine, play(1))
    registry.set_machine_state(machine=machine, state="locked", reason="inspection", actor=pool_operator)
    hit = protocol.Hit(seq=4, level="Grand", game_id="g")
    replies = send(machine, play(2, "3.00"), play(3), hit)
    assert statuses(replies) == [
        (2, "accepted", gateway_batch.AFTER_LOCK),
        (3, "rejected", "machine_locked"),
        (4, "rejected", "machine_locked"),
    ]
    with nothing_written():
        assert statuses(send(machine, play(2, "3.00"), play(3))) == [
            (2, "duplicate", ""),
            (3, "rejected", "machine_locked"),
        ]
    assert list(Play.objects.filter(machine=machine).order_by("seq").values_list("seq", "bet")) == [
        (1, D("1.00")),
        (2, D("3.00")),
    ]
    assert live_amounts(slot_pool) == expected(SEEDS, D("4.00"))
    machine.refresh_from_db()
    assert (machine.state, machine.lock_reason, machine.last_seq) == ("locked", "operator", 2)

    # Unlocked and locked again: a new lock may find a new game in progress.
    registry.set_machine_state(machine=machine, state="in_service", reason="done", actor=pool_operator)
    machine.refresh_from_db()
    assert machine.operator_locked_at is None
    registry.set_machine_state(machine=machine, state="locked", reason="again", actor=pool_operator)
    assert statuses(send(machine, play(3), play(4))) == [
        (3, "accepted", gateway_batch.AFTER_LOCK),
        (4, "rejected", "machine_locked"),
    ]


def test_a_play_after_the_locks_window_or_a_hand_pays_lock_is_refused(
    machine: Machine, slot_pool: Pool, pool_operator: User, settings: Any
) -> None:
    registry.set_machine_state(machine=machine, state="locked", reason="inspection", actor=pool_operator)
    machine.refresh_from_db()
    locked_at = machine.operator_locked_at
    assert locked_at is not None
    late = locked_at - timedelta(seconds=settings.MACHINE_LOCK_GRACE_SECONDS)
    Machine.objects.filter(pk=machine.pk).update(operator_locked_at=late)
    with nothing_written():
        assert statuses(send(machine, play(1))) == [(1, "rejected", "machine_locked")]
    # Locking again keeps when the lock began (nothing changed).
    registry.set_machine_state(machine=machine, state="locked", reason="still", actor=pool_operator)
    machine.refresh_from_db()
    assert machine.operator_locked_at == late

    # A hit locks its machine for the hand pay: the game ended with the hit, so nothing plays after it.
    registry.set_machine_state(machine=machine, state="in_service", reason="done", actor=pool_operator)
    assert statuses(send(machine, play(1), protocol.Hit(seq=2, level="Grand", game_id="g-1"), play(3))) == [
        (1, "accepted", ""),
        (2, "accepted", ""),
        (3, "rejected", "machine_locked"),
    ]
    registry.set_machine_state(machine=machine, state="locked", reason="inspection", actor=pool_operator)
    paying = Machine.objects.get(pk=machine.pk)
    assert (paying.lock_reason, paying.operator_locked_at) == ("hand_pay", None)
    assert statuses(send(machine, play(3))) == [(3, "rejected", "machine_locked")]


def test_the_largest_bet_is_taken_and_a_larger_one_refused_alone(machine: Machine, slot_pool: Pool) -> None:
    """One limit (halls.money.MAX_BET) for the protocol, the gateway and the contribution: the largest bet
    is taken with the rest of its call; a larger one (a board that skipped the protocol's check) is
    refused by itself with bad_amount, and the others of its call are taken."""
    largest = str(money.MAX_BET)
    replies = send(machine, play(1, largest), play(2, "1.00"), play(3, "1000000000000.00"))
    assert statuses(replies) == [(1, "accepted", ""), (2, "accepted", ""), (3, "rejected", "bad_amount")]
    assert "above the maximum" in replies[2]["message"]
    assert list(Play.objects.filter(machine=machine).order_by("seq").values_list("seq", "bet")) == [
        (1, money.MAX_BET),
        (2, D("1.00")),
    ]
    assert keys_of(machine) == [gateway_batch.message_key(machine.pk, seq) for seq in (1, 2)]
    assert live_amounts(slot_pool) == expected(SEEDS, money.MAX_BET + D("1.00"))


def test_an_unknown_machine_is_refused() -> None:
    replies = gateway.receive(machine_id=999_999, messages=[play(1), protocol.Heartbeat()])
    assert [(r["status"], r["code"]) for r in replies] == [("rejected", "unknown_machine")] * 2
    assert not Play.objects.exists()


def test_the_pool_grows_by_exactly_the_sum_of_bet_times_rate(
    an10_venue: Venue, pool_operator: User, link: LinkGroup, slot_pool: Pool
) -> None:
    machines = []
    for _ in range(3):
        m, _token = register(an10_venue, pool_operator)
        links.join_link(group=link, machine=m, actor=pool_operator)
        machines.append(m)
    bets = ["0.20", "0.40", "1.00", "2.00", "0.60", "3.80", "0.20", "10.00", "5.40", "0.20"]
    total = D(0)
    seq = {m.pk: 0 for m in machines}
    for round_ in range(4):
        for i, m in enumerate(machines):
            batch = []
            for bet in bets[(round_ + i) % 5 :][: 2 + i]:
                seq[m.pk] += 1
                batch.append(play(seq[m.pk], bet, win="0.40" if seq[m.pk] % 3 == 0 else "0.00"))
                total += D(bet)
            replies = send(m, *batch)
            assert {r["status"] for r in replies} == {"accepted"}
            send(m, *batch[:2])  # retries change nothing
    assert live_amounts(slot_pool) == expected(SEEDS, total)
    assert sum(Play.objects.values_list("bet", flat=True)) == total


def test_an_unlinked_machine_plays_without_contributing(
    an10_venue: Venue, pool_operator: User, slot_pool: Pool
) -> None:
    m, _ = register(an10_venue, pool_operator)
    assert statuses(send(m, play(1))) == [(1, "accepted", "")]
    assert not Contribution.objects.exists()
    replies = send(m, protocol.Hit(seq=2, level="Grand", game_id="g"))
    assert statuses(replies) == [(2, "rejected", "not_linked")]


def test_a_call_costs_a_few_statements_whatever_its_size(
    machine: Machine, slot_pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepared: list[str] = []
    real_fetch = contributions._fetch

    def counting_fetch(sql: str, params: Any) -> Any:
        prepared.append(sql)
        return real_fetch(sql, params)

    monkeypatch.setattr(contributions, "_fetch", counting_fetch)
    send(machine, play(1))  # warm: the machine has been seen
    costs = []
    seq = 1
    for size in (1, 1, 20, 200):
        batch = [play(seq + i + 1, "0.20") for i in range(size)]
        seq += size
        prepared.clear()
        with CaptureQueriesContext(connection) as queries:
            replies = send(machine, *batch)
        assert {r["status"] for r in replies} == {"accepted"}
        assert len(prepared) == 1  # one contribute_many, a prepared statement Django does not see
        statements = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
        costs.append(len(statements) + len(prepared))
    # Lock the machine (with its link and venue), insert the plays, contribute them, update the machine:
    # four statements for one play as for 200 (plus the transaction's own BEGIN/COMMIT, and the savepoint
    # contribute_many opens inside it).
    assert costs == [4, 4, 4, 4]


def test_events_and_meters_are_stored(machine: Machine) -> None:
    at = "2026-03-01T10:00:00+00:00"
    replies = send(
        machine,
        protocol.parse(f'{{"type":"event","seq":1,"kind":"door_open","at":"{at}"}}'),
        protocol.Event(seq=2, kind="door_closed"),
        meters_msg(3, "12.40", 9, coin_out="8.00"),
        protocol.parse(f'{{"type":"play","seq":4,"game_id":"g-4","bet":"0.20","win":"1.40","at":"{at}"}}'),
        play(5),
    )
    assert [r["status"] for r in replies] == ["accepted"] * 5
    played = Play.objects.get(machine=machine, seq=4)
    assert played.played_at is not None and played.played_at.isoformat() == at
    assert (played.game_id, played.bet, played.win) == ("g-4", D("0.20"), D("1.40"))
    assert Play.objects.get(machine=machine, seq=5).played_at is None
    assert list(
        MachineEvent.objects.filter(machine=machine).order_by("seq").values_list("kind", flat=True)
    ) == [
        "door_open",
        "door_closed",
    ]
    assert MachineEvent.objects.get(machine=machine, seq=1).at.isoformat() == at
    snap = MeterSnapshot.objects.get(machine=machine)
    assert (snap.coin_in, snap.coin_out, snap.games_played) == (D("12.40"), D("8.00"), 9)


def test_heartbeats_and_plays_keep_the_machine_online(machine: Machine) -> None:
    assert not machine.online
    assert send(machine, protocol.Heartbeat())[0]["status"] == "accepted"
    machine.refresh_from_db()
    assert machine.online and machine.last_seen_at is not None
    send(machine, play(1), play(2))
    machine.refresh_from_db()
    assert (machine.plays_today, machine.last_play_at is not None) == (2, True)
    gateway.disconnected(machine_id=machine.pk)
    machine.refresh_from_db()
    assert not machine.online
    gateway.heartbeat(machine_id=machine.pk)
    machine.refresh_from_db()
    assert machine.online
