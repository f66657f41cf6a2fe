"""The append-only triggers on SQLite (the embedded demo), where django-pgtrigger installs nothing.

The same rows are refused UPDATE and DELETE by SQLite triggers made after every ``migrate`` (post_migrate:
SQLite's schema editor rebuilds a table to alter it, which drops its triggers, so they are made again each
time). They stop a mistake or a careless edit; whoever can write the file can drop them, as the owner can
on PostgreSQL: the keyed chains, seals and anchors are what show it.
"""

from __future__ import annotations

from typing import Any, cast

import pgtrigger
from django.db import connections
from django.db.models import Model

SQLITE_TRIGGERS = ("append_only", "head_never_deleted", "head_only_grows")


def statements() -> list[tuple[type[Model], str, str]]:
    """(model, trigger name, CREATE TRIGGER) per protected table and operation, from the models'
    pgtrigger declarations."""
    made: list[tuple[type[Model], str, str]] = []
    for registered, trigger in pgtrigger.registered():
        if trigger.name not in SQLITE_TRIGGERS:
            continue  # conditional ones (a hand pay written once) are PostgreSQL's only
        model = cast(type[Model], registered)
        table = model._meta.db_table
        condition = ""
        if trigger.name == "head_only_grows":
            condition = " WHEN NEW.length <= OLD.length"  # the chain's tip only moves forward
        for operation in ("UPDATE", "DELETE"):
            if operation not in str(trigger.operation):
                continue
            name = f"{table}_{trigger.name}_{operation.lower()}"
            message = f"append-only: cannot {operation.lower()} rows of {table}"
            sql = (
                f'CREATE TRIGGER IF NOT EXISTS "{name}" BEFORE {operation} ON "{table}"{condition} '
                f"BEGIN SELECT RAISE(ABORT, '{message}'); END"
            )
            made.append((model, name, sql))
    made.extend(_corrected_only(model) for model in _models_with("number_corrected_only"))
    made.extend(_legs_balance(model) for model in _models_with("legs_balance"))
    return made


def _models_with(trigger_name: str) -> list[type[Model]]:
    return [
        cast(type[Model], model) for model, trigger in pgtrigger.registered() if trigger.name == trigger_name
    ]


def _corrected_only(model: type[Model]) -> tuple[type[Model], str, str]:
    """bingo.Ball's UPDATE rule: only its number changes, and only to what a correction row records."""
    table = model._meta.db_table
    name = f"{table}_number_corrected_only"
    message = f"append-only: {table} changes only its number, through its correction"
    # Table names come from the models, never from input.
    sql = (
        f'CREATE TRIGGER IF NOT EXISTS "{name}" BEFORE UPDATE ON "{table}" WHEN '  # noqa: S608
        "NEW.id IS NOT OLD.id OR NEW.game_id IS NOT OLD.game_id OR NEW.ordinal IS NOT OLD.ordinal "
        "OR NEW.source IS NOT OLD.source OR NEW.drawn_at IS NOT OLD.drawn_at "
        "OR NEW.entered_by_id IS NOT OLD.entered_by_id OR NOT EXISTS (SELECT 1 FROM bingo_ballcorrection c "
        "WHERE c.ball_id = OLD.id AND c.old_number = OLD.number AND c.new_number = NEW.number) "
        f"BEGIN SELECT RAISE(ABORT, '{message}'); END"
    )
    return (model, name, sql)


def _legs_balance(model: type[Model]) -> tuple[type[Model], str, str]:
    """cashier.Leg's balance rule (PostgreSQL checks it at commit): once a transaction has the legs it
    declared (``leg_count``), they sum to zero; no leg beyond them. SQLite holds money in integer cents."""
    table = model._meta.db_table
    parent = model._meta.get_field("transaction").related_model._meta.db_table  # type: ignore[union-attr]
    name = f"{table}_legs_balance"
    # Table names come from the models, never from input.
    mine = f'FROM "{table}" WHERE transaction_id = NEW.transaction_id'
    declared = f'(SELECT leg_count FROM "{parent}" WHERE id = NEW.transaction_id)'  # noqa: S608
    sql = (
        f'CREATE TRIGGER IF NOT EXISTS "{name}" AFTER INSERT ON "{table}" '
        f"WHEN (SELECT COUNT(*) {mine}) > {declared} "
        f"OR ((SELECT COUNT(*) {mine}) = {declared} AND (SELECT SUM(amount) {mine}) <> 0) "
        f"BEGIN SELECT RAISE(ABORT, 'ledger transaction does not balance'); END"
    )
    return (model, name, sql)


def missing(using: str = "default") -> list[str]:
    """The triggers an SQLite database should have and does not (dropped by hand or by a rebuild)."""
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        present = {row[0] for row in cursor.fetchall()}
    return sorted(name for _, name, _ in statements() if name not in present)


def install(using: str = "default", **kwargs: Any) -> None:
    """post_migrate: (re)make the triggers on an SQLite database; nothing elsewhere."""
    connection = connections[using]
    if connection.vendor != "sqlite":
        return
    tables = set(connection.introspection.table_names())
    with connection.cursor() as cursor:
        for model, _, sql in statements():
            if model._meta.db_table in tables:  # a partial migrate may not have made it yet
                cursor.execute(sql)


def drop(using: str = "default", **kwargs: Any) -> None:
    """pre_migrate (and a test run's flush): remove them, so a migration may rewrite rows (SQLite rebuilds
    a table to alter it) and a flush may DELETE; post_migrate's ``install`` makes them again. Nothing
    elsewhere than SQLite."""
    connection = connections[using]
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        for _, name, _ in statements():
            cursor.execute(f'DROP TRIGGER IF EXISTS "{name}"')
