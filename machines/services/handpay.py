"""Hand pays: an attendant pays a machine's progressive hit at the cashier; the machine unlocks once no
other hit of it waits to be paid."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext as _

from halls import access
from halls.actors import Actor, actor_label
from halls.errors import Conflict, InvalidInput
from halls.models import Role
from machines import protocol
from machines.models import PAYMENT_FIELDS, LockReason, MachineState, ProgressiveHit
from machines.services import push
from machines.services.common import describe, now, record
from machines.services.locks import lock_hit, lock_machine


def pay_hand_pay(*, hit: ProgressiveHit, actor: Actor, payment_ref: str = "") -> ProgressiveHit:
    """Record that `actor` (a cashier or operator of the machine's venue) paid `hit` by hand: who, when,
    the payment reference. Unlocks the machine (and tells it "unlock") when no other hit is pending."""
    ref = str(payment_ref or "").strip()
    if len(ref) > 120:
        raise InvalidInput(_("The payment reference is at most 120 characters."), code="bad_payment_ref")
    if not isinstance(actor, User):
        raise InvalidInput(_("A hand pay is paid by a person: a cashier."), code="cashier_required")
    with transaction.atomic():
        machine = lock_machine(hit.machine_id)
        access.require_role(actor, machine.venue_id, Role.CASHIER)
        row = lock_hit(hit.pk)
        if row.paid_at is not None:
            raise Conflict(
                _("This hit was paid at %(paid_at)s by %(paid_by_label)s.")
                % {"paid_at": format(row.paid_at, "%Y-%m-%d %H:%M:%S"), "paid_by_label": row.paid_by_label},
                code="already_paid",
            )
        at = now()
        row.paid_at = at
        row.paid_by = actor
        row.paid_by_label = actor_label(actor)
        row.payment_ref = ref
        row.save(update_fields=list(PAYMENT_FIELDS))
        others = ProgressiveHit.objects.filter(machine=machine, paid_at__isnull=True).exists()
        unlocked = (
            not others and machine.state == MachineState.LOCKED and machine.lock_reason == LockReason.HAND_PAY
        )
        if unlocked:
            machine.state, machine.lock_reason = MachineState.IN_SERVICE, LockReason.NONE
            machine.save(update_fields=["state", "lock_reason"])
            push.to_machine(machine.pk, protocol.unlock())
        record(
            machine.venue_id,
            actor,
            "machine.hand_pay_paid",
            row,
            {
                **describe(machine),
                "hit": row.pk,
                "seq": row.seq,
                "level_name": row.level.name,
                "amount": row.amount,
                "payment_ref": ref,
                "unlocked": unlocked,
            },
        )
    hit.paid_at, hit.paid_by_id, hit.paid_by_label, hit.payment_ref = at, actor.pk, row.paid_by_label, ref
    return row
