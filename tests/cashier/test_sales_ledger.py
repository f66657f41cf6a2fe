"""Traditional bingo's card-range sales through the ledger (issue 12): a sale is cash into the drawer of the
seller's open shift and into sales; a return takes it out; no shift, no sale."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from bingo.traditional.models import CardSeries, Game, SaleOperation, SoldCard
from bingo.traditional.services import games, readmodels, sales
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, LedgerTransaction, Leg, Means, Shift, ShiftState, TxKind
from halls.cashier.services import ledger as books
from halls.errors import Conflict
from halls.models import AuditEntry, Role, Venue
from tests.api_support import api_client, refused
from tests.cashier_support import on_shift
from tests.conftest import make_user

D = Decimal


@pytest.fixture
def on_sale(manual_game: Game, caller: User) -> Game:
    return games.open_sales(game=manual_game, actor=caller)


def the_shift(user: User) -> Shift:
    return Shift.objects.get(cashier=user, state=ShiftState.OPEN)


def cash(shift: Shift) -> Decimal:
    return books.drawer(shift, Means.CASH).balance


def sales_balance(venue: Venue) -> Decimal:
    return books.venue_account(venue.pk, Kind.SALES).balance


@contextmanager
def nothing_written() -> Iterator[None]:
    """The block leaves the sales, the ledger and the audit trail as it found them."""
    tables = (SaleOperation, SoldCard, LedgerTransaction, Leg, AuditEntry)

    def counts() -> list[int]:
        return [model.objects.count() for model in tables]

    balances = dict(Account.objects.values_list("pk", "balance"))
    before = counts()
    yield
    assert counts() == before
    assert dict(Account.objects.values_list("pk", "balance")) == balances


@pytest.mark.django_db
def test_a_sale_is_cash_in_the_sellers_drawer_and_a_return_takes_it_out(
    on_sale: Game, card_series: CardSeries, cashier: User, venue: Venue
) -> None:
    shift = the_shift(cashier)
    sold = sales.sell_range(game=on_sale, series=card_series, first=1, last=5, actor=cashier)
    assert (cash(shift), sales_balance(venue)) == (D("10.00"), D("10.00"))
    assert sold.shift == shift and sold.ledger_tx is not None
    tx = sold.ledger_tx
    assert (tx.kind, tx.shift_id, tx.device, tx.actor_id) == (TxKind.SALE, shift.pk, "Caja 1", cashier.pk)
    legs = sorted((leg.account.code, leg.amount) for leg in tx.legs.select_related("account"))
    assert legs == [(f"drawer:{shift.pk}:cash", D("10.00")), ("sales", D("-10.00"))]

    returned = sales.return_range(game=on_sale, series=card_series, first=2, last=3, actor=cashier)
    assert (cash(shift), sales_balance(venue)) == (D("6.00"), D("6.00"))
    assert returned.shift == shift and returned.ledger_tx is not None
    assert returned.ledger_tx.kind == TxKind.SALE_RETURN
    assert AuditEntry.objects.filter(
        action="ledger.sale_return", object_id=str(returned.ledger_tx.pk)
    ).exists()
    assert readmodels.sales_totals(on_sale)["sales_total"] == sales_balance(venue)


@pytest.mark.django_db
def test_each_seller_sells_into_the_drawer_of_their_own_shift(
    on_sale: Game, card_series: CardSeries, cashier: User, venue: Venue
) -> None:
    other = make_user("cajera", venue, Role.CASHIER)
    theirs = on_shift(other, venue, float=D("20.00"))
    sales.sell_range(game=on_sale, series=card_series, first=1, last=2, actor=cashier)
    sales.sell_range(game=on_sale, series=card_series, first=3, last=6, actor=other)
    assert cash(the_shift(cashier)) == D("4.00")
    assert cash(theirs) == D("28.00")  # the float and the sale
    assert sales_balance(venue) == D("12.00")


@pytest.mark.django_db
def test_a_retry_with_the_same_key_answers_the_first_operation_and_posts_once(
    on_sale: Game, card_series: CardSeries, cashier: User, venue: Venue
) -> None:
    first = sales.sell_range(
        game=on_sale, series=card_series, first=1, last=3, actor=cashier, idempotency_key="till-1:s1"
    )
    with nothing_written():
        again = sales.sell_range(
            game=on_sale, series=card_series, first=1, last=3, actor=cashier, idempotency_key="till-1:s1"
        )
    assert again.pk == first.pk
    assert LedgerTransaction.objects.filter(kind=TxKind.SALE).count() == 1
    back = sales.return_range(
        game=on_sale, series=card_series, first=1, last=3, actor=cashier, idempotency_key="till-1:r1"
    )
    with nothing_written():
        assert (
            sales.return_range(
                game=on_sale, series=card_series, first=1, last=3, actor=cashier, idempotency_key="till-1:r1"
            ).pk
            == back.pk
        )
    assert LedgerTransaction.objects.filter(kind=TxKind.SALE_RETURN).count() == 1
    assert (cash(the_shift(cashier)), sales_balance(venue)) == (D("0.00"), D("0.00"))


@pytest.mark.django_db
def test_a_sale_without_an_open_shift_is_refused_and_writes_nothing(
    on_sale: Game, card_series: CardSeries, venue: Venue
) -> None:
    off = make_user("cajera", venue, Role.CASHIER)
    with nothing_written(), pytest.raises(Conflict) as refusal:
        sales.sell_range(game=on_sale, series=card_series, first=1, last=5, actor=off, idempotency_key="k")
    assert refusal.value.code == "no_open_shift"
    assert "cajera" in refusal.value.message


@pytest.mark.django_db
def test_a_return_the_drawer_cannot_cover_is_drawer_short_and_writes_nothing(
    on_sale: Game, card_series: CardSeries, cashier: User, venue: Venue
) -> None:
    sales.sell_range(game=on_sale, series=card_series, first=1, last=5, actor=cashier)
    poor = make_user("cajera", venue, Role.CASHIER)
    on_shift(poor, venue, float=D("3.00"))
    with nothing_written(), pytest.raises(Conflict) as refusal:
        sales.return_range(game=on_sale, series=card_series, first=1, last=2, actor=poor)  # 4.00 > 3.00
    assert refusal.value.code == "drawer_short"
    assert SoldCard.objects.filter(game=on_sale).count() == 5
    # What the drawer holds it gives back.
    sales.return_range(game=on_sale, series=card_series, first=1, last=1, actor=poor)
    assert cash(the_shift(poor)) == D("1.00")


@pytest.mark.django_db
def test_the_trial_balance_holds_after_a_games_sales_and_returns(
    on_sale: Game, card_series: CardSeries, cashier: User, caller: User, venue: Venue
) -> None:
    other = make_user("cajera", venue, Role.CASHIER)
    on_shift(other, venue, float=D("50.00"))
    sales.sell_range(game=on_sale, series=card_series, first=1, last=12, actor=cashier)
    sales.sell_range(game=on_sale, series=card_series, first=13, last=30, actor=other)
    sales.return_range(game=on_sale, series=card_series, first=5, last=8, actor=cashier)
    sales.return_range(game=on_sale, series=card_series, first=13, last=30, actor=other)
    sales.sell_range(game=on_sale, series=card_series, first=31, last=36, actor=other)
    games.close_sales(game=on_sale, actor=caller)
    trial = books.trial_balance(venue.pk)
    assert trial.holds, trial
    assert trial.by_kind[Kind.SALES] == D("28.00") == readmodels.sales_totals(on_sale)["sales_total"]
    assert trial.by_kind[Kind.DRAWER] == D("78.00")  # 50.00 of float and the 28.00 sold


@pytest.mark.django_db
def test_the_sale_api_refuses_a_cashier_off_shift_with_409_and_writes_nothing(
    on_sale: Game, card_series: CardSeries, venue: Venue
) -> None:
    off = make_user("cajera", venue, Role.CASHIER)
    body = {"series": card_series.code, "first": 1, "last": 6, "idempotency_key": "till-9:s1"}
    with nothing_written():
        answer = api_client(off).post(f"/api/games/{on_sale.pk}/sales/", body, format="json")
    refused(answer, 409, "no_open_shift", "cajera", "open shift")
    # On shift, the same request sells, and names the shift.
    shift = on_shift(off, venue)
    sold = api_client(off).post(f"/api/games/{on_sale.pk}/sales/", body, format="json")
    assert sold.status_code == 201, sold.content
    assert sold.json()["shift"] == shift.pk and sold.json()["amount"] == "12.00"
