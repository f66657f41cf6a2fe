"""Cash devices (a terminal's bill reader, a ticket kiosk): registered by the operator with a device token
(shown once; its sha256 kept), the token rotated, the device retired; and their messages.

A device message carries the device's own sequence number: the first answer is kept (DeviceMessage, unique
per device and seq), a retry answers it again and writes nothing, the same seq with another body is
refused (`seq_reused`). A device reaches only its own venue's cards (another's: 404 unknown_card).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import db_retry, fanout, money
from halls.actors import Actor
from halls.cashier import ledger
from halls.cashier.models import CashDevice, DeviceKind, DeviceMessage, TxKind
from halls.cashier.services import admitted, player_cards
from halls.cashier.services import ledger as books
from halls.cashier.services.locks import lock_player_card
from halls.errors import Conflict, InvalidInput
from halls.services import audit

NOTES_IN = "notes_in"
MAX_SEQ = 2**63 - 1


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def socket_ident(device_id: int, token_hash: str) -> str:
    """What the screen hubs (halls.fanout) know a device's socket by: the device and the hash of the token
    it came with. A rotation or a retirement re-checks that ident's sockets at once."""
    return f"{device_id}:{token_hash}"


def new_token() -> str:
    return secrets.token_urlsafe(32)


def _name(value: Any) -> str:
    name = str(value or "").strip()
    if not name:
        raise InvalidInput(_("A device needs a name."), code="required", field="name")
    if len(name) > 80:
        raise InvalidInput(_("A device's name is at most 80 characters."), code="too_long", field="name")
    return name


def _describe(device: CashDevice) -> dict[str, Any]:
    return {"name": device.name, "kind": device.kind}


def register_device(*, venue_id: int, name: str, kind: str, actor: Actor) -> tuple[CashDevice, str]:
    """A new cash device in service; returns it with its device token (only the hash is kept: the token
    is shown this once)."""
    if kind not in DeviceKind.values:
        raise InvalidInput(
            _("The device kind is one of %(kinds)s.") % {"kinds": ", ".join(DeviceKind.values)},
            code="bad_kind",
            field="kind",
        )
    label = _name(name)
    token = new_token()
    with transaction.atomic():
        try:
            with transaction.atomic():
                device = CashDevice.objects.create(
                    venue_id=venue_id, name=label, kind=kind, token_hash=hash_token(token)
                )
        except IntegrityError:
            raise Conflict(
                _("This venue already has a device named %(name)s.") % {"name": label},
                code="device_name_taken",
                field="name",
            ) from None
        books.device_account(device)
        audit.record(
            venue_id=venue_id,
            actor=actor,
            action="cashier.device_registered",
            obj=device,
            data=_describe(device),
        )
    return device, token


def rotate_token(*, device: CashDevice, actor: Actor) -> str:
    """A new device token: the old one stops working at once. Returned this once."""
    if not device.active:
        raise Conflict(_("Device %(name)s is retired.") % {"name": device.name}, code="device_retired")
    token = new_token()
    with transaction.atomic():
        # Its open sockets (a terminal's) close once this commits, and one being admitted is refused.
        fanout.recheck_on_commit([socket_ident(device.pk, device.token_hash)])
        CashDevice.objects.filter(pk=device.pk).update(token_hash=hash_token(token))
        device.token_hash = hash_token(token)
        audit.record(
            venue_id=device.venue_id,
            actor=actor,
            action="cashier.device_token_rotated",
            obj=device,
            data=_describe(device),
        )
    return token


def retire_device(*, device: CashDevice, actor: Actor) -> CashDevice:
    """Take the device out of service for good: its token stops working. The notes in its stacker stay
    on its account until they are collected at a till. Retiring a retired device changes nothing."""
    with transaction.atomic():
        if not CashDevice.objects.filter(pk=device.pk, active=True).update(active=False):
            device.active = False
            return device
        device.active = False
        fanout.recheck_on_commit([socket_ident(device.pk, device.token_hash)])
        audit.record(
            venue_id=device.venue_id,
            actor=actor,
            action="cashier.device_retired",
            obj=device,
            data={**_describe(device), "stacker": money.text(books.device_account(device).balance)},
        )
    return device


def authenticate(*, device_id: int, token: str) -> CashDevice | None:
    """The device in service whose token this is, or None (the hash compared in constant time)."""
    if not isinstance(token, str) or not token or len(token) > 200:
        return None
    digest = hash_token(token)
    device = CashDevice.objects.filter(pk=device_id, active=True).first()
    if device is None:
        hmac.compare_digest(digest, digest)  # about the same work for an unknown device
        return None
    return device if hmac.compare_digest(device.token_hash, digest) else None


# --- messages -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    result: dict[str, Any]
    replayed: bool  # a retry: the first answer, nothing written


def _seq(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEQ:
        raise InvalidInput(_("seq is a whole number from 0."), code="bad_seq", field="seq")
    return value


def _answered(device: CashDevice, seq: int, body: dict[str, str]) -> Answer | None:
    previous = DeviceMessage.objects.filter(device=device, seq=seq).first()
    if previous is None:
        return None
    if previous.kind != NOTES_IN or previous.body != body:
        raise Conflict(
            _("Message %(seq)s of this device was another message.") % {"seq": seq},
            code="seq_reused",
            seq=seq,
        )
    return Answer(previous.result, replayed=True)


@db_retry.retried("cashier.notes_in")
def notes_in(*, device: CashDevice, seq: int, card: str, amount: Any) -> Answer:
    """The device's bill reader took `amount` in notes for `card` (its number or QR payload): the
    device's stacker is debited, the card credited (TxKind.DEVICE_CASH_IN, no shift). Once per seq. Refused
    card_blocked, and player_not_admitted where the venue's cards need their player admitted today."""
    seq = _seq(seq)
    cash = player_cards.amount_of(amount)
    number = player_cards.number_of(card)
    body = {"card": number, "amount": money.text(cash)}
    with transaction.atomic():
        answered = _answered(device, seq, body)
        if answered is not None:
            return answered
        found = player_cards.find_card(venue_id=device.venue_id, code=number)
        locked = lock_player_card(found.pk)
        player_cards.check_active(locked)
        admitted.check_card(locked)
        try:
            posted = books.post(
                venue_id=device.venue_id,
                kind=TxKind.DEVICE_CASH_IN,
                key=f"device:{device.pk}:seq:{seq}",
                legs=[
                    ledger.debit(books.device_account(device).pk, cash),
                    ledger.credit(books.card_account(locked).pk, cash),
                ],
                actor=device.name,
                device=device.name,
                data={"seq": seq, "card": number},
            )
        except Conflict as exc:
            if exc.code != "idempotency_key_reused":
                raise
            # The same seq posted at this instant by another request, for another card.
            raise Conflict(
                _("Message %(seq)s of this device was another message.") % {"seq": seq},
                code="seq_reused",
                seq=seq,
            ) from None
        result = {
            "seq": seq,
            "card": number,
            "amount": money.text(cash),
            "balance": money.text(player_cards.balance(locked)),
            "transaction": posted.transaction.pk,
        }
        try:
            with transaction.atomic():
                DeviceMessage.objects.create(
                    device=device,
                    seq=seq,
                    kind=NOTES_IN,
                    body=body,
                    result=result,
                    transaction=posted.transaction,
                    received_at=timezone.now(),
                )
        except IntegrityError:  # the same message, answered at this instant by another request
            answered = _answered(device, seq, body)
            if answered is None:
                raise
            return answered
        return Answer(result, replayed=False)
