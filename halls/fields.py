"""The money columns (MoneyField, RateField): a Decimal with a fixed scale, stored exactly on every database.

The arithmetic, parsing and formatting of money are in halls.money (pure); this module is its Django side.

PostgreSQL keeps it as ``numeric(max_digits, decimal_places)``, exactly as ``models.DecimalField`` does
(same schema, same values, same SQL). SQLite has no exact decimal type: a ``decimal`` column has NUMERIC
affinity, so any value with a fraction is stored as a double, and ``SUM`` and arithmetic in SQL are float
(``SUM(bet)`` of 2170.40 € came back as 2170.40000000001; a 6-decimal meter of 18 significant digits does
not survive a double at all). On SQLite a money column therefore stores an INTEGER of the field's smallest
unit (cents for ``decimal_places=2``, micro-units for 6): comparisons, ``ORDER BY``, ``SUM``, ``MIN`` /
``MAX`` and ``+`` / ``-`` between columns of the same scale are exact 64-bit integer arithmetic (an
overflow is an error, never a rounding), and every read, single or aggregated, turns the integer back into
a Decimal of the field's scale. Nothing above the field changes: the ORM, filters with Decimal literals,
``Sum(...)``, ``Coalesce(Sum(...), ZERO)`` and ``bulk_create`` / ``bulk_update`` all go through it.

Rules for queries (the field enforces what it can):
- an aggregate or expression over money takes its output field from the column (``Sum("bet")``) or
  names a ``MoneyField`` of the same scale (``output_field=MoneyField(...)``), never a plain DecimalField;
- SQL multiplication or division of money (``F("amount") * 2``) is refused by Django on SQLite: do it in
  Python with Decimal, or sum with filters instead;
- a Decimal literal inside an expression over money (``F("amount") + x``, ``Coalesce(Sum(...), x)``) is a
  ``Value(x, output_field=MoneyField(...))`` of the same scale (a bare zero is the one safe literal);
- raw SQL reading a money column converts it with ``from_db`` (a no-op on PostgreSQL).
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
    """A money column (see the module docstring): ``numeric`` on PostgreSQL, integer units on SQLite."""

    description = "Money (exact; integer smallest units on SQLite)"

    def get_internal_type(self) -> str:
        # Not "DecimalField": the SQLite backend would read it through a float (15 digits) and CAST the
        # expressions over it to NUMERIC. Only db_type / cast_db_type below look the type up.
        return "MoneyField"

    def db_type(self, connection: BaseDatabaseWrapper) -> str | None:
        if _is_sqlite(connection):
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
