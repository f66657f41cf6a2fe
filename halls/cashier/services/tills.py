"""Tills (cajas), made, changed and retired by the operator; each change audited."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from halls.access import require_role
from halls.cashier.models import CashDevice, ShiftState, Till
from halls.errors import Conflict, InvalidInput
from halls.models import Role
from halls.services import audit

PRINTER_SCHEME = "tcp://"


def checked(name: str, printer: str) -> tuple[str, str]:
    name, printer = name.strip(), printer.strip()
    if not name:
        raise InvalidInput(_("A till needs a name."), code="name_required")
    if printer and not printer.startswith(PRINTER_SCHEME):
        raise InvalidInput(
            _('The printer is "tcp://host:port" (an ESC/POS printer on the network), or empty for PDFs.'),
            code="bad_printer",
        )
    return name, printer


def _saved(till: Till) -> Till:
    try:
        with transaction.atomic():  # a savepoint: a taken name leaves nothing written
            till.save()
    except IntegrityError as exc:
        raise Conflict(
            _("The venue already has a till named %(name)s.") % {"name": till.name}, code="till_name_taken"
        ) from exc
    return till


def create_till(*, venue_id: int, name: str, printer: str = "", actor: User) -> Till:
    require_role(actor, venue_id, Role.OPERATOR)
    name, printer = checked(name, printer)
    with transaction.atomic():
        till = _saved(Till(venue_id=venue_id, name=name, printer=printer))
        audit.record(
            venue_id=venue_id,
            actor=actor,
            action="cashier.till_created",
            obj=till,
            data={"name": name, "printer": printer},
        )
    return till


def update_till(*, till: Till, name: str, printer: str, actor: User) -> Till:
    require_role(actor, till.venue_id, Role.OPERATOR)
    name, printer = checked(name, printer)
    with transaction.atomic():
        before = {"name": till.name, "printer": till.printer}
        till.name, till.printer = name, printer
        _saved(till)
        audit.record(
            venue_id=till.venue_id,
            actor=actor,
            action="cashier.till_changed",
            obj=till,
            data={"before": before, "after": {"name": name, "printer": printer}},
        )
    return till


def retire_till(*, till: Till, actor: User) -> Till:
    """Take a till out of service (no shift opens on it); refused while a shift is open on it."""
    require_role(actor, till.venue_id, Role.OPERATOR)
    with transaction.atomic():
        if till.shifts.filter(state=ShiftState.OPEN).exists():
            raise Conflict(
                _("Till %(till)s has an open shift: close it first.") % {"till": till.name},
                code="till_in_use",
            )
        till.active = False
        till.save(update_fields=["active"])
        audit.record(
            venue_id=till.venue_id,
            actor=actor,
            action="cashier.till_retired",
            obj=till,
            data={"name": till.name},
        )
    return till


def update_device(*, device: CashDevice, name: str, active: bool, actor: User) -> CashDevice:
    """Rename a cash device or take it out of service (its registration and token are made elsewhere)."""
    require_role(actor, device.venue_id, Role.OPERATOR)
    name = name.strip()
    if not name:
        raise InvalidInput(_("A device needs a name."), code="name_required")
    with transaction.atomic():
        before = {"name": device.name, "active": device.active}
        device.name, device.active = name, active
        try:
            with transaction.atomic():
                device.save(update_fields=["name", "active"])
        except IntegrityError as exc:
            raise Conflict(
                _("The venue already has a device named %(name)s.") % {"name": name},
                code="device_name_taken",
            ) from exc
        audit.record(
            venue_id=device.venue_id,
            actor=actor,
            action="cashier.device_changed",
            obj=device,
            data={"before": before, "after": {"name": name, "active": active}},
        )
    return device
