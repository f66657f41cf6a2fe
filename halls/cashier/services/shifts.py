"""Cashier shifts: opened on a till with a counted float; every operation at the till belongs to it.

Closing (the cash-up, arqueo) is in this module too: expected against counted per means of payment.
"""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import money
from halls.access import require_role
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import Means, Shift, ShiftState, Till, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services.locks import lock_shift
from halls.errors import Conflict, InvalidInput
from halls.models import Role
from halls.services import audit


def open_shift(*, till: Till, cashier: User, float_amount: Decimal, actor: User) -> Shift:
    """Open `cashier`'s shift on `till` with a counted float of cash (taken from the house)."""
    require_role(actor, till.venue_id, Role.CASHIER)
    require_role(cashier, till.venue_id, Role.CASHIER)
    if float_amount < 0 or float_amount != money.cents(float_amount):
        raise InvalidInput(
            _("The float is %(amount)s: give a counted amount in cents, zero or more.")
            % {"amount": float_amount},
            code="bad_amount",
        )
    if not till.active:
        raise Conflict(_("Till %(till)s is not in service.") % {"till": till.name}, code="till_inactive")
    with transaction.atomic():
        try:
            with transaction.atomic():  # a savepoint: the refusal below leaves nothing written
                shift = Shift.objects.create(
                    venue_id=till.venue_id,
                    till=till,
                    cashier=cashier,
                    opened_at=timezone.now(),
                    float_amount=float_amount,
                )
        except IntegrityError as exc:
            raise Conflict(
                _("Till %(till)s or cashier %(cashier)s already has an open shift.")
                % {"till": till.name, "cashier": cashier.get_username()},
                code="shift_already_open",
            ) from exc
        shift = lock_shift(shift.pk)
        cash = books.drawer(shift, Means.CASH)
        books.drawer(shift, Means.BANK_CARD)
        audit.record(
            venue_id=till.venue_id,
            actor=actor,
            action="cashier.shift_opened",
            obj=shift,
            data={"till": till.name, "cashier": cashier.get_username(), "float": money.text(float_amount)},
        )
        if float_amount > 0:
            house = books.venue_account(till.venue_id, Kind.HOUSE)
            books.post(
                venue_id=till.venue_id,
                kind=TxKind.FLOAT,
                key=f"shift:{shift.pk}:float",
                legs=[ledger.debit(cash.pk, float_amount), ledger.credit(house.pk, float_amount)],
                actor=actor,
                shift=shift,
                device=till.name,
            )
    return shift


def open_shift_of(*, venue_id: int, cashier: User) -> Shift:
    """The cashier's open shift in the venue, locked (every till operation holds it).

    Refuses with `no_open_shift` when there is none."""
    shift_id = (
        Shift.objects.filter(venue_id=venue_id, cashier=cashier, state=ShiftState.OPEN)
        .values_list("pk", flat=True)
        .first()
    )
    if shift_id is None:
        raise Conflict(
            _("%(cashier)s has no open shift: open one at a till first.")
            % {"cashier": cashier.get_username()},
            code="no_open_shift",
        )
    shift = lock_shift(shift_id)
    if shift.state != ShiftState.OPEN:  # closed between the look-up and the lock
        raise Conflict(_("The shift is closed."), code="shift_closed")
    return shift
