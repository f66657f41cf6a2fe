"""Tell a machine something (lock, unlock) over its connection: a channel-layer send to the group
``machine.<id>`` its consumer joined, after the caller's transaction commits (never before: a machine
must not unlock for a payment that rolls back). Delivery is at most once; a machine that misses an
unlock learns its state from the next ``welcome``."""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

log = logging.getLogger("hall.machines")

# The message type the consumer implements as ``machine_push``; the payload goes to the board as is.
MESSAGE_TYPE = "machine.push"


def group_name(machine_id: int) -> str:
    return f"machine.{machine_id}"


# The consumer's ``machine_relink``: the machine joined or left a link group, follow the new one.
RELINK_TYPE = "machine.relink"


def _send(machine_id: int, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group_name(machine_id), message)
    except Exception:
        log.exception("could not send %s to machine %s", message.get("type"), machine_id)


def send_now(machine_id: int, payload: dict[str, Any]) -> None:
    _send(machine_id, {"type": MESSAGE_TYPE, "payload": payload})


def relink(machine_id: int) -> None:
    """After commit, have the machine's connection follow the link group it is in now."""
    transaction.on_commit(lambda: _send(machine_id, {"type": RELINK_TYPE}))


# The consumer's ``machine_close``: close the machine's socket with ``code`` (its token was rotated, or it
# was taken out of service). Sent after commit; the connect re-checks both, so a reconnect is refused.
CLOSE_TYPE = "machine.close"
CLOSE_TOKEN_REVOKED = 4401  # as a refused token: the board needs its new one
CLOSE_OUT_OF_SERVICE = 4403


def close_connection(machine_id: int, code: int) -> None:
    """After commit, close the machine's open socket (on whichever web process holds it)."""
    transaction.on_commit(lambda: _send(machine_id, {"type": CLOSE_TYPE, "code": code}))


async def _send_many(layer: Any, machine_ids: list[int], message: dict[str, Any]) -> None:
    for machine_id in machine_ids:
        try:
            await layer.group_send(group_name(machine_id), message)
        except Exception:  # one machine's failure does not keep the message from the others
            log.exception("could not send %s to machine %s", message.get("type"), machine_id)


def send_many_now(machine_ids: list[int], payload: dict[str, Any]) -> None:
    """`payload` to each machine, all from one event loop (one channel-layer connection, not one each)."""
    layer = get_channel_layer()
    if layer is None or not machine_ids:
        return
    async_to_sync(_send_many)(layer, machine_ids, {"type": MESSAGE_TYPE, "payload": payload})


def to_machines(machine_ids: list[int], payload: dict[str, Any]) -> None:
    """`payload` to every machine of `machine_ids` once the current transaction commits."""
    if machine_ids:
        ids = list(machine_ids)
        transaction.on_commit(lambda: send_many_now(ids, payload))


def to_machine(machine_id: int, payload: dict[str, Any]) -> None:
    """Send `payload` to the machine once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: send_now(machine_id, payload))
