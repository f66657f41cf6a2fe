"""A ball step's writes in fewer statements on PostgreSQL (issue 30: a step that decides a prize at most 10):
the ball's row with the game's update, the prizes' rows with their wins, each pair one statement (data-
modifying CTEs). Elsewhere (the embedded hall's SQLite) the same rows through the ORM, one after the other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection, models

from bingo.electronic.models import EBall, ElectronicGame, EPrize, EWin


def _columns(model: type[models.Model]) -> list[models.Field[Any, Any]]:
    return [f for f in model._meta.concrete_fields if not f.primary_key]


def _values(obj: models.Model, fields: Sequence[models.Field[Any, Any]]) -> tuple[str, list[Any]]:
    """One row's VALUES tuple and its parameters, prepared as the ORM's INSERT prepares them."""
    params = [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields]
    return "(" + ", ".join(["%s"] * len(fields)) + ")", params


def _insert(model: type[models.Model], objs: Sequence[models.Model]) -> tuple[str, list[Any]]:
    fields = _columns(model)
    rows = [_values(obj, fields) for obj in objs]
    names = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    sql = f"INSERT INTO {model._meta.db_table} ({names}) VALUES {', '.join(r[0] for r in rows)}"  # noqa: S608 (a model's table and columns)
    return sql, [p for r in rows for p in r[1]]


def save_step(ball: EBall, game: ElectronicGame, fields: Sequence[str]) -> None:
    """The ball's row inserted and the game's `fields` updated, in one statement on PostgreSQL."""
    if connection.vendor != "postgresql":
        ball.save(force_insert=True)
        game.save(update_fields=list(fields))
        return
    insert, params = _insert(EBall, [ball])
    by_name = {f.name: f for f in _columns(ElectronicGame)}
    chosen = [by_name[name] for name in fields]
    sets = ", ".join(f"{connection.ops.quote_name(f.column)} = %s" for f in chosen)
    values = [f.get_db_prep_save(getattr(game, f.attname), connection) for f in chosen]
    table = ElectronicGame._meta.db_table
    sql = (
        f"WITH b AS ({insert} RETURNING id) "  # noqa: S608 (models' tables and columns)
        f"UPDATE {table} SET {sets} WHERE id = %s RETURNING (SELECT id FROM b)"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *values, game.pk])
        (ball.pk,) = cursor.fetchone()
    ball._state.adding = False


def save_prizes(prizes: Sequence[EPrize], wins: Sequence[EWin]) -> None:
    """The prizes' rows and their wins (each win's `prize` one of `prizes`, its code unique among them), in
    one statement on PostgreSQL; the prizes' ids set."""
    if not prizes:
        return
    if connection.vendor != "postgresql":
        EPrize.objects.bulk_create(prizes)
        for win in wins:
            win.prize = win.prize  # its prize_id, now that the prize has one
        EWin.objects.bulk_create(wins)
        return
    insert, params = _insert(EPrize, prizes)
    sql = f"WITH p AS ({insert} RETURNING id, code) "
    if wins:
        sql += (
            f"INSERT INTO {EWin._meta.db_table} (prize_id, card_id, purchase_id, amount) "  # noqa: S608 (a model's table)
            "SELECT p.id, w.card, w.purchase, w.amount FROM p JOIN unnest(%s::text[], %s::bigint[], "
            "%s::bigint[], %s::numeric[]) AS w(code, card, purchase, amount) ON w.code = p.code "
            "RETURNING (SELECT array_agg(id) FROM p), (SELECT array_agg(code) FROM p)"
        )
        params += [
            [w.prize.code for w in wins],
            [w.card_id for w in wins],
            [w.purchase_id for w in wins],
            [w.amount for w in wins],
        ]
    else:
        sql += "SELECT array_agg(id), array_agg(code) FROM p"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        ids, codes = cursor.fetchone()
    by_code = dict(zip(codes, ids, strict=True))
    for prize in prizes:
        prize.pk = by_code[prize.code]
        prize._state.adding = False
    for win in wins:
        win.prize = win.prize
