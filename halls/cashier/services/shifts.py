"""Cashier shifts: opened on a till with a counted float; every operation at the till belongs to it.

Closing (the cash-up, arqueo) is in this module too: expected against counted per means of payment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import db_retry, i18n, money
from halls.access import require_role, roles_in
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import CashDevice, Means, Shift, ShiftState, Till, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services.locks import lock_accounts, lock_open_shifts, lock_shift
from halls.errors import Conflict, InvalidInput, PermissionDenied
from halls.eventtypes import EventType
from halls.models import Role
from halls.services.changes import record_change

NOTE_LENGTH = 1000
# The largest amount a ledger column holds (numeric(14, 2)).
MAX_AMOUNT = Decimal(10) ** (money.PAYMENT_DIGITS - money.CENT_PLACES) - money.CENT


def stream(venue_id: int) -> str:
    """The till pages' stream."""
    return f"cashier.{venue_id}"


def _public(shift: Shift) -> dict[str, object]:
    return {
        "shift": shift.pk,
        "till": shift.till_id,
        "cashier": shift.cashier.get_username(),
        "state": str(shift.state),
    }


@db_retry.retried("cashier.open_shift")
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
        record_change(
            venue_id=till.venue_id,
            actor=actor,
            type=EventType.CASHIER_SHIFT_OPENED,
            obj=shift,
            data={"till": till.name, "cashier": cashier.get_username(), "float": money.text(float_amount)},
            stream=stream(till.venue_id),
            public=_public(shift),
        )
    return shift


def open_shift_of(*, venue_id: int, cashier: User) -> Shift:
    """The cashier's open shift in the venue, locked (every till operation holds it).

    Refuses with `no_open_shift` when there is none."""
    found = open_shifts_of(venue_id=venue_id, cashiers=[cashier])[cashier.pk]
    if isinstance(found, Conflict):
        raise found
    return found


def open_shifts_of(*, venue_id: int, cashiers: Sequence[User]) -> dict[int, Shift | Conflict]:
    """Each cashier's open shift in the venue, found and locked in id order in one statement (a group of
    till operations), by the cashier's id; or the refusal `open_shift_of` would raise for that cashier
    (`no_open_shift`; a shift closed while this waited for its lock counts as none)."""
    shifts = lock_open_shifts(venue_id, (cashier.pk for cashier in cashiers))
    found: dict[int, Shift | Conflict] = {}
    for cashier in cashiers:
        shift = shifts.get(cashier.pk)
        if shift is None:
            found[cashier.pk] = Conflict(
                _("%(cashier)s has no open shift: open one at a till first.")
                % {"cashier": cashier.get_username()},
                code="no_open_shift",
            )
        else:
            found[cashier.pk] = shift
    return found


# --- the cash-up (arqueo) -------------------------------------------------------------------------------


def _amount(means: str, value: object) -> Decimal:
    """A counted amount: a Decimal in cents, zero or more; else InvalidInput naming its means."""
    try:
        amount = money.parse(
            f"counted.{means}", value, text=False, places=money.CENT_PLACES, maximum=MAX_AMOUNT
        )
    except money.MoneyError:
        raise InvalidInput(
            _("The counted %(means)s is %(amount)s: give an amount in cents, zero or more.")
            % {"means": Means(means).label, "amount": value},
            code="bad_amount",
            field=f"counted.{means}",
        ) from None
    return money.cents(amount)


def _counted(counted: Mapping[str, object]) -> dict[str, Decimal]:
    unknown = sorted(set(counted) - set(Means.values))
    if unknown:
        raise InvalidInput(
            _("No means of payment %(means)s: count %(known)s.")
            % {"means": ", ".join(unknown), "known": ", ".join(Means.values)},
            code="unknown_means",
        )
    missing = [m for m in Means.values if m not in counted]
    if missing:
        raise InvalidInput(
            _("The cash-up needs the counted amount of every means of payment: %(missing)s is missing.")
            % {"missing": ", ".join(str(Means(m).label) for m in missing)},
            code="counted_missing",
            missing=missing,
        )
    return {m: _amount(m, counted[m]) for m in Means.values}


def _witness(
    shift: Shift, username: str | None, password: str | None, request: HttpRequest | None
) -> User | None:
    """The second person who signs, authenticated by their password at the till (django-axes locks out
    repeated wrong passwords when the request is given); none when not given."""
    if not username and not password:
        return None
    bad = InvalidInput(
        _("The witness must be another cashier or operator of this venue, with their own password."),
        code="bad_witness",
    )
    if not username or not password:
        raise bad
    user = authenticate(request, username=username, password=password)
    if not isinstance(user, User) or not user.is_active or user.pk == shift.cashier_id:
        raise bad
    if not roles_in(user, shift.venue_id).intersection({Role.CASHIER, Role.OPERATOR}):
        raise bad
    return user


@dataclass(frozen=True)
class CashUp:
    """Expected against counted, per means; `difference` is counted - expected (> 0 over, < 0 short)."""

    expected: dict[str, Decimal]
    counted: dict[str, Decimal]

    @property
    def differences(self) -> dict[str, Decimal]:
        return {m: self.counted[m] - self.expected[m] for m in self.expected}

    @property
    def difference(self) -> Decimal:
        return sum(self.differences.values(), money.ZERO)

    @property
    def matches(self) -> bool:
        return not any(self.differences.values())


@db_retry.retried("cashier.close_shift")
def close_shift(
    *,
    shift: Shift,
    counted: Mapping[str, object],
    actor: User,
    witness: str | None = None,
    witness_password: str | None = None,
    note: str = "",
    request: HttpRequest | None = None,
) -> Shift:
    """Close the shift with its counted cash-up (arqueo): per means of payment, what the drawer should hold
    against what was counted. A difference is posted to the house (over or short) and needs a second
    person (`witness`: another cashier or operator of the venue, by username and password) who signs;
    then each drawer's counted money goes back to the house, so every drawer ends at zero.

    Refuses (writing nothing) bad amounts, `witness_required`, `bad_witness`, `shift_closed`, and
    `not_your_shift` (only the shift's cashier or an operator closes it)."""
    require_role(actor, shift.venue_id, Role.CASHIER)
    if actor.pk != shift.cashier_id and Role.OPERATOR not in roles_in(actor, shift.venue_id):
        raise PermissionDenied(_("Only the shift's cashier or an operator closes it."), code="not_your_shift")
    amounts = _counted(counted)
    note = note.strip()
    if len(note) > NOTE_LENGTH:
        raise InvalidInput(
            _("The note is longer than %(n)d characters.") % {"n": NOTE_LENGTH}, code="note_too_long"
        )
    signer = _witness(shift, witness, witness_password, request)  # the password hash, before any lock
    with transaction.atomic():
        shift = lock_shift(shift.pk)  # every till operation holds it: they are done, none starts
        if shift.state != ShiftState.OPEN:
            raise Conflict(_("The shift is closed."), code="shift_closed")
        # The drawers, locked now: the postings below take money from them after auditing each other.
        locked = lock_accounts(books.drawer(shift, m).pk for m in Means.values)
        drawers = {a.means: a for a in locked.values()}
        cash_up = CashUp(expected={m: d.balance for m, d in drawers.items()}, counted=amounts)
        if not cash_up.matches and signer is None:
            raise Conflict(
                _("The count differs from what is expected by %(difference)s: a witness must sign.")
                % {"difference": i18n.amount(cash_up.difference)},
                code="witness_required",
                expected={m: money.text(v) for m, v in cash_up.expected.items()},
                counted={m: money.text(v) for m, v in cash_up.counted.items()},
            )
        house = books.venue_account(shift.venue_id, Kind.HOUSE)
        for means, account in drawers.items():
            diff = cash_up.differences[means]
            if diff:
                over, short = (account.pk, house.pk) if diff > 0 else (house.pk, account.pk)
                books.post(
                    venue_id=shift.venue_id,
                    kind=TxKind.OVER_SHORT,
                    key=f"shift:{shift.pk}:over_short:{means}",
                    legs=[ledger.debit(over, abs(diff)), ledger.credit(short, abs(diff))],
                    actor=actor,
                    shift=shift,
                    device=shift.till.name,
                    data={"means": means, "difference": money.text(diff)},
                )
            if cash_up.counted[means]:
                books.post(
                    venue_id=shift.venue_id,
                    kind=TxKind.CASH_UP,
                    key=f"shift:{shift.pk}:cash_up:{means}",
                    legs=[
                        ledger.debit(house.pk, cash_up.counted[means]),
                        ledger.credit(account.pk, cash_up.counted[means]),
                    ],
                    actor=actor,
                    shift=shift,
                    device=shift.till.name,
                    data={"means": means},
                )
        shift.state = ShiftState.CLOSED
        shift.closed_at = timezone.now()
        shift.expected = {m: money.text(v) for m, v in cash_up.expected.items()}
        shift.counted = {m: money.text(v) for m, v in cash_up.counted.items()}
        shift.difference = cash_up.difference
        shift.witness = signer
        shift.note = note
        shift.save(
            update_fields=["state", "closed_at", "expected", "counted", "difference", "witness", "note"]
        )
        record_change(
            venue_id=shift.venue_id,
            actor=actor,
            type=EventType.CASHIER_SHIFT_CLOSED,
            obj=shift,
            data={
                "till": shift.till.name,
                "cashier": shift.cashier.get_username(),
                "expected": shift.expected,
                "counted": shift.counted,
                "difference": money.text(cash_up.difference),
                "witness": signer.get_username() if signer else None,
                "note": note,
            },
            stream=stream(shift.venue_id),
            public=_public(shift),
        )
    return shift


# --- a cash device's stacker, collected at a till -------------------------------------------------------


@db_retry.retried("cashier.empty_device")
def empty_device(
    *, shift: Shift, device: CashDevice, actor: User, key: str, amount: Decimal | None = None
) -> books.Posted:
    """Collect a cash device's stacker into the shift's cash drawer: `amount` (all it holds if none).

    `shift` is the cashier's open shift, locked (open_shift_of). Idempotent by `key`; refuses
    `insufficient_balance` for more than the device holds and `nothing_to_collect` for an empty device."""
    require_role(actor, shift.venue_id, Role.CASHIER)
    if device.venue_id != shift.venue_id:
        raise InvalidInput(_("That device is not in this venue."), code="unknown_device")
    ledger_key = f"device_emptied:{key}"
    with transaction.atomic():
        previous = books.replayed(shift.venue_id, ledger_key)  # a retry (the caller holds the shift)
        if previous is not None:
            same = previous.transaction.kind == TxKind.DEVICE_EMPTIED
            if not same or previous.transaction.data.get("device") != device.pk:
                raise Conflict(
                    _("Idempotency key %(key)r was used for another operation.") % {"key": key},
                    code="idempotency_key_reused",
                )
            return previous
        stacker = books.device_account(device)
        collected = stacker.balance if amount is None else _amount(Means.CASH, amount)
        if not collected:
            raise Conflict(
                _("%(device)s holds no money to collect.") % {"device": device.name},
                code="nothing_to_collect",
            )
        return books.post(
            venue_id=shift.venue_id,
            kind=TxKind.DEVICE_EMPTIED,
            key=ledger_key,
            legs=[
                ledger.debit(books.drawer(shift, Means.CASH).pk, collected),
                ledger.credit(stacker.pk, collected),
            ],
            actor=actor,
            shift=shift,
            device=device.name,
            data={"device": device.pk},
        )
