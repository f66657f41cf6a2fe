"""What the electronic-bingo tests share: rules for a speciality, a speciality with a verified open session,
terminals, and player cards with money on them."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from bingo.electronic.models import (
    ECard,
    EGameState,
    ElectronicGame,
    ElectronicSession,
    Purchase,
    Speciality,
    Terminal,
    TerminalState,
    Verification,
)
from bingo.electronic.services import games, specialities
from bingo.electronic.services.steps import rules_of
from halls.cashier.models import DeviceKind, PlayerCard
from halls.cashier.services import devices, player_cards
from halls.models import Room, Venue
from tests.cashier_support import on_shift

# Electronic bingo on the 90-ball card: Line 10 %, Bingo 50 %, two figures at a fixed amount, and an
# accumulated prize (2 % of sales to the meter, 1 % to its reserve, seed 100 €) won with the Bingo by ball 40.
RULES_90: dict[str, Any] = {
    "family": "electronic",
    "layout": "90",
    "card_price": "0.50",
    "purchase_sizes": [1, 2, 3, 4, 5, 6],
    "max_cards": 36,
    "pace_seconds": "0.5",
    "sale_seconds": 30,
    "pause_seconds": 5,
    "prizes": [
        {"code": "linea", "name": "Línea", "type": "line", "percent": "10"},
        {"code": "bingo", "name": "Bingo", "type": "bingo", "percent": "50"},
        {"code": "esquinas", "name": "Esquinas", "type": "figure", "figure": "corners", "fixed": "1.00"},
        {"code": "aspa", "name": "Aspa", "type": "figure", "figure": "x", "fixed": "2.00"},
        {
            "code": "acumulado",
            "name": "Acumulado",
            "type": "accumulated",
            "pool": {"funding_percent": "2", "reserve_percent": "1", "seed": "100.00"},
            "max_ball": 40,
            "info": "Bingo hasta la bola 40",
        },
    ],
}

# Automatic bingo (art. 155): Línea and Bingo from the sales; Super Línea, Super Bingo and Bingo Extra from
# pools whose max extraction rises with the game's total bets; Gran Línea / Gran Bingo modelled (network).
RULES_AUTOMATIC: dict[str, Any] = {
    "family": "automatic",
    "layout": "90",
    "card_price": "1.00",
    "pace_seconds": "0.5",
    "sale_seconds": 30,
    "prizes": [
        {"code": "linea", "name": "Línea", "type": "auto_line", "percent": "10"},
        {"code": "bingo", "name": "Bingo", "type": "auto_bingo", "percent": "50"},
        {
            "code": "superlinea",
            "name": "Super Línea",
            "type": "super_line",
            "pool": {"funding_percent": "1", "reserve_percent": "0.5", "seed": "50.00"},
            "max_ball_by_sales": [{"from_sales": "0", "max_ball": 7}, {"from_sales": "100", "max_ball": 9}],
        },
        {
            "code": "superbingo",
            "name": "Super Bingo",
            "type": "super_bingo",
            "pool": {"funding_percent": "2", "reserve_percent": "1", "seed": "500.00"},
            "max_ball_by_sales": [{"from_sales": "0", "max_ball": 40}, {"from_sales": "100", "max_ball": 45}],
        },
        {
            "code": "bingoextra",
            "name": "Bingo Extra",
            "type": "auto_bingo_extra",
            "pool": {"funding_percent": "1", "reserve_percent": "0.5", "seed": "200.00"},
            "max_ball_by_sales": [{"from_sales": "0", "max_ball": 35}, {"from_sales": "100", "max_ball": 40}],
        },
        {
            "code": "granlinea",
            "name": "Gran Línea",
            "type": "gran_line",
            "pool": {"funding_percent": "0.5", "seed": "0"},
        },
        {
            "code": "granbingo",
            "name": "Gran Bingo",
            "type": "gran_bingo",
            "pool": {"funding_percent": "0.5", "seed": "0"},
        },
    ],
}

_names = itertools.count(1)


def make_speciality(
    venue: Venue, operator: User, *, rules: dict[str, Any] | None = None, code: str | None = None
) -> Speciality:
    """A speciality in a new room of its own."""
    n = next(_names)
    room = Room.objects.create(venue=venue, name=f"Sala electrónica {n}")
    return specialities.create_speciality(
        room=room,
        code=code or f"E{n}",
        name=f"Electrónico {n}",
        rules=rules or RULES_90,
        authorisation_ref="AUT-TEST-1",
        actor=operator,
    )


def make_terminal(speciality: Speciality, operator: User, name: str | None = None) -> tuple[Terminal, str]:
    """A terminal of the speciality in service, with its device token."""
    device, token = devices.register_device(
        venue_id=speciality.venue_id,
        name=name or f"Terminal {next(_names)}",
        kind=DeviceKind.TERMINAL,
        actor=operator,
    )
    terminal = Terminal.objects.create(device=device, speciality=speciality, state=TerminalState.IN_SERVICE)
    return terminal, token


def open_verified_session(speciality: Speciality, actor: User) -> ElectronicSession:
    """A passed verification (every terminal of the speciality passed) and the session opened on it."""
    now = timezone.now()
    verification = Verification.objects.create(
        speciality=speciality,
        started_at=now,
        finished_at=now,
        passed=True,
        system_checks=[{"check": "test", "ok": True, "detail": "set up by the test"}],
        rng_checks=[],
        actor_label=actor.get_username(),
    )
    Terminal.objects.filter(speciality=speciality).update(verified_by=verification)
    return ElectronicSession.objects.create(
        speciality=speciality, verification=verification, opened_at=now, opened_by=actor.get_username()
    )


def funded_card(venue: Venue, cashier: User, amount: Decimal = Decimal("20.00")) -> PlayerCard:
    """A new player card with `amount` paid in at the cashier's till (the cashier put on shift)."""
    on_shift(cashier, venue, float=Decimal("0"))
    card = player_cards.issue_card(venue_id=venue.pk, actor=cashier)
    player_cards.cash_in(card=card, amount=amount, means="cash", key=f"fund-{card.number}", actor=cashier)
    return card


# --- games: cards bought with known faces, balls in a known order -------------------------------------------


def buy(
    game: ElectronicGame, terminal: Terminal, card: PlayerCard, faces: list[tuple[int, ...]], key: str
) -> tuple[Purchase, list[ECard]]:
    """A purchase of cards with the given faces for `game`, paid from `card` (player_cards.spend, as the sales
    service pays): for tests that need to know every card's numbers."""
    rules = rules_of(game.version)
    with transaction.atomic():
        moved = player_cards.spend(
            card=card,
            amount=rules.card_price * len(faces),
            key=f"epurchase:{terminal.pk}:{key}",
            actor=terminal.device.name,
            device=terminal.device,
            data={"egame": game.pk},
        )
        purchase = Purchase.objects.create(
            game=game,
            terminal=terminal,
            player_card=card,
            key=key,
            cards=len(faces),
            amount=rules.card_price * len(faces),
            seed="00" * 16,
            transaction=moved.transaction,
            created_at=timezone.now(),
        )
        rows = ECard.objects.bulk_create(
            ECard(game=game, purchase=purchase, position=i, cells=bytes(face))
            for i, face in enumerate(faces, start=1)
        )
    return purchase, rows


@contextmanager
def forced_balls(balls: list[int], golden: int | None = None) -> Iterator[None]:
    """Draw `balls` in this order (then the lowest numbers left) and `golden` as the golden ball, through
    the engine's test-only picker; the CSPRNG is back afterwards."""

    def pick(game: ElectronicGame, purpose: str, numbers: Sequence[int]) -> int:
        if purpose == "golden":
            return golden if golden is not None else numbers[0]
        left = [b for b in balls if b in numbers]
        return left[0] if left else numbers[0]

    previous = games.use_ball_picker(pick)
    try:
        yield
    finally:
        games.use_ball_picker(previous)


@contextmanager
def enqueued() -> Iterator[list[tuple[int, int, float]]]:
    """The ball steps the engine enqueues (game, ordinal, countdown), collected instead of sent to Celery."""
    steps: list[tuple[int, int, float]] = []
    games.register_draw_enqueuer(lambda game, ordinal, countdown: steps.append((game, ordinal, countdown)))
    try:
        yield steps
    finally:
        from bingo.electronic import tasks

        games.register_draw_enqueuer(tasks.enqueue_draw)


def draw_to_end(game: ElectronicGame, limit: int = 90) -> ElectronicGame:
    """Every ball step of the game in turn until it closes."""
    for _ in range(limit):
        game.refresh_from_db()
        if game.state != EGameState.DRAWING:
            break
        games.draw_ball(game.pk, game.balls_drawn + 1)
    game.refresh_from_db()
    return game
