"""Hellos: a board (re)connected. Its link-lost lock ends (it has resynchronised), an unapproved software
version raises an alert, and it gets the welcome: the machine as the batch left it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jackpots.services.readmodels import meters
from machines import protocol
from machines.models import AlertKind, LinkGroup, LockReason, MachineAlert, MachineState
from machines.services.audit import GATEWAY, describe, record
from machines.services.gateway_rows import Row


@dataclass
class Greeting:
    row: Row
    hello: protocol.Hello  # the machine's last in the batch
    replies: list[dict[str, Any]] = field(default_factory=list)  # filled with the welcome after the batch


def resync(greeting: Greeting, at: datetime) -> None:
    """The board said hello: a link-lost lock ends (it has resynchronised; `welcome` clears the link-lost
    alerts); an unapproved software version raises an alert."""
    row, message = greeting.row, greeting.hello
    machine = row.machine
    if row.state == MachineState.LOCKED and row.lock_reason == LockReason.LINK_LOST:
        row.state, row.lock_reason = MachineState.IN_SERVICE, LockReason.NONE
        data = {
            **describe(machine),
            "state": row.state,
            "lock_reason": "",
            "machine_last_seq": message.last_seq,
        }
        record(machine.venue_id, f"{GATEWAY}:{machine.asset_number}", "machine.resynchronised", machine, data)
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
                raised_at=at,
            )


def welcome(greetings: Sequence[Greeting], at: datetime) -> None:
    """The hellos of a batch (a reconnection storm comes as batches of them): their link-lost alerts cleared
    in one UPDATE, the link groups' codes and the pools' levels read once, each welcome filled."""
    rows = [g.row for g in greetings]
    MachineAlert.objects.filter(
        machine_id__in=[row.machine.pk for row in rows], kind=AlertKind.LINK_LOST, cleared_at__isnull=True
    ).update(cleared_at=at)
    group_ids = {row.group_id for row in rows if row.group_id is not None}
    codes = dict(LinkGroup.objects.filter(pk__in=group_ids).values_list("pk", "code")) if group_ids else {}
    pool_ids = {row.pool_id for row in rows if row.pool_id is not None}
    levels = {pool_id: levels_of(meter) for pool_id, meter in meters.pool_meters(pool_ids).items()}
    for greeting in greetings:
        row, machine = greeting.row, greeting.row.machine
        welcome = {
            "type": "welcome",
            "machine": machine.asset_number,
            "state": machine.state,
            "lock_reason": machine.lock_reason,
            "last_seq": machine.last_seq,
            "group": codes.get(row.group_id) if row.group_id is not None else None,
            "levels": levels.get(row.pool_id, []) if row.pool_id is not None else [],
        }
        for reply in greeting.replies:
            reply.update(welcome)


def levels_of(meter: meters.PoolMeter) -> list[dict[str, str]]:
    return [{"level": level.name, "amount": str(level.amount)} for level in meter.levels]
