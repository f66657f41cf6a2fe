"""halls.fields.MoneyField on PostgreSQL: the same numeric columns and values as models.DecimalField, and the
migration that made the money columns MoneyFields changes nothing here (its SQLite step is a no-op)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.management import call_command
from django.db import connection

from halls.fields import MoneyField, from_db
from jackpots.models import Contribution, PoolLevel
from machines.models import Play

pytestmark = pytest.mark.django_db

MIGRATIONS = [("bingo", "0011"), ("jackpots", "0005"), ("tables", "0002"), ("machines", "0003")]


def column_type(table: str, column: str) -> tuple[str, int, int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT data_type, numeric_precision, numeric_scale FROM information_schema.columns "
            "WHERE table_name = %s AND column_name = %s",
            [table, column],
        )
        row = cursor.fetchone()
    assert row is not None
    return row[0], row[1], row[2]


def test_money_columns_stay_numeric_on_postgresql() -> None:
    assert connection.vendor == "postgresql"
    assert column_type("jackpots_contribution", "to_meter") == ("numeric", 20, 6)
    assert column_type("jackpots_contribution", "bet") == ("numeric", 14, 2)
    assert column_type("jackpots_poollevel", "amount") == ("numeric", 20, 6)
    assert column_type("machines_play", "bet") == ("numeric", 14, 2)
    field = Contribution._meta.get_field("to_meter")
    assert isinstance(field, MoneyField)
    assert field.db_type(connection) == "numeric(20, 6)"
    assert field.cast_db_type(connection) == "numeric(20, 6)"


@pytest.mark.parametrize(("app", "number"), MIGRATIONS)
def test_the_money_migration_writes_no_sql_on_postgresql(
    app: str, number: str, capsys: pytest.CaptureFixture[str]
) -> None:
    call_command("sqlmigrate", app, number)
    statements = [
        line
        for line in capsys.readouterr().out.splitlines()
        if line.strip() and not line.startswith("--") and line.strip() not in ("BEGIN;", "COMMIT;")
    ]
    assert statements == []


def test_the_rates_check_is_the_same_check_on_postgresql(capsys: pytest.CaptureFixture[str]) -> None:
    """jackpots 0006 (rates as RateField) drops the rates' check and adds it back, word for word."""
    call_command("sqlmigrate", "jackpots", "0006")
    statements = [line for line in capsys.readouterr().out.splitlines() if line.startswith("ALTER TABLE")]
    assert statements == [
        'ALTER TABLE "jackpots_poollevel" DROP CONSTRAINT "level_rates_within_bet";',
        'ALTER TABLE "jackpots_poollevel" ADD CONSTRAINT "level_rates_within_bet" '
        'CHECK (("contribution_rate" >= 0 AND "reserve_rate" >= 0 '
        'AND "contribution_rate" <= (1 - "reserve_rate")));',
    ]
    call_command("sqlmigrate", "jackpots", "0001")
    assert '"contribution_rate" <= (1 - "reserve_rate")' in capsys.readouterr().out
    assert column_type("jackpots_poollevel", "contribution_rate") == ("numeric", 7, 6)


def test_values_and_raw_reads_are_untouched_on_postgresql() -> None:
    field = PoolLevel._meta.get_field("amount")
    assert field.get_db_prep_value(Decimal("2170.400000"), connection) == Decimal("2170.400000")
    assert from_db(Play._meta.get_field("bet"), Decimal("0.20"), connection) == Decimal("0.20")
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::numeric(20, 6)", [Decimal("0.0846")])
        (value,) = cursor.fetchone()
    assert from_db(field, value, connection) == Decimal("0.084600")
