"""The money columns (MoneyField, RateField): exact Decimals on every database, numeric on PostgreSQL and
integer smallest units on SQLite. Money's arithmetic, parsing and formatting are halls.money (pure).
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, TypeVar

import django_stubs_ext
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.migrations.operations import RunPython


def _is_sqlite(connection: BaseDatabaseWrapper) -> bool:
    return connection.vendor == "sqlite"


def to_units(value: Decimal, decimal_places: int) -> int:
    """The integer of smallest units. A value finer than the scale is rounded half away from zero, as
    PostgreSQL's ``numeric(p, s)`` rounds it on the way in (the services quantize before they write)."""
    return int(value.scaleb(decimal_places).to_integral_value(rounding=ROUND_HALF_UP))


def from_units(units: int | str | float | Decimal, decimal_places: int) -> Decimal:
    """The Decimal of `units` smallest units, at the field's scale (``2170.400000``)."""
    if isinstance(units, float):  # only a bare literal can come back as a float; a column never does
        units = Decimal(repr(units))
    exact = Decimal(units)
    if exact != exact.to_integral_value():
        raise ValueError(f"a money column on SQLite holds whole units, not {units!r}")
    return exact.scaleb(-decimal_places).quantize(Decimal(1).scaleb(-decimal_places))


# Generic like models.DecimalField, so django-stubs types a MoneyField's values as it types a DecimalField's
# (Decimal, or Decimal | None when null=True); subscripting fields at run time is django_stubs_ext's.
django_stubs_ext.monkeypatch()
_ST = TypeVar("_ST", contravariant=True)
_GT = TypeVar("_GT", covariant=True)


class MoneyField(models.DecimalField[_ST, _GT]):
    """A money column: ``numeric(max_digits, decimal_places)`` on PostgreSQL, exactly as DecimalField; on
    SQLite an INTEGER of the smallest unit (cents for 2 places, micro-units for 6), so comparisons, ORDER
    BY, SUM, MIN / MAX and + / - between columns of one scale are exact 64-bit arithmetic (an overflow is an
    error, never a rounding); every read turns it back into a Decimal of the field's scale.

    Rules for queries (the field enforces what it can):
    - an aggregate or expression over money takes its output field from the column (``Sum("bet")``) or
      names a MoneyField of the same scale, never a plain DecimalField;
    - SQL multiplication or division of money (``F("amount") * 2``) is refused on SQLite: do it in Python;
    - a Decimal literal inside an expression over money is a ``Value(x, output_field=MoneyField(...))`` of
      the same scale (a bare zero is the one safe literal);
    - raw SQL reading a money column converts it with ``from_db`` (a no-op on PostgreSQL).
    """

    description = "Money (exact; integer smallest units on SQLite)"

    def get_internal_type(self) -> str:
        # Not "DecimalField": the SQLite backend would read it through a float (15 digits) and CAST the
        # expressions over it to NUMERIC. Only db_type / cast_db_type below look the type up.
        return "MoneyField"

    def db_type(self, connection: BaseDatabaseWrapper) -> str | None:
        if _is_sqlite(connection):
            # SQLite's decimal is a double: SUM(bet) of 2170.40 came back 2170.40000000001, and an 18-digit
            # meter does not survive at all. Whole units are exact.
            return "integer"
        return connection.data_types["DecimalField"] % self.db_type_parameters(connection)

    def rel_db_type(self, connection: BaseDatabaseWrapper) -> str | None:
        return self.db_type(connection)

    def cast_db_type(self, connection: BaseDatabaseWrapper) -> str | None:
        if _is_sqlite(connection):
            return "integer"
        db_type = connection.ops.cast_data_types.get("DecimalField")
        if db_type:
            return str(db_type % self.db_type_parameters(connection))
        return self.db_type(connection)

    def get_db_prep_value(self, value: Any, connection: BaseDatabaseWrapper, prepared: bool = False) -> Any:
        value = super().get_db_prep_value(value, connection, prepared)
        if value is None or hasattr(value, "as_sql") or not _is_sqlite(connection):
            return value
        assert self.decimal_places is not None
        return to_units(Decimal(value), self.decimal_places)

    def from_db_value(self, value: Any, expression: Any, connection: BaseDatabaseWrapper) -> Decimal | None:
        if value is None or not _is_sqlite(connection):
            return value  # type: ignore[no-any-return]  # psycopg hands numeric back as Decimal
        assert self.decimal_places is not None
        return from_units(value, self.decimal_places)


class RateField(MoneyField[_ST, _GT]):
    """A share of a bet (``0.084600``): stored like money, so a check such as ``rate <= 1 - reserve_rate``
    compares exact units on SQLite too (with ``Value(Decimal(1), output_field=RateField(...))``)."""

    description = "A rate (exact; integer smallest units on SQLite)"


def from_db(field: models.Field[Any, Any], value: Any, connection: BaseDatabaseWrapper) -> Any:
    """A money column's value read by raw SQL, as the ORM would have read it (Decimal on every database)."""
    if isinstance(field, MoneyField):
        return field.from_db_value(value, None, connection)
    return value


# --- migrations -----------------------------------------------------------------------------------------


def sqlite_to_units(columns: Iterable[tuple[str, str, str]]) -> RunPython:
    """A migration step for SQLite databases written before the money columns: ``(app_label, model, field)``
    columns that held decimals (floats with a fraction) now hold integer units. On a new database the
    tables are empty and it changes nothing; on PostgreSQL it does nothing at all."""
    wanted = list(columns)

    def forward(apps: Any, schema_editor: Any) -> None:
        if not _is_sqlite(schema_editor.connection):
            return
        for app_label, model_name, field_name in wanted:
            model = apps.get_model(app_label, model_name)
            field = model._meta.get_field(field_name)
            table = schema_editor.quote_name(model._meta.db_table)
            column = schema_editor.quote_name(field.column)
            scale = 10 ** int(field.decimal_places)
            # Whole values were kept as INTEGER, others as REAL: both to the nearest unit, once.
            schema_editor.execute(
                f"UPDATE {table} SET {column} = CAST(ROUND({column} * {scale}) AS INTEGER) "  # noqa: S608
                f"WHERE {column} IS NOT NULL"
            )

    def backward(apps: Any, schema_editor: Any) -> None:
        if not _is_sqlite(schema_editor.connection):
            return
        for app_label, model_name, field_name in wanted:
            model = apps.get_model(app_label, model_name)
            field = model._meta.get_field(field_name)
            table = schema_editor.quote_name(model._meta.db_table)
            column = schema_editor.quote_name(field.column)
            scale = 10 ** int(field.decimal_places)
            schema_editor.execute(
                f"UPDATE {table} SET {column} = {column} * 1.0 / {scale} WHERE {column} IS NOT NULL"  # noqa: S608
            )

    return RunPython(forward, backward, elidable=False)
