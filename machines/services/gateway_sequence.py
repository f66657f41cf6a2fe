"""Sequencing: idempotency by (machine, seq), gaps and replays. One seq space per machine for plays,
meters, events and hits; a message this module refuses consumes nothing (the board may send that seq
again)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from machines import protocol
from machines.models import (
    AlertKind,
    LockReason,
    Machine,
    MachineAlert,
    MachineEvent,
    MeterSnapshot,
    Play,
    ProgressiveHit,
    SequenceGap,
)

# What a seq holds: its content as protocol.content gives it, and the extra fields of its reply.
Known = tuple[tuple[object, ...], dict[str, Any]]


def stored_content(machine: Machine, seqs: list[int]) -> dict[int, Known]:
    """What is stored under each of `seqs`."""
    found: dict[int, Known] = {}
    plays = Play.objects.filter(machine=machine, seq__in=seqs)
    for seq, game_id, bet, win in plays.values_list("seq", "game_id", "bet", "win"):
        found[seq] = (("play", game_id, bet, win), {})
    for row in MeterSnapshot.objects.filter(machine=machine, seq__in=seqs).values_list(
        "seq", "coin_in", "coin_out", "jackpots_paid", "credits", "games_played"
    ):
        found[row[0]] = (("meters", *row[1:]), {})
    for seq, kind in MachineEvent.objects.filter(machine=machine, seq__in=seqs).values_list("seq", "kind"):
        found[seq] = (("event", kind), {})
    hits = ProgressiveHit.objects.filter(machine=machine, seq__in=seqs)
    for seq, level_name, game_id, amount in hits.values_list("seq", "level__name", "game_id", "amount"):
        found[seq] = (
            ("hit", level_name, game_id),
            {"amount": str(amount), "lock": LockReason.HAND_PAY.value},
        )
    return found


@dataclass
class Sequencer:
    """One machine's seqs in a batch (its row locked): what is stored, what the batch took, its gaps."""

    machine: Machine
    at: datetime
    last_seq: int
    stored: dict[int, Known] = field(default_factory=dict)  # only the seqs the batch's messages reuse
    gaps: list[SequenceGap] = field(default_factory=list)  # those around them, and those found now
    seen: dict[int, Known] = field(default_factory=dict)  # taken in this batch

    @classmethod
    def open(cls, machine: Machine, at: datetime, messages: Sequence[protocol.Message]) -> Sequencer:
        """With what is stored under the messages' already-seen seqs (none on the hot path: no reads)."""
        book = cls(machine=machine, at=at, last_seq=machine.last_seq)
        old = sorted(
            {
                m.seq
                for m in messages
                if not isinstance(m, protocol.Hello | protocol.Heartbeat) and m.seq <= machine.last_seq
            }
        )
        if old:
            book.stored = stored_content(machine, old)
            gaps = SequenceGap.objects.filter(
                machine=machine, first_missing__lte=old[-1], last_missing__gte=old[0]
            )
            book.gaps = list(gaps)
        return book

    def replay(self, seq: int, content: tuple[object, ...]) -> dict[str, Any] | None:
        """The reply to a seq already taken: ``duplicate`` (the same reply fields) with the same content,
        ``rejected seq_reused`` with other content; None for a seq not taken yet."""
        known = self.seen.get(seq) or self.stored.get(seq)
        if known is None:
            return None
        if known[0] == content:
            return protocol.ack(seq, "duplicate", "", "Already accepted.", **known[1])
        return protocol.ack(seq, "rejected", "seq_reused", f"seq {seq} was accepted with other content.")

    def is_late(self, seq: int) -> bool:
        return seq <= self.last_seq

    def late_refusal(self, seq: int) -> dict[str, Any] | None:
        """A late seq not taken yet is taken inside an open gap; refused outside any gap, and inside a
        reconciled one (its coin-in was already counted from the meters)."""
        gap = next((g for g in self.gaps if g.first_missing <= seq <= g.last_missing), None)
        if gap is None:
            return protocol.ack(seq, "rejected", "bad_seq", f"seq {seq} is neither stored nor missing.")
        if gap.reconciled_at is not None:
            return protocol.ack(
                seq,
                "rejected",
                "gap_reconciled",
                f"seq {seq} was missing and its gap is reconciled from the meters: it is not taken now.",
            )
        return None

    def advance(self, seq: int) -> None:
        """A seq above ``last_seq + 1`` records the seqs skipped as a gap (and an alert) first."""
        if seq > self.last_seq + 1:
            self._record_gap(self.last_seq + 1, seq - 1)
        self.last_seq = seq

    def remember(self, seq: int, content: tuple[object, ...], extra: dict[str, Any]) -> None:
        self.seen[seq] = (content, extra)

    def reconciled(self, gap_ids: frozenset[int]) -> None:
        """These gaps were reconciled from a snapshot just now: a late seq in them is refused from here on."""
        for gap in self.gaps:
            if gap.pk in gap_ids:
                gap.reconciled_at = self.at

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
