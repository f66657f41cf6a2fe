"""What an attacker with the database owner's rights does: switch the append-only triggers off, then edit."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection
from django.db.models import Model


@contextmanager
def as_db_owner(*models: type[Model]) -> Iterator[None]:
    """Disable the user triggers (pgtrigger's append-only ones) of the models' tables for the block."""
    if connection.vendor == "sqlite":  # the embedded hall's triggers are dropped and made again
        from halls import sqlite_triggers

        sqlite_triggers.drop()
        try:
            yield
        finally:
            sqlite_triggers.install()
        return
    tables = [model._meta.db_table for model in models]
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no ALTER TABLE with deferred checks pending
        for table in tables:
            cursor.execute(f'ALTER TABLE "{table}" DISABLE TRIGGER USER')
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            for table in tables:
                cursor.execute(f'ALTER TABLE "{table}" ENABLE TRIGGER USER')
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def forged(token: str) -> str:
    """The token with its first character changed: always wrong (a fixed "x" was the token 1 time in 64)."""
    return ("y" if token[0] == "x" else "x") + token[1:]
