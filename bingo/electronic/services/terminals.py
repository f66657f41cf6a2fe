"""Player terminals (EB-05.f): registered as cash devices of kind "terminal" (their token, their messages),
each playing one speciality; the operator rotates a terminal's token, takes it out of service and back, or
retires it. `playable` is the one rule of who may buy: in service, the speciality's session open, and the
terminal verified by that session's verification (EB-05.e: a terminal that failed cannot play).

The verification (services.verification) sets `verified_by` and the state "failed"; this module never does.
"""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext as _

from bingo.electronic.models import Speciality, Terminal, TerminalState
from bingo.electronic.services.locks import lock_terminal
from bingo.electronic.services.steps import tell_terminal
from halls.actors import Actor
from halls.cashier.models import DeviceKind
from halls.cashier.services import devices
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import EventType, TerminalStateChanged
from halls.services import audit

# What the operator may set; "failed" is the verification's to set (and to lift, by passing one).
SETTABLE = (TerminalState.IN_SERVICE, TerminalState.OUT_OF_SERVICE)


def register_terminal(*, speciality: Speciality, name: str, actor: Actor) -> tuple[Terminal, str]:
    """A new terminal of `speciality`, in service (it plays once a verification has passed it), with its
    device token: shown this once, only its hash is kept."""
    with transaction.atomic():
        device, token = devices.register_device(
            venue_id=speciality.venue_id, name=name, kind=DeviceKind.TERMINAL, actor=actor
        )
        terminal = Terminal.objects.create(
            device=device, speciality=speciality, state=TerminalState.IN_SERVICE
        )
        audit.record(
            venue_id=speciality.venue_id,
            actor=actor,
            action="electronic.terminal_registered",
            obj=terminal,
            data={"device": device.pk, "name": device.name, "speciality": speciality.pk},
        )
    return terminal, token


def rotate_token(*, terminal: Terminal, actor: Actor) -> str:
    """A new device token for the terminal; the old one stops working at once. Returned this once."""
    return devices.rotate_token(device=terminal.device, actor=actor)


def _change_state(terminal: Terminal, state: TerminalState, reason: str, actor: Actor) -> Terminal:
    """Inside a transaction, the terminal locked: the new state audited and told to the terminal."""
    before = terminal.state
    if before == state:
        return terminal
    Terminal.objects.filter(pk=terminal.pk).update(state=state)
    terminal.state = state
    audit.record(
        venue_id=terminal.speciality.venue_id,
        actor=actor,
        action="electronic.terminal_state",
        obj=terminal,
        data={"from": before, "to": str(state), "reason": reason},
    )
    tell_terminal(
        terminal,
        EventType.TERMINAL_STATE,
        TerminalStateChanged(terminal=terminal.pk, state=str(state), reason=reason),
    )
    return terminal


def set_state(*, terminal: Terminal, state: str, reason: str = "", actor: Actor) -> Terminal:
    """Take the terminal out of service or put it back (the operator). A terminal that failed its
    verification goes back into service only by passing one (409 terminal_failed); the same state again
    changes nothing."""
    if state not in SETTABLE:
        raise InvalidInput(
            _("A terminal's state is set to one of %(states)s.") % {"states": ", ".join(SETTABLE)},
            code="bad_state",
            field="state",
        )
    reason = str(reason or "").strip()[:200]
    with transaction.atomic():
        locked = lock_terminal(terminal.pk)
        if not locked.device.active:
            raise Conflict(
                _("Terminal %(name)s is retired.") % {"name": locked.device.name}, code="device_retired"
            )
        if locked.state == TerminalState.FAILED and state == TerminalState.IN_SERVICE:
            raise Conflict(
                _("Terminal %(name)s failed its verification: it returns to service by passing one.")
                % {"name": locked.device.name},
                code="terminal_failed",
            )
        return _change_state(locked, TerminalState(state), reason, actor)


def retire_terminal(*, terminal: Terminal, actor: Actor) -> Terminal:
    """Retire the terminal for good: out of service and its token stops working (its purchases stay)."""
    with transaction.atomic():
        locked = lock_terminal(terminal.pk)
        _change_state(locked, TerminalState.OUT_OF_SERVICE, "retired", actor)
        devices.retire_device(device=locked.device, actor=actor)
    return locked
