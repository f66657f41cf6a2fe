"""A transactional test's flush on PostgreSQL that empties only the tables a test wrote to.

Django empties the test database after each transactional test with one TRUNCATE of every table (about 170):
PostgreSQL gives each table, index and sequence a new file, 1.5-2 s a flush on the CI's two cores, whatever
the test wrote. This flush asks which tables hold a row (one query) and deletes those rows, with the foreign
keys' and the append-only tables' row triggers off for that transaction only (`session_replication_role =
replica`, as a superuser's restore does: the test server's user is one). The tables end as empty as the
TRUNCATE leaves them. A flush asked to reset the sequences, or by a user who may not switch the triggers off,
is Django's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import connections

SqlFlush = Callable[..., list[str]]


def non_empty(connection: Any, tables: list[str]) -> list[str]:
    """The tables of `tables` holding at least one row (one query)."""
    if not tables:
        return []
    quote = connection.ops.quote_name
    probes = " UNION ALL ".join(
        f"SELECT {i} WHERE EXISTS (SELECT 1 FROM {quote(table)})"  # noqa: S608 (Django's own table names)
        for i, table in enumerate(tables)
    )
    with connection.cursor() as cursor:
        cursor.execute(probes)
        return [tables[row[0]] for row in cursor.fetchall()]


def may_skip_triggers(connection: Any) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        row = cursor.fetchone()
    return bool(row and row[0])


def deleting(original: SqlFlush) -> SqlFlush:
    """`django.core.management.sql.sql_flush` deleting the rows of the non-empty tables on PostgreSQL."""

    def sql_flush(
        style: Any, connection: Any, reset_sequences: bool = True, allow_cascade: bool = False
    ) -> list[str]:
        if connection.vendor != "postgresql" or reset_sequences or not may_skip_triggers(connection):
            return original(style, connection, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
        quote = connections[connection.alias].ops.quote_name
        deletes = [f"DELETE FROM {quote(table)}" for table in non_empty(connection, tables)]  # noqa: S608
        # flush runs these in one transaction: SET LOCAL ends with it. Never an empty list: flush then skips
        # the post_migrate signal (the content types and permissions made again), which TRUNCATE always has.
        return ["SET LOCAL session_replication_role = replica", *deletes]

    return sql_flush
