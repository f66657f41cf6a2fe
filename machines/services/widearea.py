"""A machine's wide-area hit decided at the central (jackpots.widearea): the venue pays it here, as every
hand pay, or unlocks the machine when the pool's settings leave it without a prize. Registered with
jackpots.widearea.hooks by the machines app (jackpots never imports machines)."""

from __future__ import annotations

from halls.cashier.services import payables
from jackpots.models import PoolLevel
from jackpots.widearea.models import WideAreaClaim
from jackpots.widearea.services.venue import pay_at_cashier as fallback
from machines import protocol
from machines.models import LockReason, MachineState, ProgressiveHit
from machines.services import push
from machines.services.audit import describe, record
from machines.services.gateway_batch import create_hand_pay
from machines.services.locks import lock_machine

ACTOR = "widearea.venue"


def pay_claim(claim: WideAreaClaim) -> None:
    """Inside the decision's transaction: the machine locked first; a prize is a hit waiting as a hand pay
    at this venue's cashier (paying it unlocks the machine); none unlocks the machine now."""
    context = claim.context
    if "machine" not in context:  # a hit named "machine:…" without the gateway's context: paid as any
        fallback(claim)
        return
    machine = lock_machine(int(context["machine"]))
    amount = claim.amount
    if amount:
        level = PoolLevel.objects.get(pool_id=claim.mirror.pool_id, name=claim.level)
        payables.hold_award_accounts([machine.venue_id])
        hit = ProgressiveHit.objects.create(
            machine=machine,
            seq=int(context["seq"]),
            group_id=int(context["group"]),
            level=level,
            game_id=str(context.get("game_id") or ""),
            settlement_id=0,  # the award is the central's (jackpots.widearea.models.WideAreaHit)
            amount=amount,
            reported_at=claim.reported_at,
        )
        create_hand_pay(hit, None, ACTOR)
        return
    others = ProgressiveHit.objects.filter(machine=machine, paid_at__isnull=True).exists()
    if not others and machine.state == MachineState.LOCKED and machine.lock_reason == LockReason.HAND_PAY:
        machine.state, machine.lock_reason = MachineState.IN_SERVICE, LockReason.NONE
        machine.save(update_fields=["state", "lock_reason"])
        push.to_machine(machine.pk, protocol.unlock())
        record(
            machine.venue_id,
            ACTOR,
            "machine.unlocked",
            machine,
            {**describe(machine), "reason": "widearea_no_prize", "claim": claim.pk},
        )
