"""Hand pays: a machine's progressive hit is a prize payable at the cashier (halls.cashier); paying it pays
the hit. The machine unlocks once no other hit of it waits to be paid.

There is one record of the payment: the cashier's payout (the ledger entry, the receipt). The machines'
side (who paid the hit, when, the reference; the unlock) is written by `pay_at_cashier`, the payer the
cashier calls for machine payables: it takes the machine's and the hit's locks (Rank.MACHINE, HIT), then
the cashier settles (SHIFT, PAYABLE, ACCOUNT), all in one transaction. `pay_hand_pay` (the machines API,
the hand-pay page) pays through the cashier too.
"""

from __future__ import annotations

import uuid

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext as _

from halls import access
from halls.actors import Actor, actor_label
from halls.cashier.models import Payable, PayoutMethod, PlayerCard
from halls.cashier.services import payables
from halls.cashier.services import readmodels as cashier_readmodels
from halls.errors import Conflict, InvalidInput
from halls.models import Role
from jackpots.models import Award
from machines import protocol
from machines.models import PAYMENT_FIELDS, LockReason, Machine, MachineState, ProgressiveHit
from machines.services import push
from machines.services.audit import describe, now, record
from machines.services.gateway_batch import create_hand_pay
from machines.services.locks import lock_hit, lock_machine


def hit_source(hit: ProgressiveHit) -> str:
    """The source of the hit's payable: its pool award, or the hit itself when it has none."""
    award_id = (
        Award.objects.filter(settlement_id=hit.settlement_id)
        .order_by("order")
        .values_list("pk", flat=True)
        .first()
        if hit.settlement_id
        else None
    )
    return (
        cashier_readmodels.machine_hit_source(hit.pk)
        if award_id is None
        else cashier_readmodels.pool_award_source(award_id)
    )


def _hit_of(payable: Payable) -> int:
    """The hit a machine payable pays."""
    kind, _sep, rest = payable.source.partition(":")
    if kind == "machines.hit":
        return int(rest)
    settlement = Award.objects.values_list("settlement_id", flat=True).get(pk=int(rest))
    return ProgressiveHit.objects.values_list("pk", flat=True).get(
        settlement_id=settlement, machine__venue_id=payable.venue_id
    )


def _already_paid(row: ProgressiveHit) -> Conflict:
    return Conflict(
        _("This hit was paid at %(paid_at)s by %(paid_by_label)s.")
        % {"paid_at": format(row.paid_at, "%Y-%m-%d %H:%M:%S"), "paid_by_label": row.paid_by_label},
        code="already_paid",
    )


def pay_at_cashier(payable: Payable, settle: payables.Settle, reference: str) -> payables.Payout:
    """The cashier's payer for machine payables: the machine and the hit locked, the cashier's payout, then
    the hit marked paid (the reference, else the receipt number) and the machine unlocked when no other
    hit of it waits."""
    hit_id = _hit_of(payable)
    machine = lock_machine(ProgressiveHit.objects.values_list("machine_id", flat=True).get(pk=hit_id))
    row = lock_hit(hit_id)
    payout = settle()
    if payout.replayed:
        return payout
    if row.paid_at is not None:  # paid outside the cashier (before hand pays went through it)
        raise _already_paid(row)
    paid = payout.payable
    assert paid.paid_by is not None
    _record_paid(machine, row, paid.paid_by, reference or paid.receipt, receipt=paid.receipt)
    return payout


def _record_paid(machine: Machine, row: ProgressiveHit, actor: User, ref: str, *, receipt: str) -> None:
    row.paid_at = now()
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
            "receipt": receipt,
            "unlocked": unlocked,
        },
    )


def payable_of(hit: ProgressiveHit) -> Payable | None:
    """The hit's payable, made now for a hit recorded without one (None for a hit of 0)."""
    source = hit_source(hit)
    venue_id = Machine.objects.values_list("venue_id", flat=True).get(pk=hit.machine_id)
    found = Payable.objects.filter(venue_id=venue_id, source=source).first()
    if found is not None or hit.amount <= 0:
        return found
    with transaction.atomic():  # its own transaction: the award's accounts, then its audit entry
        payables.hold_award_accounts([venue_id])
        create_hand_pay(hit, None if source.startswith("machines.hit:") else _award_of(source), "system")
    return Payable.objects.get(venue_id=venue_id, source=source)


def _award_of(source: str) -> int:
    return int(source.partition(":")[2])


def pay_hand_pay(
    *,
    hit: ProgressiveHit,
    actor: Actor,
    payment_ref: str = "",
    method: PayoutMethod | str = PayoutMethod.CASH,
    idempotency_key: str | None = None,
    card: PlayerCard | None = None,
    identification: int | None = None,
) -> ProgressiveHit:
    """`actor`, a cashier of the machine's venue on shift, pays `hit` at the cashier (in cash from the
    drawer by default): the cashier's payout and receipt, then who paid the hit, when, the payment
    reference; the machine unlocks (and is told "unlock") when no other hit is pending. The same
    `idempotency_key` again answers the first payment; without one, a second payment is `already_paid`.
    `identification`: the winner's at the cage (a hand pay at or above the AML threshold needs one)."""
    ref = str(payment_ref or "").strip()
    if len(ref) > 120:
        raise InvalidInput(_("The payment reference is at most 120 characters."), code="bad_payment_ref")
    if not isinstance(actor, User):
        raise InvalidInput(_("A hand pay is paid by a person: a cashier."), code="cashier_required")
    venue_id = Machine.objects.values_list("venue_id", flat=True).get(pk=hit.machine_id)
    access.require_role(actor, venue_id, Role.CASHIER)
    key = idempotency_key or f"handpay:{hit.pk}:{uuid.uuid4().hex}"
    payable = payable_of(hit)
    if payable is None:  # a hit of 0: nothing crosses the counter, the hand pay is still recorded
        with transaction.atomic():
            machine = lock_machine(hit.machine_id)
            row = lock_hit(hit.pk)
            if row.paid_at is not None:
                raise _already_paid(row)
            _record_paid(machine, row, actor, ref, receipt="")
    else:
        current = ProgressiveHit.objects.get(pk=hit.pk)
        if current.paid_at is not None and idempotency_key is None:
            raise _already_paid(current)
        payables.pay_payable(
            payable=payable,
            method=method,
            actor=actor,
            key=key,
            card=card,
            reference=ref,
            identification=identification,
        )
    row = ProgressiveHit.objects.select_related("machine", "group", "level").get(pk=hit.pk)
    hit.paid_at, hit.paid_by_id, hit.paid_by_label, hit.payment_ref = (
        row.paid_at,
        row.paid_by_id,
        row.paid_by_label,
        row.payment_ref,
    )
    return row
