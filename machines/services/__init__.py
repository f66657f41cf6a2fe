"""The machine services: every write in one transaction, the machine row locked first (then, for a hit,
the pool's locks; every lock through locks.py, in the order of halls.locks), audit rows via
halls.services.audit for registry, link, state and hand-pay changes (plays are their own append-only
record), and messages to machines on commit (push.to_machine).

- registry: register_machine, rotate_token, set_machine_state, authenticate
- links: create_link_group, join_link, leave_link
- gateway: receive (the hot path), hello, heartbeat, connected, disconnected; behind it gateway_sequence
  (idempotency, gaps), gateway_batch (the writes), gateway_hello (welcomes), gateway_rows (the row statements)
- handpay: pay_hand_pay
- liveness: mark_silent_machines_offline (the link watch)
- broadcast: progressive_broadcasts
- push: to_machine (channel-layer group ``machine.<id>``, message type ``machine.push``)
- reconciliation: reconcile_snapshot (inside the gateway), reconciliation (the report)
- readmodels: floor_view, pending_hand_pays
- locks: lock_machine, lock_machines, lock_link_group, lock_link_member, lock_hit

The functions are also importable from this package (``from machines.services import receive``). Note
``machines.services.reconciliation`` is then the report FUNCTION (the package attribute shadows the
module): import the module's names directly (``from machines.services.reconciliation import ...``).
"""

from machines.services.broadcast import progressive_broadcasts
from machines.services.gateway import connected, disconnected, heartbeat, hello, receive
from machines.services.handpay import pay_hand_pay
from machines.services.links import create_link_group, join_link, leave_link
from machines.services.liveness import mark_silent_machines_offline
from machines.services.push import to_machine
from machines.services.readmodels import floor_view, pending_hand_pays
from machines.services.reconciliation import reconciliation
from machines.services.registry import authenticate, register_machine, rotate_token, set_machine_state

__all__ = [
    "authenticate",
    "connected",
    "create_link_group",
    "disconnected",
    "floor_view",
    "heartbeat",
    "hello",
    "join_link",
    "leave_link",
    "mark_silent_machines_offline",
    "pay_hand_pay",
    "pending_hand_pays",
    "progressive_broadcasts",
    "receive",
    "reconciliation",
    "register_machine",
    "rotate_token",
    "set_machine_state",
    "to_machine",
]
