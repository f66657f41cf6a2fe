"""The machine registry: registration (the device token is shown once), token rotation, state changes
by staff, and the device check the gateway's doors use."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from halls import money
from halls.actors import Actor
from halls.errors import Conflict, InvalidInput
from halls.models import Venue
from machines import protocol
from machines.models import LockReason, Machine, MachineState, MachineType, Modality, ProgressiveHit
from machines.services import push
from machines.services.audit import describe, now, record
from machines.services.locks import lock_machine

# URL- and header-safe: it appears in ws/machines/<asset>/ and in "Device <asset>:<token>".
ASSET = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")
MAX_DENOMINATION = Decimal("999999.99")  # Decimal(8, 2)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


def _text(name: str, value: Any, *, max_length: int, required: bool = True) -> str:
    text = str(value or "").strip()
    if required and not text:
        raise InvalidInput(
            _("A machine needs its %(field)s.") % {"field": name.replace("_", " ")},
            code="required",
            field=name,
        )
    if len(text) > max_length:
        raise InvalidInput(
            _("%(name)s is at most %(max_length)s characters.") % {"name": name, "max_length": max_length},
            code="too_long",
            field=name,
        )
    return text


def _denomination(value: Any) -> Decimal:
    try:
        amount = money.parse(
            "denomination", value, places=money.CENT_PLACES, positive=True, maximum=MAX_DENOMINATION
        )
    except money.MoneyTypeError:
        raise InvalidInput(
            _("The denomination is an exact amount, not a float."), code="bad_denomination"
        ) from None
    except money.NotAnAmount:
        raise InvalidInput(
            _("Denomination %(value)r is not an amount.") % {"value": value}, code="bad_denomination"
        ) from None
    except money.MoneyError:
        raise InvalidInput(
            _("The denomination is a positive amount in whole cents, got %(value)s.") % {"value": value},
            code="bad_denomination",
        ) from None
    return money.cents(amount)


def _positions(modality: str, positions: Any) -> int:
    if isinstance(positions, bool) or not isinstance(positions, int) or positions < 1 or positions > 1000:
        raise InvalidInput(_("positions is a whole number from 1."), code="bad_positions")
    if modality == Modality.INDIVIDUAL and positions != 1:
        raise InvalidInput(
            _("An individual machine has 1 position, not %(positions)s.") % {"positions": positions},
            code="bad_positions",
        )
    if modality == Modality.TWO_PLAYER and positions != 2:
        raise InvalidInput(
            _("A two-player machine has 2 positions, not %(positions)s.") % {"positions": positions},
            code="bad_positions",
        )
    if modality == Modality.MULTI_POSITION and positions < 2:
        raise InvalidInput(_("A multi-position machine has at least 2 positions."), code="bad_positions")
    return positions


def register_machine(
    *,
    venue: Venue,
    asset_number: str,
    machine_type: str,
    modality: str,
    manufacturer: str,
    model: str,
    serial: str,
    denomination: Decimal,
    paytable_id: str,
    software_version: str,
    location: str,
    positions: int = 1,
    actor: Actor,
) -> tuple[Machine, str]:
    """A new machine, in service and offline until its board connects; returns it with its device token
    (only its hash is kept: the token is shown this once)."""
    asset = str(asset_number or "").strip()
    if not ASSET.fullmatch(asset):
        raise InvalidInput(
            _(
                "The asset number is 1-40 letters, digits, '.', "
                "'_' or '-' (it names the machine on the wire)."
            ),
            code="bad_asset_number",
        )
    if machine_type not in MachineType.values:
        raise InvalidInput(
            _("The machine type is B or C, not %(machine_type)r.") % {"machine_type": machine_type},
            code="bad_machine_type",
        )
    if modality not in Modality.values:
        raise InvalidInput(
            _("Modality is one of %(modalities)s, not %(modality)r.")
            % {"modalities": ", ".join(Modality.values), "modality": modality},
            code="bad_modality",
        )
    fields = {
        "manufacturer": _text("manufacturer", manufacturer, max_length=80),
        "model": _text("model", model, max_length=80),
        "serial": _text("serial", serial, max_length=80),
        "paytable_id": _text("paytable_id", paytable_id, max_length=60),
        "software_version": _text("software_version", software_version, max_length=protocol.MAX_TEXT),
        "location": _text("location", location, max_length=120, required=False),
    }
    amount = _denomination(denomination)
    count = _positions(modality, positions)
    token = new_token()
    try:
        with transaction.atomic():
            machine = Machine.objects.create(
                venue=venue,
                asset_number=asset,
                machine_type=machine_type,
                modality=modality,
                positions=count,
                denomination=amount,
                token_hash=hash_token(token),
                created_at=now(),
                **fields,
            )
            record(
                venue.pk,
                actor,
                "machine.registered",
                machine,
                {
                    **describe(machine),
                    "machine_type": machine_type,
                    "modality": modality,
                    "positions": count,
                    "denomination": amount,
                    **fields,
                },
            )
    except IntegrityError as exc:
        if Machine.objects.filter(venue=venue, asset_number=asset).exists():
            raise Conflict(
                _("Asset number %(asset)s is already registered here.") % {"asset": asset}, code="asset_taken"
            ) from exc
        raise
    return machine, token


def rotate_token(*, machine: Machine, actor: Actor) -> str:
    """A new device token (the old one stops working at once); returned this once."""
    token = new_token()
    with transaction.atomic():
        locked = lock_machine(machine.pk)
        locked.token_hash = hash_token(token)
        locked.save(update_fields=["token_hash"])
        record(locked.venue_id, actor, "machine.token_rotated", locked, describe(locked))
        push.close_connection(locked.pk, push.CLOSE_TOKEN_REVOKED)  # the old token's socket goes at once
    machine.token_hash = locked.token_hash
    return token


def set_machine_state(*, machine: Machine, state: str, reason: str = "", actor: Actor) -> Machine:
    """Staff put a machine in service, lock it (an operator lock) or take it out of service. `reason` is
    recorded with the change. A machine with an unpaid hit stays locked until the cashier pays it."""
    if state not in MachineState.values:
        raise InvalidInput(
            _("State is one of %(states)s.") % {"states": ", ".join(MachineState.values)},
            code="bad_state",
        )
    note = str(reason or "").strip()[:200]
    with transaction.atomic():
        locked = lock_machine(machine.pk)
        if (
            state == MachineState.IN_SERVICE
            and ProgressiveHit.objects.filter(machine=locked, paid_at__isnull=True).exists()
        ):
            raise Conflict(
                _("Machine %(asset_number)s has a progressive hit to pay by hand first.")
                % {"asset_number": locked.asset_number},
                code="hand_pay_pending",
            )
        before = describe(locked)
        lock_reason = LockReason.OPERATOR if state == MachineState.LOCKED else LockReason.NONE
        if state == MachineState.LOCKED and locked.lock_reason == LockReason.HAND_PAY:
            lock_reason = LockReason.HAND_PAY  # the hand pay still decides when it unlocks
        if (locked.state, locked.lock_reason) != (state, lock_reason):
            locked.state = state
            locked.lock_reason = lock_reason
            if state != MachineState.LOCKED:
                locked.operator_locked_at = None
            elif locked.operator_locked_at is None:
                locked.operator_locked_at = now()  # a game in progress may end after it
            locked.save(update_fields=["state", "lock_reason", "operator_locked_at"])
            record(
                locked.venue_id,
                actor,
                "machine.state_changed",
                locked,
                {**describe(locked), "before": before, "reason": note},
            )
            if state == MachineState.IN_SERVICE:
                push.to_machine(locked.pk, protocol.unlock())
            else:
                push.to_machine(locked.pk, protocol.lock(LockReason.OPERATOR.value))
            if state == MachineState.OUT_OF_SERVICE:
                # Out of service, it keeps no socket: closed now (after the lock), refused on reconnect.
                push.close_connection(locked.pk, push.CLOSE_OUT_OF_SERVICE)
    machine.state, machine.lock_reason = locked.state, locked.lock_reason
    return locked


def authenticate(*, venue_id: int | None, asset_number: str, token: str) -> Machine | None:
    """The machine whose asset number and device token match, or None. The token's hash is compared in
    constant time; without a venue, the asset number may match machines of several venues."""
    if not isinstance(token, str) or not token or len(token) > 200 or not isinstance(asset_number, str):
        return None
    digest = hash_token(token)
    candidates = Machine.objects.filter(asset_number=asset_number.strip())
    if venue_id is not None:
        candidates = candidates.filter(venue_id=venue_id)
    found = None
    for machine in candidates[:20]:
        if hmac.compare_digest(machine.token_hash, digest):
            found = machine
    if found is None:
        hmac.compare_digest(digest, digest)  # roughly the same work for an unknown asset number
    return found
