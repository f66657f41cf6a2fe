"""The device gateway: what a machine's interface board sends, taken in ONE transaction per call.

`receive_many` takes the frames of many machines in one transaction (group commit: the WebSocket door
batches the frames of all its connections), `receive` is a batch of one; the rules below are per machine
and the same either way. The hot path (plays from linked machines in service) is a handful of statements
whatever the number of plays and machines: the machine rows FOR UPDATE in id order (with their link and
venue), one INSERT of the plays, one `contribute_many` per pool for the whole batch (one prepared
statement), one UPDATE of the machine rows. Plays are their own append-only record: they are not audited
one by one.

Sequence numbers (one space per machine for plays, meters, events and hits):
- a seq above ``last_seq + 1`` records a SequenceGap (and a ``sequence_gap`` alert), then is accepted;
- a seq at or below ``last_seq``: already stored -> ``duplicate`` with the same content, ``rejected
  seq_reused`` with other content; inside an open gap -> accepted late; inside a reconciled gap ->
  ``rejected gap_reconciled`` (its coin-in was already counted from the meters);
- a rejected message consumes nothing: the board may send that seq again.

Plays and hits need a machine in service (``machine_locked``, ``machine_out_of_service``); meters and
events are recorded in any state (a locked machine still reports its doors and meters).

Hits: the pool engine awards 100 % of the level's folded meter in arrival order (two hits on one level in
one instant: the second is paid from the reset amount). A call with a hit first takes the pool's
exclusive lock (jackpots.services.locks.lock_levels) and only then contributes its plays: contributing
first and awarding after would hold the shared lock while waiting for the exclusive one, and two such
calls would deadlock. A batch takes every pool lock after every machine row lock, in id order. The plays
before the hit (in a batch: the batch's plays on that pool) are in its meter; a play after it in the same
call is refused (the machine is in hand-pay lock-up). Hits of one batch are awarded in arrival order.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from django.db import connection, transaction
from django.utils import timezone

from jackpots.models import PoolLevel
from jackpots.services import awards, contributions
from jackpots.services.contributions import ContributionItem
from jackpots.services.locks import lock_levels
from jackpots.services.readmodels import meters
from machines import protocol
from machines.models import (
    AlertKind,
    LinkGroup,
    LinkMember,
    LockReason,
    Machine,
    MachineAlert,
    MachineEvent,
    MachineState,
    MeterSnapshot,
    Play,
    ProgressiveHit,
    SequenceGap,
)
from machines.services.common import GATEWAY, describe, now, record
from machines.services.reconciliation import reconcile_snapshot

log = logging.getLogger("hall.machines.gateway")

HUNDRED = Decimal(100)
# A heartbeat refreshes last_seen_at at most this often (the watch needs seconds, not milliseconds).
HEARTBEAT_WRITE_EVERY = timedelta(seconds=1)


# The hot path's statements are written out in SQL: each runs hundreds of times a second, and the ORM's
# compilation of the same query (subqueries, bulk INSERT) cost more CPU than the database's work.
_LOCK_SQL = """
SELECT m.*, v.time_zone AS venue_time_zone, link.group_id AS link_group_id, link.pool_id AS link_pool_id
FROM machines_machine m
JOIN halls_venue v ON v.id = m.venue_id
LEFT JOIN LATERAL (
    SELECT lm.group_id, g.pool_id
    FROM machines_linkmember lm
    JOIN machines_linkgroup g ON g.id = lm.group_id
    JOIN jackpots_pool p ON p.id = g.pool_id AND p.active
    WHERE lm.machine_id = m.id AND lm.left_at IS NULL
    LIMIT 1
) link ON true
WHERE m.id = ANY(%s::bigint[])
ORDER BY m.id
FOR UPDATE OF m
"""

_INSERT_PLAYS_SQL = """
INSERT INTO machines_play (machine_id, seq, game_id, bet, win, played_at, received_at)
SELECT p.machine_id, p.seq, p.game_id, p.bet, p.win, p.played_at, p.received_at
FROM unnest(
    %s::bigint[], %s::bigint[], %s::text[], %s::numeric[], %s::numeric[], %s::timestamptz[],
    %s::timestamptz[]
) AS p(machine_id, seq, game_id, bet, win, played_at, received_at)
"""

_UPDATE_MACHINES_SQL = """
UPDATE machines_machine m
SET last_seq = u.last_seq, last_seen_at = u.last_seen_at, online = true, state = u.state,
    lock_reason = u.lock_reason, plays_day = u.plays_day, plays_today = u.plays_today,
    last_play_at = u.last_play_at
FROM unnest(
    %s::bigint[], %s::bigint[], %s::timestamptz[], %s::text[], %s::text[], %s::date[], %s::integer[],
    %s::timestamptz[]
) AS u(id, last_seq, last_seen_at, state, lock_reason, plays_day, plays_today, last_play_at)
WHERE m.id = u.id
"""


def _lock(machine_ids: Sequence[int]) -> dict[int, Machine]:
    """The machines FOR UPDATE in id order (two batches never wait on each other crosswise), each with
    its venue's time zone and its active link (group, pool of an active pool) as attributes
    ``venue_time_zone``, ``link_group_id``, ``link_pool_id``: one statement whatever their number."""
    if connection.vendor != "postgresql":
        return _lock_orm(machine_ids)
    return {m.pk: m for m in Machine.objects.raw(_LOCK_SQL, [sorted(machine_ids)])}


# The embedded hall (SQLite, `make demo` without services) has no arrays, LATERAL or FOR UPDATE OF: the
# same rows through the ORM, a few statements per machine, which a demo's two dozen machines never notice.
def _lock_orm(machine_ids: Sequence[int]) -> dict[int, Machine]:
    found: dict[int, Machine] = {}
    rows = Machine.objects.select_for_update().select_related("venue").filter(pk__in=machine_ids)
    for machine in rows.order_by("pk"):
        link = (
            LinkMember.objects.filter(machine=machine, left_at__isnull=True, group__pool__active=True)
            .select_related("group")
            .first()
        )
        machine.venue_time_zone = machine.venue.time_zone  # type: ignore[attr-defined]
        machine.link_group_id = link.group_id if link else None  # type: ignore[attr-defined]
        machine.link_pool_id = link.group.pool_id if link else None  # type: ignore[attr-defined]
        found[machine.pk] = machine
    return found


def _insert_plays(plays: Sequence[Play]) -> None:
    """The plays of any number of machines: one INSERT."""
    if not plays:
        return
    if connection.vendor != "postgresql":
        Play.objects.bulk_create(plays)
        return
    with connection.cursor() as cursor:
        cursor.execute(
            _INSERT_PLAYS_SQL,
            [
                [p.machine_id for p in plays],
                [p.seq for p in plays],
                [p.game_id for p in plays],
                [p.bet for p in plays],
                [p.win for p in plays],
                [p.played_at for p in plays],
                [p.received_at for p in plays],
            ],
        )


def _update_machines(machines: Sequence[Machine]) -> None:
    """What the calls changed on their machine rows: one UPDATE whatever their number."""
    if not machines:
        return
    if connection.vendor != "postgresql":
        for m in machines:
            Machine.objects.filter(pk=m.pk).update(
                last_seq=m.last_seq,
                last_seen_at=m.last_seen_at,
                online=True,
                state=m.state,
                lock_reason=m.lock_reason,
                plays_day=m.plays_day,
                plays_today=m.plays_today,
                last_play_at=m.last_play_at,
            )
        return
    with connection.cursor() as cursor:
        cursor.execute(
            _UPDATE_MACHINES_SQL,
            [
                [m.pk for m in machines],
                [m.last_seq for m in machines],
                [m.last_seen_at for m in machines],
                [m.state for m in machines],
                [m.lock_reason for m in machines],
                [m.plays_day for m in machines],
                [m.plays_today for m in machines],
                [m.last_play_at for m in machines],
            ],
        )


@functools.lru_cache(maxsize=64)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def venue_day(time_zone: str, at: datetime) -> date:
    return timezone.localtime(at, _zone(time_zone)).date()


def source(machine_id: int) -> str:
    return f"machine:{machine_id}"


def message_key(machine_id: int, seq: int) -> str:
    return f"machine:{machine_id}:{seq}"


def _stored_content(
    machine: Machine, seqs: list[int]
) -> dict[int, tuple[tuple[object, ...], dict[str, Any]]]:
    """What is stored under each of `seqs` (content as protocol.content gives it, extra reply fields)."""
    found: dict[int, tuple[tuple[object, ...], dict[str, Any]]] = {}
    for seq, game_id, bet, win in Play.objects.filter(machine=machine, seq__in=seqs).values_list(
        "seq", "game_id", "bet", "win"
    ):
        found[seq] = (("play", game_id, bet, win), {})
    for row in MeterSnapshot.objects.filter(machine=machine, seq__in=seqs).values_list(
        "seq", "coin_in", "coin_out", "jackpots_paid", "credits", "games_played"
    ):
        found[row[0]] = (("meters", *row[1:]), {})
    for seq, kind in MachineEvent.objects.filter(machine=machine, seq__in=seqs).values_list("seq", "kind"):
        found[seq] = (("event", kind), {})
    for seq, level_name, game_id, amount in ProgressiveHit.objects.filter(
        machine=machine, seq__in=seqs
    ).values_list("seq", "level__name", "game_id", "amount"):
        found[seq] = (
            ("hit", level_name, game_id),
            {"amount": str(amount), "lock": LockReason.HAND_PAY.value},
        )
    return found


@dataclass
class _PendingHit:
    message: protocol.Hit
    level: PoolLevel
    replies: list[dict[str, Any]] = field(default_factory=list)  # its ack, and acks of retries in the call


@dataclass
class _Call:
    """One machine's messages in a batch: the machine (locked), what they change, written by `_finish`."""

    machine: Machine
    at: datetime
    pool_id: int | None
    group_id: int | None
    last_seq: int
    state: str
    lock_reason: str
    stored: dict[int, tuple[tuple[object, ...], dict[str, Any]]] = field(default_factory=dict)
    gaps: list[SequenceGap] = field(default_factory=list)
    seen: dict[int, tuple[tuple[object, ...], dict[str, Any]]] = field(default_factory=dict)
    plays: list[Play] = field(default_factory=list)
    events: list[MachineEvent] = field(default_factory=list)
    items: list[ContributionItem] = field(default_factory=list)
    hits: list[_PendingHit] = field(default_factory=list)
    hits_by_seq: dict[int, _PendingHit] = field(default_factory=dict)
    levels: dict[str, PoolLevel] | None = None
    touched: bool = False  # something to write on the machine row (last_seen_at at least)
    hello: list[tuple[protocol.Hello, dict[str, Any]]] = field(default_factory=list)
    played: int = 0
    last_play_at: datetime | None = None

    # --- per message ---

    def take(self, message: protocol.Message) -> dict[str, Any]:
        if isinstance(message, protocol.Heartbeat):
            self.touched = True
            return protocol.ack(None, "accepted")
        if isinstance(message, protocol.Hello):
            self.touched = True
            welcome: dict[str, Any] = {}
            self.hello.append((message, welcome))  # filled in by _finish: the welcome after the batch
            return welcome
        seq = message.seq
        content = protocol.content(message)
        known = self.seen.get(seq) or self.stored.get(seq)
        if known is not None:
            if known[0] == content:
                reply = protocol.ack(seq, "duplicate", "", "Already accepted.", **known[1])
                if isinstance(message, protocol.Hit) and seq in self.seen:
                    self.hits_by_seq[seq].replies.append(reply)  # a retry in the call: same amount
                return reply
            return protocol.ack(seq, "rejected", "seq_reused", f"seq {seq} was accepted with other content.")
        late = seq <= self.last_seq
        if late:
            gap = self._gap_of(seq)
            if gap is None:
                return protocol.ack(seq, "rejected", "bad_seq", f"seq {seq} is neither stored nor missing.")
            if gap.reconciled_at is not None:
                return protocol.ack(
                    seq,
                    "rejected",
                    "gap_reconciled",
                    f"seq {seq} was missing and its gap is reconciled from the meters: it is not taken now.",
                )
        refusal = self._refusal(message)
        if refusal is not None:
            return refusal
        if not late:
            if seq > self.last_seq + 1:
                self._record_gap(self.last_seq + 1, seq - 1)
            self.last_seq = seq
        self.touched = True
        extra = self._accept(message, late)
        self.seen[seq] = (content, extra)
        reply = protocol.ack(seq, "accepted", "", "", **extra)
        if isinstance(message, protocol.Hit):
            self.hits_by_seq[seq].replies.append(reply)
        return reply

    def _gap_of(self, seq: int) -> SequenceGap | None:
        for gap in self.gaps:
            if gap.first_missing <= seq <= gap.last_missing:
                return gap
        return None

    def _refusal(self, message: protocol.Stored) -> dict[str, Any] | None:
        if not isinstance(message, protocol.Play | protocol.Hit):
            return None
        seq = message.seq
        asset = self.machine.asset_number
        if self.state == MachineState.OUT_OF_SERVICE:
            return protocol.ack(
                seq, "rejected", "machine_out_of_service", f"Machine {asset} is out of service."
            )
        if self.state == MachineState.LOCKED:
            return protocol.ack(
                seq, "rejected", "machine_locked", f"Machine {asset} is locked ({self.lock_reason})."
            )
        if isinstance(message, protocol.Hit):
            if self.pool_id is None:
                return protocol.ack(
                    seq, "rejected", "not_linked", f"Machine {asset} is not linked to a pool."
                )
            if message.level not in self._levels():
                return protocol.ack(
                    seq, "rejected", "unknown_level", f"The machine's pool has no level {message.level!r}."
                )
        return None

    def _levels(self) -> dict[str, PoolLevel]:
        if self.levels is None:
            assert self.pool_id is not None
            self.levels = {lv.name: lv for lv in PoolLevel.objects.filter(pool_id=self.pool_id)}
        return self.levels

    def _record_gap(self, first: int, last: int) -> None:
        gap = SequenceGap.objects.create(
            machine=self.machine, first_missing=first, last_missing=last, detected_at=self.at
        )
        self.gaps.append(gap)
        missing = f"seq {first}" if first == last else f"seqs {first}-{last}"
        MachineAlert.objects.create(
            machine=self.machine,
            kind=AlertKind.SEQUENCE_GAP,
            message=f"{missing} never arrived; the next meter snapshot reconciles them.",
            raised_at=self.at,
        )

    def _accept(self, message: protocol.Stored, late: bool) -> dict[str, Any]:
        machine = self.machine
        if isinstance(message, protocol.Play):
            self.plays.append(
                Play(
                    machine=machine,
                    seq=message.seq,
                    game_id=message.game_id,
                    bet=message.bet,
                    win=message.win,
                    played_at=message.at,
                    received_at=self.at,
                )
            )
            if self.pool_id is not None:
                self.items.append(
                    ContributionItem(
                        source=source(machine.pk),
                        bet=message.bet,
                        idempotency_key=message_key(machine.pk, message.seq),
                    )
                )
            self.played += 1
            self.last_play_at = self.at
            return {}
        if isinstance(message, protocol.Event):
            self.events.append(
                MachineEvent(machine=machine, seq=message.seq, kind=message.kind, at=message.at or self.at)
            )
            return {}
        if isinstance(message, protocol.Meters):
            self._flush_rows()  # the reconciliation counts the plays of this call that came before
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
            if not late:
                done = reconcile_snapshot(machine=machine, snapshot=snapshot, at=self.at)
                if done.contribution is not None and self.pool_id is not None:
                    gap_id, amount = done.contribution
                    self.items.append(
                        ContributionItem(
                            source=source(machine.pk),
                            bet=amount,
                            idempotency_key=f"machine:{machine.pk}:gap:{gap_id}",
                        )
                    )
                for gap in self.gaps:  # a late seq in them is refused from here on
                    if gap.pk in done.gap_ids:
                        gap.reconciled_at = self.at
            return {}
        assert isinstance(message, protocol.Hit)
        pending = _PendingHit(message, self._levels()[message.level])
        self.hits.append(pending)
        self.hits_by_seq[message.seq] = pending
        self.state, self.lock_reason = MachineState.LOCKED, LockReason.HAND_PAY
        return {"amount": None, "lock": LockReason.HAND_PAY.value}  # the amount once awarded (_finish)

    # --- writes (the batch's `_finish` runs them for all its calls at once) ---

    def _flush_rows(self) -> None:
        """This call's plays and events so far (a meter snapshot reconciles against the stored plays)."""
        _insert_plays(self.plays)
        self.plays = []
        if self.events:
            MachineEvent.objects.bulk_create(self.events)
            self.events = []

    def machine_changes(self) -> Machine | None:
        """The machine with what this call changes on its row set on it; None when nothing does."""
        if not self.touched:
            return None
        machine = self.machine
        if self.played:
            day = venue_day(getattr(machine, "venue_time_zone", "UTC"), self.at)
            machine.plays_today = self.played + (machine.plays_today if machine.plays_day == day else 0)
            machine.plays_day = day
            machine.last_play_at = self.last_play_at
        machine.last_seq, machine.last_seen_at, machine.online = self.last_seq, self.at, True
        machine.state, machine.lock_reason = self.state, self.lock_reason
        return machine

    def welcome(self, codes: dict[int, str], levels: dict[int, list[dict[str, str]]]) -> None:
        """The welcome of each hello of the call: the machine as the call left it (`codes` of the link
        groups and `levels` of the pools, read once for the batch)."""
        code = codes.get(self.group_id) if self.group_id is not None else None
        pool_levels = levels.get(self.pool_id, []) if self.pool_id is not None else []
        for _, reply in self.hello:
            reply.update(_welcome(self.machine, code, pool_levels))

    def award(self, hit: _PendingHit) -> None:
        machine = self.machine
        message = hit.message
        assert self.group_id is not None
        result = awards.award_level(
            level=hit.level,
            percent=HUNDRED,
            winner={"source": source(machine.pk), "label": machine.asset_number, "hand": message.game_id},
            idempotency_key=message_key(machine.pk, message.seq),
            actor=f"{GATEWAY}:{machine.asset_number}",
        )
        amount = result.total_paid
        row = ProgressiveHit.objects.create(
            machine=machine,
            seq=message.seq,
            group_id=self.group_id,
            level=hit.level,
            game_id=message.game_id,
            settlement_id=result.settlement_id or 0,
            amount=amount,
            reported_at=self.at,
        )
        for reply in hit.replies:
            reply["amount"] = str(amount)
        record(
            machine.venue_id,
            f"{GATEWAY}:{machine.asset_number}",
            "machine.hit",
            row,
            {
                **describe(machine),
                "state": MachineState.LOCKED,
                "lock_reason": LockReason.HAND_PAY,
                "seq": message.seq,
                "level": hit.level.pk,
                "level_name": hit.level.name,
                "amount": amount,
                "settlement": result.settlement_id,
            },
        )

    def resync(self, message: protocol.Hello) -> None:
        """The board said hello: a link-lost lock ends (it has resynchronised; `_greet` clears the batch's
        link-lost alerts in one statement); an unapproved software version raises an alert."""
        machine = self.machine
        if self.state == MachineState.LOCKED and self.lock_reason == LockReason.LINK_LOST:
            self.state, self.lock_reason = MachineState.IN_SERVICE, LockReason.NONE
            record(
                machine.venue_id,
                f"{GATEWAY}:{machine.asset_number}",
                "machine.resynchronised",
                machine,
                {
                    **describe(machine),
                    "state": self.state,
                    "lock_reason": "",
                    "machine_last_seq": message.last_seq,
                },
            )
        if message.software_version and message.software_version != machine.software_version:
            open_alert = MachineAlert.objects.filter(
                machine=machine, kind=AlertKind.SOFTWARE_MISMATCH, cleared_at__isnull=True
            ).exists()
            if not open_alert:
                MachineAlert.objects.create(
                    machine=machine,
                    kind=AlertKind.SOFTWARE_MISMATCH,
                    message=(
                        f"The board reports software {message.software_version[:60]}, "
                        f"the approved version is {machine.software_version}."
                    ),
                    raised_at=self.at,
                )


def _unknown(message: protocol.Message) -> dict[str, Any]:
    seq = getattr(message, "seq", None)
    return protocol.ack(seq, "rejected", "unknown_machine", "This machine is not registered.")


def _failed(message: protocol.Message) -> dict[str, Any]:
    seq = getattr(message, "seq", None)
    return protocol.ack(seq, "rejected", "server_error", "Not taken: send it again later.")


def _open(machine: Machine, at: datetime, messages: Sequence[protocol.Message]) -> _Call:
    """A call on a locked machine for `messages`, with what is stored under their already-seen seqs."""
    call = _Call(
        machine=machine,
        at=at,
        pool_id=getattr(machine, "link_pool_id", None),
        group_id=getattr(machine, "link_group_id", None),
        last_seq=machine.last_seq,
        state=machine.state,
        lock_reason=machine.lock_reason,
    )
    old = sorted(
        {
            m.seq
            for m in messages
            if not isinstance(m, protocol.Hello | protocol.Heartbeat) and m.seq <= machine.last_seq
        }
    )
    if old:
        call.stored = _stored_content(machine, old)
        call.gaps = list(
            SequenceGap.objects.filter(machine=machine, first_missing__lte=old[-1], last_missing__gte=old[0])
        )
    return call


def _finish(calls: Sequence[_Call], hits: Sequence[tuple[_Call, _PendingHit]]) -> None:
    """Write what the calls took: one INSERT of all their plays, the pools' exclusive locks when a hit
    is to be awarded (before contributing: see the module docstring), one `contribute_many` per pool,
    the hits in arrival order, one UPDATE of the machine rows."""
    _insert_plays([p for call in calls for p in call.plays])
    events = [e for call in calls for e in call.events]
    if events:
        MachineEvent.objects.bulk_create(events)
    for call in calls:
        call.plays, call.events = [], []
    for pool_id in sorted({call.pool_id for call, _ in hits if call.pool_id is not None}):
        lock_levels(pool_id)
    items: dict[int, list[ContributionItem]] = {}
    for call in calls:
        if call.items:
            assert call.pool_id is not None  # items are only made for a linked machine
            items.setdefault(call.pool_id, []).extend(call.items)
    for pool_id in sorted(items):
        contributions.contribute_many(pool=pool_id, items=items[pool_id], actor=GATEWAY)
    for call, hit in hits:
        call.award(hit)
    greeted = [call for call in calls if call.hello]
    for call in greeted:
        call.resync(call.hello[-1][0])
    _update_machines([m for m in (call.machine_changes() for call in calls) if m is not None])
    if greeted:
        _greet(greeted)


def _greet(calls: Sequence[_Call]) -> None:
    """The hellos of a batch (a reconnection storm comes as batches of them): their link-lost alerts
    cleared in one UPDATE, the link groups' codes and the pools' levels read once, each welcome filled."""
    MachineAlert.objects.filter(
        machine_id__in=[call.machine.pk for call in calls], kind=AlertKind.LINK_LOST, cleared_at__isnull=True
    ).update(cleared_at=calls[0].at)
    group_ids = {call.group_id for call in calls if call.group_id is not None}
    codes = dict(LinkGroup.objects.filter(pk__in=group_ids).values_list("pk", "code")) if group_ids else {}
    pool_ids = {call.pool_id for call in calls if call.pool_id is not None}
    levels = {pool_id: _levels_of(meter) for pool_id, meter in meters.pool_meters(pool_ids).items()}
    for call in calls:
        call.welcome(codes, levels)


def _take(
    batch: Sequence[tuple[int, Sequence[protocol.Message]]], at: datetime
) -> list[list[dict[str, Any]]]:
    """The batch in one transaction. Frames of one machine (it may appear twice: a board that
    reconnected) are one call, taken in batch order."""
    wanted: dict[int, list[protocol.Message]] = {}
    for machine_id, messages in batch:
        if messages:
            wanted.setdefault(machine_id, []).extend(messages)
    if not wanted:
        return [[] for _ in batch]
    with transaction.atomic():
        machines = _lock(list(wanted))
        calls = {pk: _open(machines[pk], at, wanted[pk]) for pk in sorted(machines)}
        hits: list[tuple[_Call, _PendingHit]] = []
        replies: list[list[dict[str, Any]]] = []
        for machine_id, messages in batch:
            call = calls.get(machine_id)
            if call is None:
                replies.append([_unknown(message) for message in messages])
                continue
            before = len(call.hits)
            replies.append([call.take(message) for message in messages])
            hits.extend((call, hit) for hit in call.hits[before:])
        _finish(list(calls.values()), hits)
    return replies


def receive_many(
    batch: Sequence[tuple[int, Sequence[protocol.Message]]], received_at: datetime | None = None
) -> list[list[dict[str, Any]]]:
    """The frames of many machines, ``(machine_id, messages)`` each, in ONE transaction (group commit);
    the replies of each frame, in the batch's order. Each machine's messages follow exactly the rules of
    `receive`. If the batch fails, its frames are taken again one by one, so one machine's failure does
    not lose the others: a frame that fails alone gets ``rejected server_error`` replies (nothing taken,
    the board sends it again). A batch of one frame raises, as `receive` does."""
    at = received_at or now()
    try:
        return _take(batch, at)
    except Exception:
        if len(batch) <= 1:
            raise
        log.warning("a batch of %s frames failed: taking them one by one", len(batch), exc_info=True)
    replies: list[list[dict[str, Any]]] = []
    for machine_id, messages in batch:
        try:
            replies.append(_take([(machine_id, messages)], at)[0])
        except Exception:
            log.exception("gateway call failed for machine %s", machine_id)
            replies.append([_failed(message) for message in messages])
    return replies


def receive(
    *, machine_id: int, messages: Sequence[protocol.Message], received_at: datetime | None = None
) -> list[dict[str, Any]]:
    """Take a machine's messages in order, in one transaction; a reply per message, in order (an ``ack``;
    a ``welcome`` for a hello). See the module docstring for sequence numbers, states and hits."""
    return receive_many([(machine_id, messages)], received_at)[0]


# --- connection life -------------------------------------------------------------------------------------


def _levels_of(meter: meters.PoolMeter) -> list[dict[str, str]]:
    return [{"level": level.name, "amount": str(level.amount)} for level in meter.levels]


def levels_payload(pool_id: int | None) -> list[dict[str, str]]:
    if pool_id is None:
        return []
    meter = meters.pool_meters([pool_id]).get(pool_id)
    return _levels_of(meter) if meter is not None else []


def _welcome(machine: Machine, code: str | None, levels: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "type": "welcome",
        "machine": machine.asset_number,
        "state": machine.state,
        "lock_reason": machine.lock_reason,
        "last_seq": machine.last_seq,
        "group": code,
        "levels": levels,
    }


def hello(
    *, machine_id: int, message: protocol.Hello | None = None, received_at: datetime | None = None
) -> dict[str, Any]:
    """The board (re)connected and said hello: it is online, a link-lost lock ends (it resynchronises),
    and it gets the welcome (its state, the last seq we hold, its pool's levels)."""
    replies = receive(
        machine_id=machine_id,
        messages=[message or protocol.Hello(last_seq=0, software_version="")],
        received_at=received_at,
    )
    return replies[0]


def heartbeat(*, machine_id: int, received_at: datetime | None = None) -> None:
    """The board is alive: one conditional UPDATE, written at most once a second per machine."""
    at = received_at or now()
    Machine.objects.filter(pk=machine_id).exclude(
        online=True, last_seen_at__gte=at - HEARTBEAT_WRITE_EVERY
    ).update(online=True, last_seen_at=at)


_MARK_HEARD_SQL = """
UPDATE machines_machine SET last_seen_at = %s
WHERE id IN (
    SELECT id FROM machines_machine
    WHERE id = ANY(%s::bigint[]) AND last_seen_at < %s
    ORDER BY id
    FOR UPDATE SKIP LOCKED
)
"""


def mark_heard(*, machine_ids: Sequence[int], received_at: datetime | None = None) -> None:
    """These machines' connections carried frames just now (their batches may still be waiting): they
    are alive, whatever the gateway's backlog. One statement; each row written at most once a second
    (HEARTBEAT_WRITE_EVERY), and rows a batch holds right now are skipped (that batch writes them)."""
    if not machine_ids:
        return
    at = received_at or now()
    stale = at - HEARTBEAT_WRITE_EVERY
    if connection.vendor != "postgresql":
        Machine.objects.filter(pk__in=machine_ids, last_seen_at__lt=stale).update(last_seen_at=at)
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_MARK_HEARD_SQL, [at, list(machine_ids), stale])


def connected(*, machine_id: int, received_at: datetime | None = None) -> None:
    """Its connection opened (it says hello next)."""
    at = received_at or now()
    Machine.objects.filter(pk=machine_id).update(online=True, last_seen_at=at)


def disconnected(*, machine_id: int) -> None:
    """Its connection closed: offline at once. If it stays silent, the link watch locks it (link_lost)."""
    Machine.objects.filter(pk=machine_id).update(online=False)
