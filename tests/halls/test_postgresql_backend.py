"""The hall's PostgreSQL backend (halls.postgresql): a bulk insert of money rows (MoneyField) and of bytes
(BinaryField) takes Django's UNNEST form, one array parameter per column, and what it writes reads back
exactly (amounts to the cent, bytes byte for byte)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from bingo import cardgen
from bingo.cards import pack_numbers
from bingo.traditional.models import Card
from bingo.traditional.services import series as series_services
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import Leg, TxKind
from halls.cashier.services import ledger as books
from halls.models import Venue

pytestmark = pytest.mark.django_db


def inserts_into(queries: CaptureQueriesContext, table: str) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if q["sql"].startswith(f'INSERT INTO "{table}"')]


def test_the_backend_is_the_halls(venue: Venue) -> None:
    assert connection.settings_dict["ENGINE"] == "halls.postgresql"
    assert connection.vendor == "postgresql"


def test_money_legs_go_in_as_arrays_and_read_back_to_the_cent(venue: Venue) -> None:
    house = books.venue_account(venue.pk, Kind.HOUSE).pk
    sales = books.venue_account(venue.pk, Kind.SALES).pk
    amounts = [Decimal("0.01"), Decimal("12.34"), Decimal("999999.99")]
    posted = books.post_many(
        venue_id=venue.pk,
        postings=[
            books.Posting(
                kind=TxKind.CARD_CASH_IN,
                key=f"unnest:{i}",
                legs=[ledger.debit(house, Decimal("1.00")), ledger.credit(sales, Decimal("1.00"))],
                actor="test",
            )
            for i in range(len(amounts))
        ],
    )
    # The ledger writes its own legs as one JSON statement; the backend's bulk form, for any money rows,
    # is seen here through Leg's own bulk_create, on accounts those postings have no leg on (the test's
    # transaction is rolled back before the deferred balance check).
    prizes, tickets = (books.venue_account(venue.pk, kind).pk for kind in (Kind.PRIZES_PAYABLE, Kind.TICKETS))
    legs = [
        Leg(transaction=p.transaction, account_id=account, amount=amount)
        for p, a in zip(posted, amounts, strict=True)
        for account, amount in ((prizes, a), (tickets, -a))
    ]
    with CaptureQueriesContext(connection) as queries:
        Leg.objects.bulk_create(legs)
    (insert,) = inserts_into(queries, "cashier_leg")
    assert "UNNEST" in insert and insert.count("%s") == 0  # the arrays are bound, not a row of placeholders
    stored = sorted(Leg.objects.filter(pk__in=[leg.pk for leg in legs]).values_list("amount", flat=True))
    assert stored == sorted([*amounts, *(-a for a in amounts)])


def test_bytes_go_in_as_arrays_and_read_back_byte_for_byte(venue: Venue, operator: Any) -> None:
    series = series_services.create_series(
        venue=venue, code="UN", face_value=Decimal("1.00"), strips=1, actor=operator, seed="aa" * 16
    )
    grids = cardgen.generate_strip(b"another strip", 0)
    with CaptureQueriesContext(connection) as queries:
        Card.objects.bulk_create(
            Card(
                series=series,
                serial=100 + i,
                grid=grid.to_json(),
                key=grid.key(),
                security_code=f"code{i}",
                numbers=pack_numbers(grid),
            )
            for i, grid in enumerate(grids)
        )
    (insert,) = inserts_into(queries, "bingo_card")
    assert "UNNEST" in insert
    stored = Card.objects.filter(series=series, serial__gte=100).order_by("serial")
    assert [bytes(card.numbers) for card in stored] == [pack_numbers(grid) for grid in grids]
