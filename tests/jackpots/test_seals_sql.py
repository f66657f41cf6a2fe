"""Seals on PostgreSQL: the database makes the contribution lines (jackpots.services.seals), and they must be
the very lines the Python path makes (SQLite, and every seal sealed before): same digest, same counts, and a
seal costs the same statements whatever the number of rows."""

# ruff: noqa: F811

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from jackpots.models import Contribution, Pool
from jackpots.services import contributions, seals
from jackpots.sources import PoolSource
from tests.jackpots.pool_fixtures import (  # noqa: F401 - fixtures
    an10_venue,
    carousel,
    key,
    level_of,
    pool_operator,
)
from tests.tampering import as_db_owner

pytestmark = pytest.mark.django_db


def give(pool: Pool, n: int) -> None:
    for i in range(n):
        contributions.contribute(
            pool=pool,
            source=PoolSource.of("table", 1).at("seat", i % 2 + 1),
            bet=Decimal("1.00"),
            idempotency_key=key(),
            actor="t",
        )


def odd_rows(pool: Pool) -> None:
    """Rows whose text is easy to get wrong: whole-second and microsecond times, zeros and trailing
    zeros at every scale, big amounts, a pipe and non-ASCII in the text fields."""
    level = level_of(pool)
    values = [
        ("0.00", "0.000000", "0.000000", "0.000000", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("1000.00", "700.000000", "100.000000", "200.000000", datetime(2026, 1, 2, 3, 4, 5, 1, tzinfo=UTC)),
        ("0.01", "0.000001", "0.000009", "0.009990", datetime(2026, 7, 1, 23, 59, 59, 999999, tzinfo=UTC)),
        ("999999999999.99", "12345678901234.123456", "0.100000", "0.5", datetime(1999, 12, 31, tzinfo=UTC)),
    ]
    Contribution.objects.bulk_create(
        Contribution(
            pool=pool,
            level=level,
            source=f"máquina|ñ/{i}",
            bet=Decimal(bet),
            to_meter=Decimal(meter),
            to_reserve=Decimal(reserve),
            house=Decimal(house),
            idempotency_key=f"odd-{i}|€",
            actor="operador:José",
            created_at=at,
        )
        for i, (bet, meter, reserve, house, at) in enumerate(values)
    )


def python_digest(level_id: int, after: int, through: int) -> tuple[str, int]:
    digest = hashlib.sha256()
    n = 0
    for line in seals._lines_contributions(level_id, after, through):
        digest.update(line.encode())
        digest.update(b"\n")
        n += 1
    return digest.hexdigest(), n


def test_the_database_makes_the_same_lines_as_python(carousel: Pool, monkeypatch: pytest.MonkeyPatch) -> None:
    give(carousel, 5)
    odd_rows(carousel)
    give(carousel, 3)
    level_id = level_of(carousel).pk
    ids = sorted(Contribution.objects.filter(level_id=level_id).values_list("id", flat=True))
    monkeypatch.setattr(seals, "CONTRIBUTION_CHUNK", 3)  # several chunks, one of them partial
    for after, through in [(0, ids[-1]), (ids[2], ids[-2]), (ids[4], ids[5]), (ids[-1], ids[-1] + 10)]:
        digest = hashlib.sha256()
        count = seals._feed_contributions_sql(digest, level_id, after, through)
        assert (digest.hexdigest(), count) == python_digest(level_id, after, through)


def test_a_seal_costs_the_same_statements_for_ten_rows_or_two_hundred(carousel: Pool) -> None:
    def statements_of_a_seal(rows: int) -> int:
        give(carousel, rows)
        with CaptureQueriesContext(connection) as queries:
            assert seals.seal(carousel) is not None
        return len(queries)

    assert statements_of_a_seal(10) == statements_of_a_seal(200)
    check = seals.verify(carousel)
    assert check.ok and check.seals == 2


def test_a_seal_made_by_the_database_verifies_in_python_and_the_other_way(
    carousel: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    give(carousel, 4)
    odd_rows(carousel)
    assert seals.seal(carousel) is not None  # the lines made by PostgreSQL
    give(carousel, 2)
    monkeypatch.setattr(seals, "_lines_in_database", lambda: False)  # as on SQLite: the lines in Python
    assert seals.seal(carousel) is not None
    assert seals.verify(carousel).ok
    monkeypatch.undo()
    check = seals.verify(carousel)
    assert check.ok and check.seals == 2
    row = Contribution.objects.filter(pool=carousel, source__startswith="máquina").first()
    assert row is not None
    with as_db_owner(Contribution):  # the trigger refuses the edit otherwise
        Contribution.objects.filter(pk=row.pk).update(actor="someone else")
    assert seals.verify(carousel).first_bad_seq == 1
