"""Writing: what a gateway batch took (plays, meters, events, hits, contributions; hellos in gateway_hello),
written for all its machines at once. The hot path (plays of linked machines in service) is a handful of
statements whatever the number of plays and machines. Plays are their own append-only record: they are
not audited one by one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils.translation import gettext

from halls import money
from halls.cashier.models import PayableKind
from halls.cashier.services import payables
from halls.cashier.services import readmodels as cashier_readmodels
from halls.money import HUNDRED
from jackpots.models import PoolLevel, SourceType
from jackpots.services import awards, contributions
from jackpots.services.contributions import ContributionItem
from jackpots.services.locks import lock_levels
from jackpots.sources import PoolSource
from jackpots.widearea.models import WideAreaMirror
from jackpots.widearea.services import venue as widearea
from machines import protocol
from machines.models import (
    LockReason,
    MachineEvent,
    MachineState,
    MeterSnapshot,
    Play,
    ProgressiveHit,
)
from machines.services import gateway_hello, gateway_rows
from machines.services.audit import GATEWAY, describe, record
from machines.services.gateway_rows import Row
from machines.services.reconciliation import reconcile_snapshot

# The ack code of a play taken from a locked machine: the game its operator's lock found in progress.
AFTER_LOCK = "after_lock"


def source(machine_id: int) -> PoolSource:
    """The pool source of a machine's plays and hits (stored as "machine:<id>")."""
    return PoolSource.of(SourceType.MACHINE, machine_id)


def message_key(machine_id: int, seq: int) -> str:
    return f"machine:{machine_id}:{seq}"


@dataclass
class PendingHit:
    row: Row
    message: protocol.Hit
    level: PoolLevel
    replies: list[dict[str, Any]] = field(default_factory=list)  # its ack and its retries' in the batch


@dataclass
class WideHit:
    """A hit on a wide-area level: reported to the central when the batch is written, decided there."""

    row: Row
    message: protocol.Hit
    mirror: WideAreaMirror


@dataclass
class Batch:
    """What one transaction takes, for all its machines; `finish` writes it."""

    at: datetime
    plays: list[Play] = field(default_factory=list)
    events: list[MachineEvent] = field(default_factory=list)
    items: dict[int, list[tuple[int, ContributionItem]]] = field(default_factory=dict)  # by pool, of machines
    hits: list[PendingHit] = field(default_factory=list)  # in arrival order
    greetings: dict[int, gateway_hello.Greeting] = field(default_factory=dict)  # by machine
    levels: dict[int, dict[str, PoolLevel]] = field(default_factory=dict)  # by pool, read for a hit
    reconciled: list[tuple[MeterSnapshot, dict[str, Any]]] = field(default_factory=list)  # to audit
    mirrors: dict[int, WideAreaMirror | None] = field(default_factory=dict)  # by pool: its wide-area side
    wide_hits: list[WideHit] = field(default_factory=list)

    # --- per message (after sequencing took it) ---

    def refusal(self, row: Row, message: protocol.Stored) -> dict[str, Any] | None:
        """Plays and hits need a machine in service; meters and events are recorded in any state (a locked
        machine still reports its doors and meters). A hit needs its machine linked, to a pool that has
        the level."""
        if not isinstance(message, protocol.Play | protocol.Hit):
            return None
        seq, asset = message.seq, row.machine.asset_number
        if row.state == MachineState.OUT_OF_SERVICE:
            return protocol.ack(
                seq, "rejected", "machine_out_of_service", f"Machine {asset} is out of service."
            )
        if row.state == MachineState.LOCKED and not self._ends_a_game_begun_before_the_lock(row, message):
            return protocol.ack(
                seq, "rejected", "machine_locked", f"Machine {asset} is locked ({row.lock_reason})."
            )
        if isinstance(message, protocol.Play):
            try:  # the contribution's check (and the play's column): a bet it would refuse is refused alone
                money.parse_bet(message.bet)
            except money.MoneyError as exc:
                return protocol.ack(seq, "rejected", "bad_amount", f"The {exc}.")
        if isinstance(message, protocol.Hit):
            if row.pool_id is None:
                return protocol.ack(
                    seq, "rejected", "not_linked", f"Machine {asset} is not linked to a pool."
                )
            if message.level not in self._levels(row.pool_id):
                return protocol.ack(
                    seq, "rejected", "unknown_level", f"The machine's pool has no level {message.level!r}."
                )
            mirror = self._mirror(row.pool_id)
            if mirror is not None and message.level in mirror.wide_levels:
                refusal = widearea.hit_refusal(mirror, message.level, self.at)
                if refusal is not None:
                    widearea.count_refusal(refusal)
                    return protocol.ack(seq, "rejected", refusal.code, refusal.message)
        return None

    def _ends_a_game_begun_before_the_lock(self, row: Row, message: protocol.Stored) -> bool:
        """The operator's lock may find a game in progress: the machine ends it, and its play comes after
        the lock. The first play after it, within MACHINE_LOCK_GRACE_SECONDS, is that game's; any other is
        the machine playing while locked. (A hand pay's lock comes with the hit that ended the game.)"""
        locked_at = row.machine.operator_locked_at
        if not isinstance(message, protocol.Play) or row.lock_reason != LockReason.OPERATOR:
            return False
        if locked_at is None or (self.at - locked_at).total_seconds() >= settings.MACHINE_LOCK_GRACE_SECONDS:
            return False  # past the window (0: no window)
        last_play_at = row.last_play_at or row.machine.last_play_at  # this batch's, else the row's
        return last_play_at is None or last_play_at < locked_at  # else the game in flight was heard

    def play(self, row: Row, message: protocol.Play) -> str:
        """The play taken; its ack's code: ``after_lock`` for the game a lock found in progress (counted on
        /metrics by its ack), else none."""
        machine_id = row.machine.pk
        self.plays.append(
            Play(
                machine=row.machine,
                seq=message.seq,
                game_id=message.game_id,
                bet=message.bet,
                win=message.win,
                played_at=message.at,
                received_at=self.at,
            )
        )
        if row.pool_id is not None:
            key = message_key(machine_id, message.seq)
            item = ContributionItem(source=source(machine_id), bet=message.bet, idempotency_key=key)
            self._contribute(row, item)
        row.played += 1
        row.last_play_at = self.at
        return AFTER_LOCK if row.state == MachineState.LOCKED else ""

    def event(self, row: Row, message: protocol.Event) -> None:
        at = message.at or self.at
        self.events.append(MachineEvent(machine=row.machine, seq=message.seq, kind=message.kind, at=at))

    def meters(self, row: Row, message: protocol.Meters, late: bool) -> frozenset[int]:
        """The snapshot, reconciled when it came in order: the ids of the gaps it reconciled (the coin-in
        they missed is contributed once)."""
        self._write_rows()  # the reconciliation counts the plays taken before it
        machine = row.machine
        snapshot = MeterSnapshot.objects.create(
            machine=machine,
            seq=message.seq,
            coin_in=message.coin_in,
            coin_out=message.coin_out,
            games_played=message.games_played,
            jackpots_paid=message.jackpots_paid,
            credits=message.credits,
            taken_at=message.at or self.at,
        )
        if late:
            return frozenset()
        done = reconcile_snapshot(machine=machine, snapshot=snapshot, at=self.at)
        if done.audit is not None:
            self.reconciled.append((snapshot, done.audit))
        if done.contribution is not None and row.pool_id is not None:
            gap_id, amount = done.contribution
            key = f"machine:{machine.pk}:gap:{gap_id}"
            item = ContributionItem(source=source(machine.pk), bet=amount, idempotency_key=key)
            self._contribute(row, item)
        return done.gap_ids

    def hit(self, row: Row, message: protocol.Hit) -> dict[str, Any]:
        """Awarded after the batch's plays (`finish`); the machine locks for its hand pay at once: a play
        after it in the batch is refused."""
        assert row.pool_id is not None  # refusal() let it through
        mirror = self._mirror(row.pool_id)
        if mirror is not None and message.level in mirror.wide_levels:
            self.wide_hits.append(WideHit(row, message, mirror))  # the central decides its amount
        else:
            self.hits.append(PendingHit(row, message, self._levels(row.pool_id)[message.level]))
        row.state, row.lock_reason = MachineState.LOCKED, LockReason.HAND_PAY
        return {"amount": None, "lock": LockReason.HAND_PAY.value}  # the amount once awarded

    def answer_hit(self, row: Row, seq: int, reply: dict[str, Any]) -> None:
        """`reply` answers the hit `seq` taken in this batch (its ack or a retry's): it gets the amount."""
        for hit in self.hits:
            if hit.row is row and hit.message.seq == seq:
                hit.replies.append(reply)

    def hello(self, row: Row, message: protocol.Hello) -> dict[str, Any]:
        """The reply, a welcome filled in after the batch (the machine as the batch leaves it)."""
        greeting = self.greetings.setdefault(row.machine.pk, gateway_hello.Greeting(row, message))
        greeting.hello = message
        welcome: dict[str, Any] = {}
        greeting.replies.append(welcome)
        return welcome

    def _levels(self, pool_id: int) -> dict[str, PoolLevel]:
        if pool_id not in self.levels:
            self.levels[pool_id] = {lv.name: lv for lv in PoolLevel.objects.filter(pool_id=pool_id)}
        return self.levels[pool_id]

    def _mirror(self, pool_id: int) -> WideAreaMirror | None:
        if pool_id not in self.mirrors:
            self.mirrors[pool_id] = widearea.mirror_of_pool(pool_id)
        return self.mirrors[pool_id]

    def _contribute(self, row: Row, item: ContributionItem) -> None:
        assert row.pool_id is not None
        self.items.setdefault(row.pool_id, []).append((row.machine.pk, item))

    # --- the writes ---

    def _write_rows(self) -> None:
        gateway_rows.insert_plays(self.plays)
        if self.events:
            MachineEvent.objects.bulk_create(self.events)
        self.plays, self.events = [], []

    def finish(self, rows: Sequence[Row], last_seqs: Mapping[int, int]) -> None:
        """Write what the batch took: its plays and events; the pools' exclusive locks when a hit is to be
        awarded, BEFORE contributing (contributing first would hold the shared lock while waiting for the
        exclusive one, and two such batches would deadlock; every pool lock comes after every machine row
        lock, pools in id order); one `contribute_many` per pool; the hits in arrival order (two on one
        level: the second is paid from the reset); the hellos; one UPDATE of the machine rows."""
        self._write_rows()
        for pool_id in sorted({hit.row.pool_id for hit in self.hits if hit.row.pool_id is not None}):
            lock_levels(pool_id)
        if self.hits:  # their payables' accounts, before any audit entry of the batch
            payables.hold_award_accounts({hit.row.machine.venue_id for hit in self.hits})
        for pool_id in sorted(self.items):
            items = [item for _, item in sorted(self.items[pool_id], key=lambda mi: mi[0])]  # by machine
            contributions.contribute_many(pool=pool_id, items=items, actor=GATEWAY)
        for snapshot, data in self.reconciled:  # audited after the pools' locks (halls.locks)
            record(snapshot.machine.venue_id, GATEWAY, "machine.gap_reconciled", snapshot, data)
        for hit in self.hits:
            _award(hit, self.at)
        greetings = [self.greetings[pk] for pk in sorted(self.greetings)]
        for greeting in greetings:
            gateway_hello.resync(greeting, self.at)
        changed = [row.changed(self.at, last_seqs[row.machine.pk]) for row in rows]
        gateway_rows.update_machines([m for m in changed if m is not None])
        if greetings:
            gateway_hello.welcome(greetings, self.at)
        for wide in self.wide_hits:  # last: each ends with its outbox number (halls.locks.Rank.STREAM)
            machine = wide.row.machine
            widearea.report_hit(
                mirror=wide.mirror,
                source=f"machine:{machine.pk}",
                level=wide.message.level,
                key=message_key(machine.pk, wide.message.seq),
                actor=f"{GATEWAY}:{machine.asset_number}",
                context={
                    "machine": machine.pk,
                    "seq": wide.message.seq,
                    "group": wide.row.group_id,
                    "game_id": wide.message.game_id,
                },
                at=self.at,
            )


def create_hand_pay(hit: ProgressiveHit, award_id: int | None, actor: str) -> None:
    """The hit waits at the cashier as a payable (a hit of 0 makes none); `award_id`: the pool's award
    row (None for a hit recorded without one)."""
    machine = hit.machine
    with payables.venue_language(machine.venue_id):
        payables.create_payable(
            venue_id=machine.venue_id,
            kind=PayableKind.MACHINE,
            source=cashier_readmodels.machine_hit_source(hit.pk)
            if award_id is None
            else cashier_readmodels.pool_award_source(award_id),
            description=gettext("Machine %(asset)s · %(level)s · hand pay")
            % {"asset": machine.asset_number, "level": hit.level.name},
            amount=hit.amount,
            actor=actor,
        )


def _award(hit: PendingHit, at: datetime) -> None:
    """100 % of the level's folded meter, which holds the plays before the hit (in a batch: the batch's
    plays on that pool); the hit's replies get the amount."""
    machine, message = hit.row.machine, hit.message
    assert hit.row.group_id is not None
    actor = f"{GATEWAY}:{machine.asset_number}"
    result = awards.award_level(
        level=hit.level,
        percent=HUNDRED,
        winner={"source": source(machine.pk), "label": machine.asset_number, "hand": message.game_id},
        idempotency_key=message_key(machine.pk, message.seq),
        actor=actor,
    )
    amount = result.total_paid
    row = ProgressiveHit.objects.create(
        machine=machine,
        seq=message.seq,
        group_id=hit.row.group_id,
        level=hit.level,
        game_id=message.game_id,
        settlement_id=result.settlement_id or 0,
        amount=amount,
        reported_at=at,
    )
    for reply in hit.replies:
        reply["amount"] = str(amount)
    if result.lines:
        create_hand_pay(row, result.lines[0].award_id, actor)
    data = {
        **describe(machine),
        "state": MachineState.LOCKED,
        "lock_reason": LockReason.HAND_PAY,
        "seq": message.seq,
        "level": hit.level.pk,
        "level_name": hit.level.name,
        "amount": amount,
        "settlement": result.settlement_id,
    }
    record(machine.venue_id, actor, "machine.hit", row, data)
