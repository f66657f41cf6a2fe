"""Helpers of the prize-program service tests: a settable clock and games played through the real flow
(sell cards, close sales, balls entered by hand, claim, confirm), with the Bingo at a chosen ball."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.db.models import Model

from bingo.cards import CardGrid
from bingo.traditional.models import (
    BallSet,
    Card,
    CardSeries,
    Claim,
    Game,
    GamePick,
    GameProgram,
    PrizeProgram,
    PrizeProgramVersion,
    ProgramAward,
    RoomBolsa,
    ScheduledNotice,
)
from bingo.traditional.services import claims, draw, games, sales, series
from bingo.traditional.services.programs import clock as program_clock
from halls.models import AuditEntry, GameSession, Room, StreamCursor
from halls.services import sessions
from jackpots.models import Award as JackpotAward
from jackpots.models import Contribution, ParameterChange, Pool, PoolLevel, PoolSettlement
from jackpots.services import reports

TZ = ZoneInfo("Africa/Ceuta")  # the test venue's zone (Melilla keeps Spain's clock, DST included)
UTC = ZoneInfo("UTC")
ALL_BALLS = list(range(1, 91))
# bingo.balls.default_colours: 1–18 red, 19–36 yellow, 37–54 green, 55–72 blue, 73–90 purple.
COLOUR_RANGES = {"red": (1, 18), "yellow": (19, 36), "green": (37, 54), "blue": (55, 72), "purple": (73, 90)}
SALES: dict[str, object] = {"funding_percent": "10", "authorisation_ref": "ML-DGJ-2025/017"}

PROGRAM_TABLES: list[type[Model]] = [
    PrizeProgram,
    PrizeProgramVersion,
    RoomBolsa,
    GameProgram,
    GamePick,
    ProgramAward,
    ScheduledNotice,
    Pool,
    PoolLevel,
    Contribution,
    PoolSettlement,
    ParameterChange,
    AuditEntry,
    StreamCursor,
]


def local(year: int, month: int, day: int, hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=TZ)


class Clock:
    """`bingo.traditional.services.programs.clock.now`, held still until a test moves it."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def now(self) -> datetime:
        return self.at

    def set(self, at: datetime) -> None:
        self.at = at

    def advance(self, **delta: float) -> datetime:
        self.at += timedelta(**delta)
        return self.at


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fixed = Clock(local(2025, 3, 10, 12))
    monkeypatch.setattr(program_clock, "now", fixed.now)
    return fixed


@contextmanager
def nothing_written() -> Iterator[None]:
    """The block leaves the program and pool tables (and the audit chain, the streams) as they were."""
    before = {m.__name__: m._default_manager.count() for m in PROGRAM_TABLES}
    yield
    assert {m.__name__: m._default_manager.count() for m in PROGRAM_TABLES} == before


def level(pool_id: int) -> PoolLevel:
    return PoolLevel.objects.get(pool_id=pool_id, position=0)


def meter(program: PrizeProgram) -> Decimal:
    return level(program.pool_id).amount


def assert_balanced(pool_id: int) -> None:
    report = reports.balance(Pool.objects.get(pk=pool_id))
    assert report.holds, report.as_dict()


def game_program(game: Game, program: PrizeProgram) -> GameProgram:
    return GameProgram.objects.get(game=game, program=program)


def state_after(gp: GameProgram) -> dict[str, Any]:
    assert gp.state_after is not None, "the game is not closed"
    return dict(gp.state_after)


def paid(gp: GameProgram) -> JackpotAward:
    """The pool engine's award row that paid the program (share × winners)."""
    assert gp.settlement is not None, "the program was not paid"
    return gp.settlement.awards.get()


_series = itertools.count(1)


def _closest(sold: list[Card], winners: int) -> tuple[list[Card], list[int]]:
    """The first sold card and the cards sharing most numbers with it: the fewest balls for all to win."""
    numbers = {c.pk: CardGrid.from_json(c.grid).numbers for c in sold}
    chosen = [sold[0]]
    needed = set(numbers[sold[0].pk])
    while len(chosen) < winners:
        best = min(
            (c for c in sold if c not in chosen), key=lambda c: (len(needed | numbers[c.pk]), c.serial)
        )
        chosen.append(best)
        needed |= numbers[best.pk]
    return chosen, sorted(needed)


@dataclass
class Hall:
    """The test room with its staff; plays games by hand."""

    room: Room
    caller: User
    cashier: User
    operator: User
    ball_set: BallSet

    def new_series(self, cards: int) -> CardSeries:
        n = next(_series)
        return series.create_series(
            venue=self.room.venue,
            code=f"P{n}",
            face_value=Decimal("2.00"),
            strips=max(1, -(-cards // 6)),
            actor=self.operator,
            seed=f"{n:064x}",
        )

    def open_game(self, cards: int) -> Game:
        """A new manual game on sale with `cards` cards of 2.00 € sold (a fresh series: paper serves once)."""
        game = games.create_game(room=self.room, actor=self.caller, draw_source="manual")
        game = games.open_sales(game=game, actor=self.caller)
        sold = self.new_series(cards)
        sales.sell_range(game=game, series=sold, first=1, last=cards, actor=self.cashier)
        return game

    def close(self, game: Game) -> Game:
        return games.close_sales(game=game, actor=self.caller)

    def sell_and_close(self, cards: int) -> Game:
        return self.close(self.open_game(cards))

    def bingo(
        self, game: Game, *, at: int, winners: int = 1, colour: str | None = None, loose: bool = False
    ) -> list[Claim]:
        """Draw by hand so that `winners` cards have Bingo when ball `at` is drawn, whose colour is `colour`
        if given; claim them bound to that ball and confirm (the game closes). `loose`: a later ball when
        the cards need more, any colour when none of theirs has it (random plans)."""
        games.start_draw(game=game, actor=self.caller)
        cards, needed = _closest(
            list(Card.objects.filter(sale__game=game).select_related("series").order_by("serial")), winners
        )
        if loose:
            at = max(at, len(needed))
        assert len(needed) <= at, f"{winners} cards need {len(needed)} balls, more than {at}"
        last = needed[-1]
        if colour is not None:
            low, high = COLOUR_RANGES[colour]
            coloured = [n for n in needed if low <= n <= high]
            assert coloured or loose, f"no {colour} number on the winning cards"
            last = coloured[0] if coloured else last
        fillers = [n for n in ALL_BALLS if n not in needed][: at - len(needed)]
        for number in [*fillers, *(n for n in needed if n != last), last]:
            draw.enter_ball(game=game, number=number, actor=self.caller)
        filed = [
            claims.file_claim(
                game=game, kind="bingo", series_code=c.series.code, serial=c.serial, actor=self.caller
            )
            for c in cards
        ]
        assert all(c.valid and c.bound_ordinal == at for c in filed), [c.reason for c in filed]
        claims.confirm_claims(game=game, kind="bingo", actor=self.caller)
        return filed

    def play(self, cards: int, *, at: int = 60, winners: int = 1, colour: str | None = None) -> Game:
        game = self.sell_and_close(cards)
        self.bingo(game, at=at, winners=winners, colour=colour)
        game.refresh_from_db()
        return game

    def new_session(self) -> GameSession:
        """Close the room's session (its last game is now known) and open the next one."""
        current = GameSession.objects.get(room=self.room, closed_at__isnull=True)
        sessions.close_session(session=current, actor=self.caller)
        return sessions.open_session(
            room=self.room,
            actor=self.caller,
            blower_ok=True,
            reserve_ok=True,
            reader_ok=True,
            inspection_balls=ALL_BALLS,
        )


@pytest.fixture
def hall(
    session: GameSession, room: Room, caller: User, cashier: User, operator: User, ball_set: BallSet
) -> Hall:
    return Hall(room=room, caller=caller, cashier=cashier, operator=operator, ball_set=ball_set)
