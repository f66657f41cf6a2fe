"""Django's PostgreSQL compilers, the insert compiler seeing a BinaryField as the plain column it is here.

Django's bulk insert takes the UNNEST form unless a field has a `get_placeholder`; BinaryField has one
for the databases that wrap binary values (MySQL's ``_binary %s``), but on PostgreSQL it answers ``%s``
for every value (operations.binary_placeholder_sql), so a bulk insert of bytes (a group's electronic
cards, ECard.cells) can take the UNNEST form as well: the field is handed to Django's check without it.
"""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import compiler
from django.db.backends.postgresql.compiler import (
    SQLAggregateCompiler,
    SQLCompiler,
    SQLDeleteCompiler,
    SQLUpdateCompiler,
)
from django.db.models import BinaryField

__all__ = [
    "SQLAggregateCompiler",
    "SQLCompiler",
    "SQLDeleteCompiler",
    "SQLInsertCompiler",
    "SQLUpdateCompiler",
]


class _WithoutPlaceholder:
    """A BinaryField as Django's insert sees it, but for its get_placeholder (always ``%s`` here)."""

    def __init__(self, field: BinaryField[Any, Any]) -> None:
        self._field = field

    def __getattr__(self, name: str) -> Any:
        if name == "get_placeholder":
            raise AttributeError(name)
        return getattr(self._field, name)


class SQLInsertCompiler(compiler.SQLInsertCompiler):  # type: ignore[misc]  # untyped in django-stubs
    def assemble_as_sql(self, fields: Any, value_rows: Any) -> Any:
        seen = [_WithoutPlaceholder(f) if isinstance(f, BinaryField) else f for f in fields]
        return super().assemble_as_sql(seen, value_rows)
