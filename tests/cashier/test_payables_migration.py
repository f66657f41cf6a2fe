"""Migrations bingo 0017, bingo_network 0006 and bingo_simultaneous 0006: the prizes awarded before the
till named their room ("Partida 1 · Bingo · cartón A-0345", two rooms' game 1 alike) read, while unpaid,
as the ones awarded since: the room and its game first ("Sala 1 · Partida 1 · Bingo · cartón A-0345"),
a network prize's round or network game beside them. A paid one keeps the words its receipt printed."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from bingo.network.interconnected.models import KnownRound, RoundGame
from bingo.traditional.models import CardSeries, Claim, Game
from halls import sqlite_triggers
from halls.cashier.models import Payable, PayableKind
from halls.cashier.services import payables
from tests.cashier.payable_support import line_and_bingo

pytestmark = pytest.mark.django_db(transaction=True)
BEFORE = [
    ("bingo", "0016_verbose_names"),
    ("bingo_network", "0005_verbose_names"),
    ("bingo_simultaneous", "0005_verbose_names"),
]
D = Decimal


def _old(payable: Payable, description: str) -> Payable:
    Payable.objects.filter(pk=payable.pk).update(description=description)
    return payable


def _made(game: Game, source: str, description: str, kind: str = PayableKind.ACCUMULATED) -> Payable:
    made = payables.create_payable(
        venue_id=game.room.venue_id,
        kind=kind,
        source=source,
        description=description,
        amount=D("1.00"),
        actor="t",
    )
    assert made is not None
    return made


@pytest.mark.timeout(900)
def test_old_unpaid_payables_name_their_room_and_game(
    manual_game: Game, card_series: CardSeries, caller: User, cashier: User
) -> None:
    won: dict[str, Any] = line_and_bingo(manual_game, card_series, caller, cashier)
    game: Game = won["game"]
    room, n = game.room.name, game.number
    claim = Claim.objects.filter(game=game).order_by("pk").first()
    assert claim is not None
    sqlite_triggers.drop()  # SQLite: migrations run without the append-only triggers (as `migrate` does)
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        # The rows as the code before wrote them (the schema is the same: the migrations move data only).
        first, *others = won["lines"]
        line = _old(first, f"Partida {n} · Línea · cartón A-{won['line_serials'][0]:04d}")
        paid = _old(others[0], f"Partida {n} · Línea · cartón A-{won['line_serials'][1]:04d}")
        Payable.objects.filter(pk=paid.pk).update(state="paid")
        bingo = _old(won["bingo"], f"Partida {n} · Bingo · cartón A-{won['bingo_serial']:04d}")
        program = _made(
            game, f"pool.award:999/claim:{claim.pk}", f"Partida {n} · Bolsa Extra · cartón A-0001"
        )
        stranger = _made(game, "pool.award:998", "Mesa 1 · Bote de póker · asiento 3", PayableKind.TABLE)
        known = KnownRound.objects.create(
            prize_code="IB1",
            number=4,
            name="Gran Bingo",
            percent=D("10"),
            reserve_percent=D("0"),
            max_ball=40,
            halls=[],
            closes_at=timezone.now(),
        )
        RoundGame.objects.create(
            round=known, venue_id=game.room.venue_id, game=game, sales=D(0), to_meter=D(0), to_reserve=D(0)
        )
        spanish = _made(
            game, "network.share:5", f"Premio interconexionado IB1 · ronda 4 · partida {n} · cartón A-0007"
        )
        english = _made(
            game, "network.share:6", f"Interconnected prize IB1 · round 4 · game {n} · card A-0008"
        )
        simultaneous = _made(
            game,
            f"simultaneous:S-12:line:{claim.pk}",
            "Partida simultánea S-12 · Línea de la red · cartón A-0003",
            PayableKind.LINE,
        )
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        sqlite_triggers.install()

    def now(payable: Payable) -> str:
        payable.refresh_from_db()
        return payable.description

    assert now(line) == f"{room} · Partida {n} · Línea · cartón A-{won['line_serials'][0]:04d}"
    assert now(bingo) == f"{room} · Partida {n} · Bingo · cartón A-{won['bingo_serial']:04d}"
    assert now(program) == f"{room} · Partida {n} · Bolsa Extra · cartón A-0001"
    assert now(spanish) == f"{room} · Partida {n} · Premio interconexionado IB1 (ronda 4) · cartón A-0007"
    assert now(english) == f"{room} · Game {n} · Interconnected prize IB1 (round 4) · card A-0008"
    assert now(simultaneous) == f"{room} · Partida {n} (simultánea S-12) · Línea de la red · cartón A-0003"
    # Left as they were: a paid prize (its receipt's words), and what is not a game's prize.
    assert now(paid) == f"Partida {n} · Línea · cartón A-{won['line_serials'][1]:04d}"
    assert now(stranger) == "Mesa 1 · Bote de póker · asiento 3"
    # Migrated again (a re-run, or one already in the new form): nothing changes twice.
    executor = MigrationExecutor(connection)
    sqlite_triggers.drop()
    try:
        executor.migrate(BEFORE)
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
    finally:
        sqlite_triggers.install()
    assert now(line) == f"{room} · Partida {n} · Línea · cartón A-{won['line_serials'][0]:04d}"
    assert now(simultaneous) == f"{room} · Partida {n} (simultánea S-12) · Línea de la red · cartón A-0003"
