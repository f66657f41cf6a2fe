"""Django's PostgreSQL backend with two additions that let a bulk insert of the hall's rows take Django's
UNNEST form (one array parameter per column) instead of a VALUES row of placeholders per row, which
Django assembled and psycopg parsed placeholder by placeholder on the writer's thread (a third of a
group of purchases' CPU):

- the project's money column (halls.fields.MoneyField, internal type "MoneyField", PostgreSQL's numeric)
  is among the backend's data types, as DecimalField is (the column itself is unchanged: MoneyField.db_type
  already answers numeric(p, s));
- the insert compiler sees a BinaryField without its placeholder hook (`compiler`).
"""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    compiler_module = "halls.postgresql.compiler"


class DatabaseWrapper(base.DatabaseWrapper):
    data_types: dict[str, Any] = {
        **base.DatabaseWrapper.data_types,
        "MoneyField": base.DatabaseWrapper.data_types["DecimalField"],
    }
    ops_class = DatabaseOperations
