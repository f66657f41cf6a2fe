"""Closing a shift (the cash-up, arqueo): expected against counted per means of payment, a difference
posted to the house and signed by a second person, every drawer at zero afterwards; tills; a device's
stacker collected at a till."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from halls import events
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import (
    Account,
    CashDevice,
    DeviceKind,
    LedgerTransaction,
    Means,
    Shift,
    ShiftState,
    Till,
    TxKind,
)
from halls.cashier.services import ledger as books
from halls.cashier.services import shifts, tills
from halls.errors import Conflict, InvalidInput, PermissionDenied
from halls.models import AuditEntry, Role, Venue
from tests.conftest import make_user

# The cashier opens its shift in each test, with the float the test counts.
pytestmark = pytest.mark.cashier_off_shift


D = Decimal


@pytest.fixture
def till(venue: Venue) -> Till:
    return Till.objects.create(venue=venue, name="Caja 1")


@pytest.fixture
def shift(till: Till, cashier: User) -> Shift:
    return shifts.open_shift(till=till, cashier=cashier, float_amount=D("100.00"), actor=cashier)


@pytest.fixture
def supervisor(venue: Venue) -> User:
    return make_user("supervisor", venue, Role.CASHIER)


def _take(shift: Shift, means: str, amount: str, key: str, kind: TxKind = TxKind.SALE) -> None:
    """Money into a drawer from sales (a sale, or a bank-card payment)."""
    sales = books.venue_account(shift.venue_id, Kind.SALES)
    books.post(
        venue_id=shift.venue_id,
        kind=kind,
        key=key,
        legs=[ledger.debit(books.drawer(shift, means).pk, D(amount)), ledger.credit(sales.pk, D(amount))],
        actor="test",
        shift=shift,
    )


def _drawers_at_zero(shift: Shift) -> bool:
    return all(a.balance == 0 for a in Account.objects.filter(shift=shift))


def _writes() -> tuple[int, int]:
    return LedgerTransaction.objects.count(), AuditEntry.objects.count()


@pytest.mark.django_db
def test_a_count_equal_to_the_expected_closes_without_a_witness_and_empties_the_drawers(
    shift: Shift, cashier: User
) -> None:
    _take(shift, Means.CASH, "30.00", "s1")
    _take(shift, Means.BANK_CARD, "12.50", "s2")
    closed = shifts.close_shift(
        shift=shift, counted={"cash": D("130.00"), "bank_card": D("12.50")}, actor=cashier
    )
    assert closed.state == ShiftState.CLOSED and closed.closed_at is not None
    assert closed.expected == {"cash": "130.00", "bank_card": "12.50"}
    assert closed.counted == {"cash": "130.00", "bank_card": "12.50"}
    assert closed.difference == 0 and closed.witness is None
    assert _drawers_at_zero(shift)
    cash_ups = LedgerTransaction.objects.filter(shift=shift, kind=TxKind.CASH_UP)
    assert cash_ups.count() == 2
    assert not LedgerTransaction.objects.filter(kind=TxKind.OVER_SHORT).exists()
    # The house (credit-normal) lent the float and took back float and takings: 42.50 on its debit side.
    assert books.venue_account(shift.venue_id, Kind.HOUSE).balance == D("-42.50")
    assert books.trial_balance(shift.venue_id).holds
    entry = AuditEntry.objects.get(action="cashier.shift_closed")
    assert entry.data["difference"] == "0.00" and entry.data["witness"] is None
    assert events.current_seq(shifts.stream(shift.venue_id)) == 2  # the shift opened, then closed


@pytest.mark.django_db
def test_a_short_count_needs_a_witness_and_is_refused_without_one_writing_nothing(
    shift: Shift, cashier: User, supervisor: User, caller: User, other_venue: Venue
) -> None:
    _take(shift, Means.CASH, "30.00", "s1")
    counted = {"cash": D("125.00"), "bank_card": D("0")}
    before = _writes()
    with pytest.raises(Conflict) as refused:
        shifts.close_shift(shift=shift, counted=counted, actor=cashier)
    assert refused.value.code == "witness_required"
    assert refused.value.details["expected"] == {"cash": "130.00", "bank_card": "0.00"}
    stranger = make_user("stranger", other_venue, Role.OPERATOR)
    for name, password in [
        ("supervisor", "wrong"),  # a wrong password
        ("cashier", "pw-cashier"),  # the shift's own cashier
        ("caller", "pw-caller"),  # no cashier role here
        ("stranger", "pw-stranger"),  # another venue's operator
        ("nobody", "pw-nobody"),
        ("supervisor", ""),
    ]:
        with pytest.raises(InvalidInput) as bad:
            shifts.close_shift(
                shift=shift, counted=counted, actor=cashier, witness=name, witness_password=password
            )
        assert bad.value.code == "bad_witness", name
    assert _writes() == before
    shift.refresh_from_db()
    assert shift.state == ShiftState.OPEN and books.drawer(shift).balance == D("130.00")
    assert stranger.pk and caller.pk

    closed = shifts.close_shift(
        shift=shift,
        counted=counted,
        actor=cashier,
        witness="supervisor",
        witness_password="pw-supervisor",
        note="  a 5 note missing  ",
    )
    assert closed.difference == D("-5.00") and closed.witness == supervisor
    assert closed.note == "a 5 note missing"
    short = LedgerTransaction.objects.get(shift=shift, kind=TxKind.OVER_SHORT)
    assert sorted((leg.account.code, leg.amount) for leg in short.legs.all()) == [
        (f"drawer:{shift.pk}:cash", D("-5.00")),
        ("house", D("5.00")),
    ]
    assert _drawers_at_zero(shift) and books.trial_balance(shift.venue_id).holds
    # The house lent 100, took 125 back and bore the 5 short: the 30 sold, on its debit side.
    assert books.venue_account(shift.venue_id, Kind.HOUSE).balance == D("-30.00")


@pytest.mark.django_db
def test_an_over_count_is_posted_to_the_house_and_signed(shift: Shift, cashier: User, operator: User) -> None:
    _take(shift, Means.BANK_CARD, "20.00", "s1")
    closed = shifts.close_shift(
        shift=shift,
        counted={"cash": D("100.00"), "bank_card": D("20.10")},
        actor=cashier,
        witness="operator",
        witness_password="pw-operator",
    )
    assert closed.difference == D("0.10") and closed.witness == operator
    over = LedgerTransaction.objects.get(shift=shift, kind=TxKind.OVER_SHORT)
    assert over.data == {"means": "bank_card", "difference": "0.10"}
    assert sorted((leg.account.code, leg.amount) for leg in over.legs.all()) == [
        (f"drawer:{shift.pk}:bank_card", D("0.10")),
        ("house", D("-0.10")),
    ]
    assert _drawers_at_zero(shift) and books.trial_balance(shift.venue_id).holds


@pytest.mark.django_db
def test_an_over_in_one_means_and_a_short_in_another_still_need_a_witness(
    shift: Shift, cashier: User
) -> None:
    _take(shift, Means.BANK_CARD, "20.00", "s1")
    with pytest.raises(Conflict) as refused:
        shifts.close_shift(shift=shift, counted={"cash": D("110.00"), "bank_card": D("10.00")}, actor=cashier)
    assert refused.value.code == "witness_required"


@pytest.mark.django_db
def test_a_closed_shift_is_not_closed_twice_and_takes_no_more_operations(shift: Shift, cashier: User) -> None:
    shifts.close_shift(shift=shift, counted={"cash": D("100"), "bank_card": D("0")}, actor=cashier)
    before = _writes()
    with pytest.raises(Conflict) as refused:
        shifts.close_shift(shift=shift, counted={"cash": D("100"), "bank_card": D("0")}, actor=cashier)
    assert refused.value.code == "shift_closed"
    with pytest.raises(Conflict) as none:
        shifts.open_shift_of(venue_id=shift.venue_id, cashier=cashier)
    assert none.value.code == "no_open_shift"
    assert _writes() == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("counted", "code"),
    [
        ({"cash": D("-1"), "bank_card": D("0")}, "bad_amount"),
        ({"cash": D("1.005"), "bank_card": D("0")}, "bad_amount"),
        ({"cash": D("NaN"), "bank_card": D("0")}, "bad_amount"),
        ({"cash": 1.5, "bank_card": D("0")}, "bad_amount"),
        ({"cash": D("100")}, "counted_missing"),
        ({"cash": D("100"), "bank_card": D("0"), "cheque": D("1")}, "unknown_means"),
    ],
)
def test_bad_counts_are_refused_naming_them(
    shift: Shift, cashier: User, counted: dict[str, object], code: str
) -> None:
    before = _writes()
    with pytest.raises(InvalidInput) as refused:
        shifts.close_shift(shift=shift, counted=counted, actor=cashier)
    assert refused.value.code == code
    assert _writes() == before


@pytest.mark.django_db
def test_only_the_shifts_cashier_or_an_operator_closes_it(
    shift: Shift, supervisor: User, operator: User
) -> None:
    counted = {"cash": D("100"), "bank_card": D("0")}
    with pytest.raises(PermissionDenied) as refused:
        shifts.close_shift(shift=shift, counted=counted, actor=supervisor)
    assert refused.value.code == "not_your_shift"
    assert shifts.close_shift(shift=shift, counted=counted, actor=operator).state == ShiftState.CLOSED


@pytest.mark.django_db
def test_a_zero_float_shift_with_nothing_counted_posts_nothing(till: Till, cashier: User) -> None:
    shift = shifts.open_shift(till=till, cashier=cashier, float_amount=D("0"), actor=cashier)
    closed = shifts.close_shift(shift=shift, counted={"cash": D("0"), "bank_card": D("0")}, actor=cashier)
    assert closed.state == ShiftState.CLOSED
    assert not LedgerTransaction.objects.filter(shift=shift).exists()


@pytest.mark.django_db
def test_a_devices_stacker_is_collected_into_the_drawer_once(
    venue: Venue, shift: Shift, cashier: User
) -> None:
    device = CashDevice.objects.create(
        venue=venue, name="Terminal 3", kind=DeviceKind.TERMINAL, token_hash="x"
    )
    stacker = books.device_account(device)
    card = books.venue_account(venue.pk, Kind.TICKETS)  # any credit-normal account the notes went to
    books.post(
        venue_id=venue.pk,
        kind=TxKind.DEVICE_CASH_IN,
        key="notes-1",
        legs=[ledger.debit(stacker.pk, D("50.00")), ledger.credit(card.pk, D("50.00"))],
        actor="Terminal 3",
    )
    with pytest.raises(Conflict) as too_much:
        shifts.empty_device(shift=shift, device=device, actor=cashier, key="e0", amount=D("60.00"))
    assert too_much.value.code == "insufficient_balance"
    posted = shifts.empty_device(shift=shift, device=device, actor=cashier, key="e1")
    assert not posted.replayed and posted.transaction.kind == TxKind.DEVICE_EMPTIED
    assert posted.transaction.shift == shift
    assert books.device_account(device).balance == 0
    assert books.drawer(shift).balance == D("150.00")
    again = shifts.empty_device(shift=shift, device=device, actor=cashier, key="e1")
    assert again.replayed and again.transaction.pk == posted.transaction.pk
    with pytest.raises(Conflict) as empty:
        shifts.empty_device(shift=shift, device=device, actor=cashier, key="e2")
    assert empty.value.code == "nothing_to_collect"
    assert books.trial_balance(venue.pk).holds


@pytest.mark.django_db
def test_tills_are_made_changed_and_retired_by_the_operator_audited(
    venue: Venue, operator: User, cashier: User
) -> None:
    with pytest.raises(PermissionDenied):
        tills.create_till(venue_id=venue.pk, name="Caja 2", actor=cashier)
    till = tills.create_till(venue_id=venue.pk, name=" Caja 2 ", actor=operator)
    assert till.name == "Caja 2" and till.printer == ""
    with pytest.raises(Conflict) as taken:
        tills.create_till(venue_id=venue.pk, name="Caja 2", actor=operator)
    assert taken.value.code == "till_name_taken"
    with pytest.raises(InvalidInput) as bad:
        tills.update_till(till=till, name="Caja 2", printer="lpt1", actor=operator)
    assert bad.value.code == "bad_printer"
    tills.update_till(till=till, name="Caja 2", printer="tcp://10.0.0.9:9100", actor=operator)
    shift = shifts.open_shift(till=till, cashier=cashier, float_amount=D("0"), actor=cashier)
    with pytest.raises(Conflict) as busy:
        tills.retire_till(till=till, actor=operator)
    assert busy.value.code == "till_in_use"
    shifts.close_shift(shift=shift, counted={"cash": D("0"), "bank_card": D("0")}, actor=cashier)
    assert not tills.retire_till(till=till, actor=operator).active
    with pytest.raises(Conflict) as inactive:
        shifts.open_shift(till=till, cashier=cashier, float_amount=D("0"), actor=cashier)
    assert inactive.value.code == "till_inactive"
    actions = list(
        AuditEntry.objects.filter(action__startswith="cashier.till")
        .order_by("pk")
        .values_list("action", flat=True)
    )
    assert actions == ["cashier.till_created", "cashier.till_changed", "cashier.till_retired"]
    assert timezone.now()
