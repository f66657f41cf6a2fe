"""The terminal's snapshot with its speciality's part from the web process's cache (issue 30, a reconnect
storm; bingo.electronic.services.readmodels.speciality_part): built once per change of the room stream for
every terminal of the speciality, what is the terminal's own read in three queries (its row, the two streams'
cursors, its cards bought for the game on sale); a ball (an event on the room stream) is in the next one."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bingo.electronic.models import EBall, EGameState
from bingo.electronic.services import readmodels
from halls import events, snapshot_cache
from halls.eventtypes import EGameBall, EventType
from tests.bingo.electronic.support import (
    buy,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)
from tests.bingo.electronic.test_game_known_balls import C1
from tests.bingo.electronic.test_terminal_snapshot import _game

pytestmark = pytest.mark.django_db

SHARED = ("speciality", "rules", "drawing", "meters", "network", "last_games")


def test_a_second_terminals_snapshot_reads_only_its_own_rows_and_a_ball_is_in_the_next(
    venue: Any, operator: Any, cashier: Any
) -> None:
    cache = snapshot_cache.cache()
    speciality = make_speciality(venue, operator)
    first_terminal, _ = make_terminal(speciality, operator)
    second_terminal, _ = make_terminal(speciality, operator)
    session = open_verified_session(speciality, operator)
    selling = _game(speciality, session, 1, EGameState.SELLING)
    buy(selling, second_terminal, funded_card(venue, cashier), [C1], "k1")

    first = readmodels.terminal_snapshot(first_terminal)
    assert cache.builds == 1
    with CaptureQueriesContext(connection) as queries:
        second = readmodels.terminal_snapshot(second_terminal)
    # Its row, the two streams' cursors, its cards bought for the game on sale: the speciality's part cached.
    assert len(queries) == 3, [q["sql"] for q in queries]
    assert cache.builds == 1
    assert (first["selling"]["mine"], second["selling"]["mine"]) == (0, 1)
    assert first["selling"]["game"] == second["selling"]["game"] == selling.pk
    assert second["terminal"]["id"] == second_terminal.pk and second["terminal"]["refusal"] is None
    assert {k: second[k] for k in SHARED} == {k: first[k] for k in SHARED}
    assert second["seqs"][speciality.stream] == first["seqs"][speciality.stream]

    # A ball drawn (its event on the room stream): the next snapshot is built again and shows it.
    drawing = _game(speciality, session, 2, EGameState.DRAWING)
    with transaction.atomic():
        now = timezone.now()
        EBall.objects.create(game=drawing, ordinal=1, number=42, drawn_at=now)
        ball = EGameBall(
            speciality=speciality.pk,
            game=drawing.pk,
            number=2,
            state="drawing",
            ordinal=1,
            ball=42,
            drawn_at=now,
        )
        events.emit(speciality.stream, EventType.EGAME_BALL, ball)
    after = readmodels.terminal_snapshot(first_terminal)
    assert cache.builds == 2
    assert after["drawing"]["game"] == drawing.pk and after["drawing"]["balls"] == [42]
    assert after["seqs"][speciality.stream] == events.current_seq(speciality.stream)
    assert after["seqs"][speciality.stream] > first["seqs"][speciality.stream]


def test_the_speciality_part_is_kept_per_language(venue: Any, operator: Any) -> None:
    from django.utils import translation

    speciality = make_speciality(venue, operator)
    terminal, _ = make_terminal(speciality, operator)
    with translation.override("es"):
        readmodels.terminal_snapshot(terminal)
    with translation.override("en"):
        readmodels.terminal_snapshot(terminal)
        readmodels.terminal_snapshot(terminal)
    assert snapshot_cache.cache().builds == 2


def test_the_terminal_apis_snapshot_once_warm_reads_the_device_and_the_terminals_own_rows(
    venue: Any, operator: Any, cashier: Any
) -> None:
    """What a terminal page asks after its socket reopens (issue 30): the device's token checked, the
    terminal's own rows; the speciality's part from the process's cache."""
    from rest_framework.test import APIClient

    from tests.bingo.electronic.sales_support import on_sale

    sale = on_sale(venue, operator, cashier)
    other, other_token = make_terminal(sale.speciality, operator)
    first, second = APIClient(), APIClient()
    first.credentials(HTTP_AUTHORIZATION=f"CashDevice {sale.terminal.device.pk}:{sale.token}")
    second.credentials(HTTP_AUTHORIZATION=f"CashDevice {other.device.pk}:{other_token}")
    assert first.post("/api/electronic/terminal/snapshot/", {}, format="json").status_code == 200
    with CaptureQueriesContext(connection) as queries:
        answer = second.post("/api/electronic/terminal/snapshot/", {}, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["terminal"]["id"] == other.pk
    assert snapshot_cache.cache().builds == 1
    # The device (its token), the terminal (the API's permission), the two cursors, its cards bought.
    assert len(queries) == 4, [q["sql"] for q in queries]
