"""The device gateway: what machines' interface boards send, taken in ONE transaction per batch.

`receive_many` takes the frames of many machines at once (group commit: the WebSocket door batches the
frames of all its connections), `receive` is a batch of one; the rules are per machine and the same
either way. Each message goes through sequencing (gateway_sequence: idempotency by machine and seq, gaps,
replays), then the machine's state (gateway_batch.Batch.refusal), then into the batch that writes it
(gateway_batch); gateway_rows holds the hot path's statements.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction

from jackpots.services.readmodels import meters
from machines import protocol
from machines.models import Machine
from machines.services import gateway_rows
from machines.services.audit import now
from machines.services.gateway_batch import Batch
from machines.services.gateway_hello import levels_of
from machines.services.gateway_rows import Row
from machines.services.gateway_sequence import Sequencer

log = logging.getLogger("hall.machines.gateway")

# A heartbeat refreshes last_seen_at at most this often (the watch needs seconds, not milliseconds).
HEARTBEAT_WRITE_EVERY = timedelta(seconds=1)


@dataclass
class Call:
    """One machine's messages in a batch: its seqs, and its row with what the batch changes on it."""

    seqs: Sequencer
    row: Row


def apply_message(batch: Batch, call: Call, message: protocol.Message) -> dict[str, Any]:
    """One message: its reply (an ``ack``; for a hello the welcome, filled in when the batch is written)."""
    row, seqs = call.row, call.seqs
    if isinstance(message, protocol.Heartbeat):
        row.touched = True
        return protocol.ack(None, "accepted")
    if isinstance(message, protocol.Hello):
        row.touched = True
        return batch.hello(row, message)
    seq, content = message.seq, protocol.content(message)
    reply = seqs.replay(seq, content)
    if reply is not None:
        if isinstance(message, protocol.Hit) and reply["status"] == "duplicate":
            batch.answer_hit(row, seq, reply)  # a retry of a hit in this batch: the same amount
        return reply
    late = seqs.is_late(seq)
    reply = (seqs.late_refusal(seq) if late else None) or batch.refusal(row, message)
    if reply is not None:
        return reply
    if not late:
        seqs.advance(seq)
    row.touched = True
    extra: dict[str, Any] = {}
    code = ""
    if isinstance(message, protocol.Play):
        code = batch.play(row, message)
    elif isinstance(message, protocol.Event):
        batch.event(row, message)
    elif isinstance(message, protocol.Meters):
        seqs.reconciled(batch.meters(row, message, late))
    else:
        extra = batch.hit(row, message)
    seqs.remember(seq, content, extra)
    reply = protocol.ack(seq, "accepted", code, "", **extra)
    if isinstance(message, protocol.Hit):
        batch.answer_hit(row, seq, reply)
    return reply


def _unknown(message: protocol.Message) -> dict[str, Any]:
    seq = getattr(message, "seq", None)
    return protocol.ack(seq, "rejected", "unknown_machine", "This machine is not registered.")


def _failed(message: protocol.Message) -> dict[str, Any]:
    seq = getattr(message, "seq", None)
    return protocol.ack(seq, "rejected", "server_error", "Not taken: send it again later.")


def _receive_frames(
    frames: Sequence[tuple[int, Sequence[protocol.Message]]], at: datetime
) -> list[list[dict[str, Any]]]:
    """The frames in one transaction. Frames of one machine (it may appear twice: a board that reconnected)
    are one call, taken in the frames' order."""
    wanted: dict[int, list[protocol.Message]] = {}
    for machine_id, messages in frames:
        if messages:
            wanted.setdefault(machine_id, []).extend(messages)
    if not wanted:
        return [[] for _ in frames]
    with transaction.atomic():
        machines = gateway_rows.lock_machines(list(wanted))
        calls = {
            pk: Call(Sequencer.open(machines[pk], at, wanted[pk]), Row.of(machines[pk]))
            for pk in sorted(machines)
        }
        batch = Batch(at)
        replies: list[list[dict[str, Any]]] = []
        for machine_id, messages in frames:
            call = calls.get(machine_id)
            if call is None:
                replies.append([_unknown(message) for message in messages])
            else:
                replies.append([apply_message(batch, call, message) for message in messages])
        last_seqs = {pk: call.seqs.last_seq for pk, call in calls.items()}
        batch.finish([call.row for call in calls.values()], last_seqs)
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
        return _receive_frames(batch, at)
    except Exception:
        if len(batch) <= 1:
            raise
        log.warning("a batch of %s frames failed: taking them one by one", len(batch), exc_info=True)
    replies: list[list[dict[str, Any]]] = []
    for machine_id, messages in batch:
        try:
            replies.append(_receive_frames([(machine_id, messages)], at)[0])
        except Exception:
            log.exception("gateway call failed for machine %s", machine_id)
            replies.append([_failed(message) for message in messages])
    return replies


def receive(
    *, machine_id: int, messages: Sequence[protocol.Message], received_at: datetime | None = None
) -> list[dict[str, Any]]:
    """Take a machine's messages in order, in one transaction; a reply per message, in order (an ``ack``;
    a ``welcome`` for a hello)."""
    return receive_many([(machine_id, messages)], received_at)[0]


# --- connection life -------------------------------------------------------------------------------------


def levels_payload(pool_id: int | None) -> list[dict[str, str]]:
    if pool_id is None:
        return []
    meter = meters.pool_meters([pool_id]).get(pool_id)
    return levels_of(meter) if meter is not None else []


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


def mark_heard(*, machine_ids: Sequence[int], received_at: datetime | None = None) -> None:
    """These machines' connections carried frames just now (their batches may still be waiting): they
    are alive, whatever the gateway's backlog. One statement; each row written at most once a second
    (HEARTBEAT_WRITE_EVERY), and rows a batch holds right now are skipped (that batch writes them)."""
    if not machine_ids:
        return
    at = received_at or now()
    gateway_rows.mark_heard(machine_ids, at, at - HEARTBEAT_WRITE_EVERY)


def connected(*, machine_id: int, received_at: datetime | None = None) -> None:
    """Its connection opened (it says hello next)."""
    at = received_at or now()
    Machine.objects.filter(pk=machine_id).update(online=True, last_seen_at=at)


def disconnected(*, machine_id: int) -> None:
    """Its connection closed: offline at once. If it stays silent, the link watch locks it (link_lost)."""
    Machine.objects.filter(pk=machine_id).update(online=False)
