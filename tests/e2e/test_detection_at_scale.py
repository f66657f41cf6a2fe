"""A self-playing room with 100,000 cards sold plays a game to Bingo through a real Celery worker.

The worker draws each ball, records the lines and bingos it made (bingo.traditional.services.detection) and,
the room
being self-playing, files the claims of the recorded winners; this process plays the caller, confirming
each prize once nothing recorded is left unclaimed, and polls the caller's game view over HTTP meanwhile.

Setup shortcut (said plainly): the 100,000 cards are valid master cards made here with NumPy (decade-
preserving relabellings of real strips) and COPYed into the card table, and the 100,000 SoldCard rows are
COPYed in as one sale; the close of sales, the draw, the claims and the awards all go through the services.
The expected winners are recomputed here with plain NumPy from the stored balls and packed numbers.
"""

from __future__ import annotations

import json
import statistics
import time
import urllib.request
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.authtoken.models import Token

from bingo.cards import CardGrid, column_of, generate_series
from bingo.traditional.models import (
    Ball,
    Card,
    CardSeries,
    DrawSource,
    Game,
    GameState,
    PrizeResult,
    SaleKind,
    SaleOperation,
    SoldCard,
)
from bingo.traditional.services import claims, detection, games, readmodels
from demo.models import AutoplayRoom
from halls.models import GameSession, Room
from tests.e2e.celery_support import CeleryProcesses

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(600)]

CARDS = 100_000
VIEW_LIMIT_BYTES = 50_000


def valid_cards(count: int, seed: int) -> np.ndarray:
    """`count` distinct valid cards as (count, 3, 9) uint8 (0 = blank): real strips with each decade's
    numbers relabelled at random, every column re-sorted downwards (still a valid strip of 1-90)."""
    rng = np.random.default_rng(seed)
    base = np.array(
        [[[n or 0 for n in row] for row in g.rows] for g in generate_series(b"scale", 50)], np.uint8
    )
    base = base.reshape(50, 6, 3, 9)
    strips = -(-count // 6)
    decade = np.array([column_of(n) for n in range(1, 91)])
    order = np.argsort(decade * 2.0 + rng.random((strips, 90)), axis=1)
    relabel = np.zeros((strips, 91), dtype=np.uint8)
    relabel[:, 1:] = order + 1
    grids = np.take_along_axis(
        relabel[:, None, :], base[np.arange(strips) % 50].reshape(strips, 1, -1), axis=2
    )
    grids = grids.reshape(strips * 6, 3, 9)[:count]
    filled = grids > 0
    ordered = np.sort(np.where(filled, grids, 255), axis=1)
    rank = np.clip(np.cumsum(filled, axis=1) - 1, 0, 2)
    return np.where(filled, np.take_along_axis(ordered, rank, axis=1), 0).astype(np.uint8)


def grid_json(grid: np.ndarray) -> str:
    return json.dumps([[int(v) or None for v in row] for row in grid])


def copy_rows(table: str, columns: list[str], rows: Any) -> None:
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row(row)


def sell_bulk(game: Game, caller: Any, cashier: Any, venue: Any) -> CardSeries:
    grids = valid_cards(CARDS, seed=9)
    packed = grids[grids > 0].reshape(CARDS, 15)
    keys = [f"{sum(1 << (int(n) - 1) for n in card):023x}" for card in packed]
    assert len(set(keys)) == CARDS
    series = CardSeries.objects.create(
        venue=venue, code="BIG", face_value=Decimal("1.00"), strips=-(-CARDS // 6), seed="bulk",
        created_at=timezone.now(), created_by=caller,
    )  # fmt: skip
    copy_rows(
        Card._meta.db_table,
        ["series_id", "serial", "grid", "key", "security_code", "numbers"],
        (
            (series.pk, i + 1, grid_json(grids[i]), keys[i], "BULK", packed[i].tobytes())
            for i in range(CARDS)
        ),
    )  # fmt: skip
    CardGrid.from_json(Card.objects.get(series=series, serial=CARDS).grid)  # the made cards are valid
    sale = SaleOperation.objects.create(
        game=game, series=series, kind=SaleKind.SELL, first_serial=1, last_serial=CARDS, cards=CARDS,
        amount=Decimal(CARDS), cashier=cashier, created_at=timezone.now(),
    )  # fmt: skip
    ids = Card.objects.filter(series=series).order_by("serial").values_list("pk", "key")
    copy_rows(
        SoldCard._meta.db_table,
        ["game_id", "card_id", "card_key", "sale_id"],
        ((game.pk, pk, key, sale.pk) for pk, key in ids),
    )
    return series


def expected_completions(game: Game) -> set[tuple[str, int, int]]:
    """Plain NumPy: each card's line at the earliest of its rows' last balls, its bingo at its last ball."""
    rows = SoldCard.objects.filter(game=game).values_list("card_id", "card__numbers")
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    numbers = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype=np.uint8).reshape(-1, 3, 5)
    ordinal_of = np.full(91, 10_000)
    for ordinal, number in Ball.objects.filter(game=game).values_list("ordinal", "number"):
        ordinal_of[number] = ordinal
    row_done = ordinal_of[numbers].max(axis=2)
    line_at, bingo_at = row_done.min(axis=1), row_done.max(axis=1)
    lines = {("line", int(i), int(at)) for i, at in zip(ids, line_at, strict=True) if at < 10_000}
    return lines | {("bingo", int(i), int(at)) for i, at in zip(ids, bingo_at, strict=True) if at < 10_000}


def get_view(server_url: str, game: Game, token: str) -> tuple[float, int]:
    request = urllib.request.Request(  # noqa: S310 (the test's own server)
        f"{server_url}/api/games/{game.pk}/",
        headers={"Authorization": f"Token {token}", "Accept": "application/json"},
    )
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
        body = response.read()
        assert response.status == 200
    return time.perf_counter() - started, len(body)


def test_a_self_playing_room_with_100000_cards_pays_the_bingo_to_the_right_cards(
    celery_procs: CeleryProcesses,
    server_url: str, venue: Any, room: Room, session: GameSession, caller: Any, cashier: Any, ball_set: Any,
    settings: Any, tmp_path: Path,
) -> None:  # fmt: skip
    # The index file written at the close of sales here is what the worker maps (same host, same directory).
    settings.HALL_DETECTOR_DIR = celery_procs.env["HALL_DETECTOR_DIR"] = str(tmp_path / "detector")
    AutoplayRoom.objects.create(
        room=room
    )  # the worker files the claims of the recorded winners after each ball
    game = games.create_game(room=room, actor=caller, draw_source=DrawSource.RNG, pace_seconds=Decimal("0.2"))
    games.open_sales(game=game, actor=caller)
    series = sell_bulk(game, caller, cashier, venue)
    closing = time.perf_counter()
    game = games.close_sales(game=game, actor=caller)
    closed_in = time.perf_counter() - closing
    assert game.cards_sold == CARDS and game.sales_total == Decimal("100000.00")
    token = Token.objects.create(user=caller).key
    (index_file,) = (tmp_path / "detector").glob("*.idx")
    written = index_file.stat().st_mtime_ns

    celery_procs.start_worker("worker")
    celery_procs.start_beat()
    games.start_draw(game=game, actor=caller)
    views: list[tuple[float, int]] = []
    deadline = time.monotonic() + 300
    while True:
        game.refresh_from_db()
        if game.state == GameState.CLOSED:
            break
        assert time.monotonic() < deadline, f"{game.state} at ball {game.balls_drawn}\n{celery_procs.logs()}"
        views.append(get_view(server_url, game, token))
        if (
            game.state == GameState.PAUSED
            and game.claim_window
            and not readmodels.unclaimed_winners(game)[game.claim_window]
        ):
            # Every recorded winner of the window has claimed: "any more?" is answered.
            claims.confirm_claims(game=game, kind=game.claim_window, actor=caller)
        time.sleep(0.05)

    assert "unusable" not in celery_procs.log("worker"), celery_procs.log("worker")[-3000:]
    assert index_file.stat().st_mtime_ns == written  # mapped by the worker, never rebuilt from the database
    expected = expected_completions(game)
    recorded = detection.recorded_completions(game)
    assert recorded == expected
    line = PrizeResult.objects.get(game=game, kind="line")
    bingo = PrizeResult.objects.get(game=game, kind="bingo")
    assert bingo.ordinal == game.balls_drawn
    by_line = {card for kind, card, at in expected if kind == "line" and at <= line.ordinal}
    by_bingo = {card for kind, card, at in expected if kind == "bingo" and at <= bingo.ordinal}
    assert by_line and by_bingo
    assert {a.claim.card_id for a in line.awards.select_related("claim")} == by_line
    assert {a.claim.card_id for a in bingo.awards.select_related("claim")} == by_bingo
    assert all(a.claim.series_id == series.pk for a in bingo.awards.select_related("claim"))
    shares = [a.amount for a in bingo.awards.all()]
    assert set(shares) == {bingo.share} and sum(shares) + bingo.remainder == bingo.amount == Decimal(
        "50000.00"
    )

    seconds = sorted(t for t, _ in views)
    print(
        f"\n{CARDS} cards: close of sales {closed_in:.2f} s; "
        f"line at ball {line.ordinal} ({line.winners} winners), "
        f"bingo at ball {bingo.ordinal} ({bingo.winners}); game view polled {len(views)} times: "
        f"p50 {statistics.median(seconds) * 1e3:.0f} ms, max {seconds[-1] * 1e3:.0f} ms, "
        f"largest {max(size for _, size in views)} bytes"
    )
    assert max(size for _, size in views) <= VIEW_LIMIT_BYTES
    assert statistics.median(seconds) <= 0.25
