"""The terminal's snapshot (services/readmodels.py): the speciality as players must see it (R-16), the game on
sale, the game drawing with its balls and decided prizes, the meters, the last games and the streams' seqs."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone

from bingo.electronic.models import EBall, EGameState, ElectronicGame, EPrize
from bingo.electronic.services import readmodels, specialities
from bingo.electronic.services.steps import tell_terminal
from halls.eventtypes import EventType
from tests.bingo.electronic.support import (
    buy,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)
from tests.bingo.electronic.test_game_known_balls import C1, C2, C3, C4

pytestmark = pytest.mark.django_db


def _game(speciality, session, number: int, state: str) -> ElectronicGame:
    """A game row as the engine leaves it (the snapshot only reads)."""
    now = timezone.now()
    return ElectronicGame.objects.create(
        speciality=speciality,
        version=specialities.version_in_force(speciality),
        session=session,
        number=number,
        state=state,
        created_at=now,
        sales_close_at=now + timedelta(seconds=30),
    )


def test_the_snapshot_shows_the_prize_table_with_the_figures_and_the_players_information(
    venue, operator
) -> None:
    speciality = make_speciality(venue, operator)
    terminal, _token = make_terminal(speciality, operator)
    snap = readmodels.terminal_snapshot(terminal)
    shown = snap["speciality"]
    assert shown["name"] == speciality.name and shown["family"] == "electronic"
    assert shown["card_price"] == "0.50" and shown["purchase_sizes"] == [1, 2, 3, 4, 5, 6]
    assert shown["layout"] == {"code": "90", "max_number": 90, "rows": 3, "columns": 5, "free": []}
    prizes = {p["code"]: p for p in shown["prizes"]}
    assert prizes["esquinas"]["masks"] == [[0, 4, 10, 14]] and prizes["esquinas"]["fixed"] == "1.00"
    assert len(prizes["linea"]["masks"]) == 3 and prizes["linea"]["percent"] == "10.00"
    assert prizes["acumulado"]["info"] == "Bingo hasta la bola 40" and prizes["acumulado"]["max_ball"] == 40
    assert prizes["acumulado"]["accumulated"] is True
    assert snap["meters"] == [
        {
            "code": "acumulado",
            "name": "Acumulado",
            "amount": "100.00",
            "max_ball": 40,
            "info": "Bingo hasta la bola 40",
        }
    ]
    assert snap["streams"] == {"room": speciality.stream, "terminal": terminal.stream}
    assert snap["seqs"] == {speciality.stream: 0, terminal.stream: 0}
    assert snap["selling"] is None and snap["drawing"] is None and snap["player"] is None


def test_the_snapshot_shows_the_game_on_sale_the_draw_and_the_last_games(venue, operator) -> None:
    speciality = make_speciality(venue, operator)
    terminal, _token = make_terminal(speciality, operator)
    session = open_verified_session(speciality, operator)
    old = _game(speciality, session, 1, EGameState.CLOSED)
    ElectronicGame.objects.filter(pk=old.pk).update(closed_at=timezone.now(), balls_drawn=44)
    now = timezone.now()
    EPrize.objects.create(
        game=old,
        code="bingo",
        type="bingo",
        name="Bingo",
        ordinal=44,
        won=True,
        winners=2,
        amount=Decimal("5.01"),
        share=Decimal("2.50"),
        remainder=Decimal("0.01"),
        decided_at=now,
    )
    drawing = _game(speciality, session, 2, EGameState.DRAWING)
    drawing.terms = {
        "sales": "10.00",
        "cards": 20,
        "last_ordinal": 90,
        "extra_balls": 0,
        "prizes": [
            {
                "code": "linea",
                "type": "line",
                "pattern": "line",
                "in_play": True,
                "amount": "1.00",
                "max_ball": None,
                "golden_ball": None,
            }
        ],
    }
    drawing.save(update_fields=["terms"])
    for ordinal, number in enumerate([17, 3, 88], start=1):
        EBall.objects.create(game=drawing, ordinal=ordinal, number=number, drawn_at=now)
    EPrize.objects.create(
        game=drawing,
        code="linea",
        type="line",
        name="Línea",
        ordinal=3,
        won=True,
        winners=1,
        amount=Decimal("1.00"),
        share=Decimal("1.00"),
        decided_at=now,
    )
    selling = _game(speciality, session, 3, EGameState.SELLING)
    with transaction.atomic():
        tell_terminal(
            terminal, EventType.TERMINAL_BALANCE, {"terminal": terminal.pk, "balance": Decimal("3.00")}
        )

    snap = readmodels.terminal_snapshot(terminal)
    assert snap["selling"]["game"] == selling.pk and snap["selling"]["number"] == 3
    assert snap["selling"]["sales_close_at"] == selling.sales_close_at.isoformat()
    shown = snap["drawing"]
    assert shown["game"] == drawing.pk and shown["balls"] == [17, 3, 88]
    assert shown["prizes"][0]["name"] == "Línea" and shown["prizes"][0]["amount"] == "1.00"
    assert shown["decided"] == [
        {
            "code": "linea",
            "name": "Línea",
            "type": "line",
            "ordinal": 3,
            "won": True,
            "winners": 1,
            "amount": "1.00",
            "share": "1.00",
        }
    ]
    assert [g["number"] for g in snap["last_games"]] == [1]
    assert snap["last_games"][0]["prizes"][0]["share"] == "2.50" and snap["last_games"][0]["balls"] == []
    assert snap["seqs"][terminal.stream] == 1


def test_the_snapshot_shows_the_inserted_cards_balance_and_its_cards_in_play(
    venue, operator, cashier
) -> None:
    speciality = make_speciality(venue, operator)
    terminal, _token = make_terminal(speciality, operator)
    other_terminal, _ = make_terminal(speciality, operator)
    session = open_verified_session(speciality, operator)
    card, stranger = funded_card(venue, cashier), funded_card(venue, cashier)
    selling = _game(speciality, session, 1, EGameState.SELLING)
    _, mine = buy(selling, terminal, card, [C1, C2], "k1")
    _, theirs = buy(selling, other_terminal, card, [C3], "k2")  # the same card at another terminal: shown
    buy(selling, terminal, stranger, [C4], "k3")  # another card at this terminal: not shown

    snap = readmodels.terminal_snapshot(terminal, card=card)
    assert snap["terminal"]["refusal"] is None and snap["selling"]["mine"] == 3
    player = snap["player"]
    assert player["number"] == card.number and player["balance"] == "18.50" and player["state"] == "active"
    assert player["cards"] == {
        str(selling.pk): [
            {
                "card": mine[0].pk,
                "purchase": mine[0].purchase_id,
                "position": 1,
                "cells": list(C1),
                "wins": [],
            },
            {
                "card": mine[1].pk,
                "purchase": mine[1].purchase_id,
                "position": 2,
                "cells": list(C2),
                "wins": [],
            },
            {
                "card": theirs[0].pk,
                "purchase": theirs[0].purchase_id,
                "position": 1,
                "cells": list(C3),
                "wins": [],
            },
        ]
    }
    # The API's first view of the card, carried along: the same cards, what each lacks per pattern.
    assert [c["card"] for c in snap["card"]["games"][0]["cards"]] == [mine[0].pk, mine[1].pk, theirs[0].pk]
    assert readmodels.terminal_snapshot(other_terminal)["player"] is None


def test_a_terminal_that_cannot_play_says_why(venue, operator) -> None:
    speciality = make_speciality(venue, operator)
    terminal, _token = make_terminal(speciality, operator)
    assert readmodels.terminal_snapshot(terminal)["terminal"]["refusal"] == "no_session"
