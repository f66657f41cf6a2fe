"""Before activation, a simulator: many simulated days of one prize program with the real prize logic. Pure.

An operator sees what a program will do before switching it on (issue 4): how often it is won, how much it
pays, how long the pool takes to trigger and which share of the sales comes back to the players.

Each simulated game runs the same cycle as the hall (bingo.traditional.services: close of sales, verified
Bingo, close):

1. sell a random number of cards (`SalesProfile`), a contiguous run of serials from a fixed deck of real
   cards (`bingo.cards`), as a hall sells a series in serial order;
2. fund the pool with `rules.contribution` (the exact amount and its sub-cent residue, as the pool engine
   books bet × rate); BA-19/BA-20 are paid from a Bolsa Acumulada funded with `bolsa_percent` (OP-36);
3. `rules.in_play` with the pool including this game's funding (what the screens announce, TB-41);
4. draw the 90 balls; the Bingo ordinal is the earliest ball at which a sold card is complete, its colour
   from `bingo.balls` (OP-12: the ball at that ordinal);
5. `rules.evaluate`; when won, `rules.payout` among the cards complete at that ordinal (the remainder and
   any carry stay in the pool, OP-10);
6. `rules.next_state` after every game, in play or not.

The draws come from a seeded `random.Random`: this is a what-if simulation, never a draw of a real game (a
real game draws with `secrets`, bingo.traditional.services.draw). The sales and the balls of game n depend
only on
the seed and the profile, never on the program, so two programs simulated with one seed see the same games.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Context, Decimal, Inexact, InvalidOperation
from enum import StrEnum
from functools import lru_cache
from operator import itemgetter

from bingo.balls import DEFAULT_PALETTE, default_colours
from bingo.cards import CARDS_PER_STRIP, MAX_NUMBER, generate_series
from bingo.prizes import prize_from_sales
from bingo.traditional.programs.problems import of_error, problem
from bingo.traditional.programs.regulation import HallCategory
from bingo.traditional.programs.rules import (
    Family,
    Funding,
    GameContext,
    InPlay,
    ManagerPick,
    Program,
    ProgramState,
    contribution,
    evaluate,
    in_play,
    initial_state,
    next_state,
    payout,
    validate_pick,
)
from bingo.traditional.programs.schedule import first_instant_at, to_utc, zone
from halls import money
from halls.money import CENT, HUNDRED, RATE_QUANTUM

ZERO = Decimal(0)
# Money is summed exactly: an addition that would need rounding raises instead.
_EXACT = Context(prec=60, traps=[Inexact, InvalidOperation])
# The deck is the same for every simulation: the first strips of one fixed series (a series is a fixed
# sequence, so a larger deck only adds strips after these).
DECK_SEED = b"bingo-programs-simulator/v1"
MIN_DECK_STRIPS = 100  # 600 cards: far more than any game sells, so runs of serials differ
MAX_DAY_SPAN = timedelta(hours=23)  # a day's games end before the next day's first (a 23-hour DST day)
_PICK_FAMILIES = frozenset({Family.BINGO_EXTRA, Family.SUPER_PRIMA, Family.COLOUR_PRIMA})


def _english(value: Decimal) -> str:
    """An amount in the report's English text: "€1,234.56" (a person's page says it with for_person)."""
    return money.for_person(value, "en")


class SimulationError(ValueError):
    """A profile, policy or funding the simulator cannot play; `problems` says why."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(self.problems))


class UnbalancedSimulation(RuntimeError):
    """funded != paid + pool at the end: the prize arithmetic lost or made money (a bug, never expected)."""


# --- inputs ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SalesProfile:
    """How a hall plays: games per day, cards sold per game, price and timing (all local to `time_zone`).

    Cards sold per game are uniform in `cards_per_game` ± `cards_spread` (at least 1: a game with no card
    sold is not played). Games of a day start at `first_game` and follow every `minutes_per_game`; the day
    is split into sessions (`sessions_per_day` nearly equal sessions, or sessions of `games_per_session`
    games; default one session), with `session_break_minutes` between sessions. The last game of each
    session ends a Bingo Extra's escalation (OP-04).
    """

    games_per_day: int = 30
    cards_per_game: int = 120
    cards_spread: int = 40
    card_price: Decimal = Decimal("1.00")
    first_game: time = time(16, 30)
    minutes_per_game: int = 8
    sessions_per_day: int | None = None
    games_per_session: int | None = None
    session_break_minutes: int = 0
    hall_category: HallCategory = HallCategory.FIRST
    time_zone: str = "Europe/Madrid"
    start_date: date = date(2025, 1, 6)

    def __post_init__(self) -> None:
        try:  # accepts the hall's stored value ("1", "2", "3")
            object.__setattr__(self, "hall_category", HallCategory(self.hall_category))
        except ValueError:
            raise SimulationError([problem("sim_hall_category", value=self.hall_category)]) from None
        problems = self.problems()
        if problems:
            raise SimulationError(problems)

    def problems(self) -> list[str]:
        problems: list[str] = []  # rules.Problem: said in the reader's language at the Django edge

        def whole(name: str, value: object, least: int) -> bool:
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                problems.append(problem("sim_whole", what=name, least=least, value=value))
                return False
            return True

        whole("games per day", self.games_per_day, 1)
        whole("cards per game", self.cards_per_game, 1)
        whole("cards spread", self.cards_spread, 0)
        whole("minutes per game", self.minutes_per_game, 1)
        whole("session break minutes", self.session_break_minutes, 0)
        if self.sessions_per_day is not None and self.games_per_session is not None:
            problems.append(problem("sim_sessions_or_games"))
        if (
            self.sessions_per_day is not None
            and whole("sessions per day", self.sessions_per_day, 1)
            and isinstance(self.games_per_day, int)
            and self.sessions_per_day > self.games_per_day
        ):
            problems.append(problem("sim_sessions_games", sessions=self.sessions_per_day))
        if self.games_per_session is not None:
            whole("games per session", self.games_per_session, 1)
        if (
            not isinstance(self.card_price, Decimal)
            or not self.card_price.is_finite()
            or self.card_price <= 0
        ):
            problems.append(problem("sim_card_price", value=self.card_price))
        if not isinstance(self.first_game, time) or self.first_game.tzinfo is not None:
            problems.append(problem("sim_first_game"))
        if not isinstance(self.start_date, date) or isinstance(self.start_date, datetime):
            problems.append(problem("sim_start_date", value=self.start_date))
        try:
            zone(self.time_zone)
        except ValueError as exc:
            problems.append(of_error(exc))
        if not problems and self.day_span() > MAX_DAY_SPAN:
            problems.append(
                problem(
                    "sim_day_span",
                    games=self.games_per_day,
                    minutes=self.minutes_per_game,
                    span=str(self.day_span()),
                    limit=str(MAX_DAY_SPAN),
                )
            )
        return problems

    @property
    def min_cards(self) -> int:
        return max(1, self.cards_per_game - self.cards_spread)

    @property
    def max_cards(self) -> int:
        return self.cards_per_game + self.cards_spread

    def session_sizes(self) -> tuple[int, ...]:
        """Games in each session of a day."""
        n = self.games_per_day
        if self.games_per_session is not None:
            full, rest = divmod(n, self.games_per_session)
            return (self.games_per_session,) * full + ((rest,) if rest else ())
        sessions = self.sessions_per_day or 1
        size, extra = divmod(n, sessions)
        return tuple(size + 1 if i < extra else size for i in range(sessions))

    def offsets(self) -> tuple[timedelta, ...]:
        """Each game's start after the day's first game (elapsed time: right across a DST change)."""
        starts: list[timedelta] = []
        minutes = 0
        for s, size in enumerate(self.session_sizes()):
            if s:
                minutes += self.session_break_minutes
            for _ in range(size):
                starts.append(timedelta(minutes=minutes))
                minutes += self.minutes_per_game
        return tuple(starts)

    def day_span(self) -> timedelta:
        return self.offsets()[-1] + timedelta(minutes=self.minutes_per_game)

    def describe(self) -> str:
        sizes = self.session_sizes()
        sessions = f"{len(sizes)} session{'s' if len(sizes) > 1 else ''} ({'+'.join(map(str, sizes))})"
        spread = f" ± {self.cards_spread}" if self.cards_spread else ""
        return (
            f"{self.games_per_day} games/day in {sessions}, {self.cards_per_game}{spread} cards at "
            f"{_english(self.card_price)}, first game {self.first_game:%H:%M}, "
            f"{self.minutes_per_game} min/game, "
            f"hall {self.hall_category.label}, {self.time_zone}, from {self.start_date.isoformat()}"
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "games_per_day": self.games_per_day,
            "cards_per_game": self.cards_per_game,
            "cards_spread": self.cards_spread,
            "card_price": str(self.card_price),
            "first_game": self.first_game.strftime("%H:%M"),
            "minutes_per_game": self.minutes_per_game,
            "session_sizes": list(self.session_sizes()),
            "session_break_minutes": self.session_break_minutes,
            "hall_category": self.hall_category.value,
            "time_zone": self.time_zone,
            "start_date": self.start_date.isoformat(),
        }


class PickWhen(StrEnum):
    """Which game the simulated hall manager picks for a Super Prima / Colour Prima."""

    FUNDED = "funded"  # default: the first game in which the Bolsa holds the amount and none is in play
    SESSION_START = "session_start"  # the first game of a session, if the Bolsa holds the amount


@dataclass(frozen=True)
class PickPolicy:
    """What the simulated hall manager announces (BA-2 trigger order, BA-19 amount + order, BA-20 amount +
    colour); the rules check every pick with `validate_pick`.

    Defaults: a Bingo Extra (BA-2) plays the program's standing extraction order (no pick); a Super Prima
    (BA-19) or Colour Prima (BA-20) is picked `when` (default: as soon as the Bolsa can pay it) with the
    program's standing amount and order/colour, these fields overriding them. A Colour Prima with no colour
    anywhere gets, for each new pick, a colour drawn from the ball set's palette.
    """

    when: PickWhen = PickWhen.FUNDED
    amount: Decimal | None = None  # BA-19, BA-20
    max_ball: int | None = None  # BA-2 (the trigger game's order), BA-19 (the order)
    colour: str | None = None  # BA-20

    def is_default(self) -> bool:
        return self == PickPolicy()

    def to_dict(self) -> dict[str, object]:
        return {
            "when": self.when.value,
            "amount": None if self.amount is None else str(self.amount),
            "max_ball": self.max_ball,
            "colour": self.colour,
        }


# --- outputs -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Award:
    """One game in which the program was won."""

    day: int  # 1-based simulated day
    game: int  # 1-based game of the day
    game_number: int  # 1-based over the whole simulation
    start: datetime  # UTC
    cards_sold: int
    bingo_ordinal: int
    ball: int
    ball_colour: str
    max_ball: int | None  # what was announced
    colour: str | None
    winners: int
    prize: Decimal  # before sharing
    paid: Decimal  # shares × winners (prize - remainder)
    remainder: Decimal  # stays in the pool (OP-10)
    pool_before: Decimal
    pool_after: Decimal
    days_since: float  # since activation (the first game) or the previous award
    games_since: int  # games played since activation or the previous award, this one included

    def to_dict(self) -> dict[str, object]:
        return {
            "day": self.day,
            "game": self.game,
            "game_number": self.game_number,
            "start": self.start.isoformat(),
            "cards_sold": self.cards_sold,
            "bingo_ordinal": self.bingo_ordinal,
            "ball": self.ball,
            "ball_colour": self.ball_colour,
            "max_ball": self.max_ball,
            "colour": self.colour,
            "winners": self.winners,
            "prize": str(self.prize),
            "paid": str(self.paid),
            "remainder": str(self.remainder),
            "pool_before": str(self.pool_before),
            "pool_after": str(self.pool_after),
            "days_since": round(self.days_since, 3),
            "games_since": self.games_since,
        }


@dataclass(frozen=True)
class GameRecord:
    """One simulated game (kept only with `record_games=True`, for checks)."""

    day: int
    game: int
    start: datetime
    cards_sold: int
    first_serial: int  # serials first_serial … first_serial + cards_sold - 1 of the deck, wrapping round
    balls: tuple[int, ...]  # the draw order
    sales: Decimal
    funded: Decimal
    pool: Decimal  # at announcement, this game's funding included
    last_game_of_session: bool
    play: InPlay | None
    bingo_ordinal: int
    ball_colour: str
    winners: tuple[int, ...]  # serials complete at the Bingo ordinal
    won: bool
    paid: Decimal


@dataclass(frozen=True)
class DayPoint:
    """The end of one simulated day, for the plot."""

    day: int  # 1-based
    date: date
    pool_end: Decimal
    paid: Decimal
    hits: int
    games_in_play: int
    sales: Decimal

    def to_dict(self) -> dict[str, object]:
        return {
            "day": self.day,
            "date": self.date.isoformat(),
            "pool_end": str(self.pool_end),
            "paid": str(self.paid),
            "hits": self.hits,
            "games_in_play": self.games_in_play,
            "sales": str(self.sales),
        }


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class SimulationReport:
    """What a program did over the simulated days; `funded == paid + pool_end` exactly (checked)."""

    program: Program
    profile: SalesProfile
    seed: int
    days: int
    games: int
    games_in_play: int
    total_sales: Decimal
    total_funded: Decimal
    total_paid: Decimal
    pool_end: Decimal
    funding_percent: Decimal  # the program's, or the Bolsa's for BA-19/BA-20
    from_bolsa: bool
    pick_policy: PickPolicy
    awards: tuple[Award, ...]
    series: tuple[DayPoint, ...]
    days_since_last_award: float  # at the end: since the previous award or activation
    game_log: tuple[GameRecord, ...] = field(default=(), repr=False)

    @property
    def hits(self) -> int:
        return len(self.awards)

    @property
    def hits_per_day(self) -> float:
        return self.hits / self.days

    @property
    def hits_per_game_in_play(self) -> float | None:
        return self.hits / self.games_in_play if self.games_in_play else None

    @property
    def average_prize(self) -> Decimal | None:
        """Mean paid per award, to the cent (a statistic: rounded half-even)."""
        if not self.awards:
            return None
        return (self.total_paid / self.hits).quantize(CENT)

    @property
    def max_prize(self) -> Decimal | None:
        return max((a.paid for a in self.awards), default=None)

    @property
    def days_to_trigger_mean(self) -> float | None:
        return _mean([a.days_since for a in self.awards])

    @property
    def days_to_trigger_max(self) -> float | None:
        return max((a.days_since for a in self.awards), default=None)

    @property
    def games_to_trigger_mean(self) -> float | None:
        return _mean([float(a.games_since) for a in self.awards])

    @property
    def games_to_trigger_max(self) -> int | None:
        return max((a.games_since for a in self.awards), default=None)

    @property
    def returned_share(self) -> Decimal:
        """Paid / sales (a fraction: 0.015 is 1.5 % of the sales returned by this program)."""
        return self.total_paid / self.total_sales if self.total_sales else ZERO

    @property
    def balanced(self) -> bool:
        return self.total_funded == _EXACT.add(self.total_paid, self.pool_end)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready summary (money as strings)."""

        def opt(value: Decimal | None) -> str | None:
            return None if value is None else str(value)

        def rounded(value: float | None) -> float | None:
            return None if value is None else round(value, 4)

        return {
            "program": {
                "type": self.program.program_type.value,
                "id": self.program.program_id,
                "version": self.program.version,
                "label": self.program.label,
                "funding_percent": str(self.funding_percent),
                "from_bolsa": self.from_bolsa,
            },
            "profile": self.profile.to_dict(),
            "pick_policy": self.pick_policy.to_dict(),
            "seed": self.seed,
            "days": self.days,
            "games": self.games,
            "games_in_play": self.games_in_play,
            "hits": self.hits,
            "hits_per_day": rounded(self.hits_per_day),
            "hits_per_game_in_play": rounded(self.hits_per_game_in_play),
            "average_prize": opt(self.average_prize),
            "max_prize": opt(self.max_prize),
            "days_to_trigger": {
                "mean": rounded(self.days_to_trigger_mean),
                "max": rounded(self.days_to_trigger_max),
            },
            "games_to_trigger": {
                "mean": rounded(self.games_to_trigger_mean),
                "max": self.games_to_trigger_max,
            },
            "days_since_last_award": round(self.days_since_last_award, 3),
            "total_sales": str(self.total_sales),
            "total_funded": str(self.total_funded),
            "total_paid": str(self.total_paid),
            "returned_share": str(self.returned_share.quantize(RATE_QUANTUM)),
            "pool_end": str(self.pool_end),
            "balanced": self.balanced,
            "awards": [a.to_dict() for a in self.awards],
            "series": [p.to_dict() for p in self.series],
        }

    def text(self) -> str:
        """The readable report (what `manage.py simulate_program` prints)."""
        p = self.program
        in_play_pct = 100 * self.games_in_play / self.games
        pool_name = f"Bolsa Acumulada at {self.funding_percent} %" if self.from_bolsa else "pool"
        lines = [
            f"Simulation of {p.label} v{p.version} (seed {self.seed})",
            f"  Profile: {self.profile.describe()}",
            f"  Funding: {self.funding_percent} % of each game's sales"
            + (" into the room's Bolsa Acumulada (OP-36)" if self.from_bolsa else " into its own pool"),
        ]
        if p.family in _PICK_FAMILIES:
            policy = self.pick_policy
            lines.append(
                f"  Manager picks: when {policy.when.value}, amount {policy.amount or 'standing'}, "
                f"order {policy.max_ball or 'standing'}, colour {policy.colour or 'standing/random'}"
            )
        lines += [
            f"Days {self.days} · games {self.games} · in play {self.games_in_play} ({in_play_pct:.1f} %)",
            f"Hits {self.hits} · {self.hits_per_day:.3f} per day · "
            + (
                f"{self.hits_per_game_in_play:.4f} per game in play"
                if self.hits_per_game_in_play is not None
                else "never in play"
            ),
        ]
        if self.awards:
            assert self.average_prize is not None
            assert self.max_prize is not None
            lines += [
                f"Prize: average {_english(self.average_prize)} · max {_english(self.max_prize)}",
                f"Days to trigger: mean {self.days_to_trigger_mean:.2f} · max {self.days_to_trigger_max:.2f} "
                f"(games: mean {self.games_to_trigger_mean:.1f} · max {self.games_to_trigger_max})",
            ]
        else:
            lines.append("Prize: never won")
        lines += [
            f"Days since the last award (or activation) at the end: {self.days_since_last_award:.2f}",
            f"Sales {_english(self.total_sales)} · funded {_english(self.total_funded)} · "
            f"paid {_english(self.total_paid)} ({100 * self.returned_share:.3f} % of sales returned)",
            f"{pool_name.capitalize()} at the end: {_english(self.pool_end)}",
            "Balance: funded = paid + pool at the end, exactly" if self.balanced else "Balance: UNBALANCED",
        ]
        return "\n".join(lines)


# --- the simulation ----------------------------------------------------------------------------------------


@lru_cache(maxsize=4)
def _deck(strips: int) -> tuple[tuple[int, ...], ...]:
    """The fixed deck: each card's 15 numbers (serial s is item s - 1)."""
    return tuple(tuple(sorted(card.numbers)) for card in generate_series(DECK_SEED, strips))


def deck_for(profile: SalesProfile) -> tuple[tuple[int, ...], ...]:
    strips = max(MIN_DECK_STRIPS, math.ceil(profile.max_cards / CARDS_PER_STRIP))
    return _deck(strips)


def _check_inputs(
    program: Program, profile: SalesProfile, days: int, bolsa_percent: Decimal | None, policy: PickPolicy
) -> tuple[Decimal, list[str]]:
    """The funding percentage in use and every problem with the inputs."""
    problems: list[str] = []
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        problems.append(problem("sim_whole", what="days", least=1, value=days))
    from_bolsa = program.info.funding is Funding.BOLSA_ACUMULADA
    percent = ZERO
    if from_bolsa:
        if bolsa_percent is None:
            problems.append(problem("sim_bolsa_percent_needed", program=program.label))
        elif (
            not isinstance(bolsa_percent, Decimal)
            or not bolsa_percent.is_finite()
            or not ZERO < bolsa_percent < HUNDRED
        ):
            problems.append(problem("sim_bolsa_percent_range", value=bolsa_percent))
        else:
            percent = bolsa_percent
    else:
        if bolsa_percent is not None:
            problems.append(problem("sim_no_bolsa_percent", program=program.label))
        assert program.funding_percent is not None
        percent = program.funding_percent
    if program.family not in _PICK_FAMILIES:
        if not policy.is_default():
            problems.append(problem("sim_picks_nothing", label=program.label))
        return percent, problems
    if program.family is Family.BINGO_EXTRA:
        if policy.amount is not None or policy.colour is not None:
            problems.append(problem("extra_order_only", label=program.label))
        if policy.when is not PickWhen.FUNDED:
            problems.append(problem("sim_order_by_trigger", label=program.label))
    if program.family is Family.BINGO_EXTRA and policy.max_ball is None:
        return percent, problems
    colour: str | None = None
    if program.family is Family.COLOUR_PRIMA:
        palette = _palette(program, policy)
        if not palette:
            fixed = policy.colour or program.colour
            allowed = [fixed] if fixed is not None else sorted(program.colours)
            problems.append(
                problem(
                    "sim_no_colour",
                    label=program.label,
                    allowed=", ".join(allowed),
                    palette=", ".join(DEFAULT_PALETTE),
                )
            )
            return percent, problems
        colour = palette[0]
    problems += validate_pick(program, initial_state(program), _pick(program, policy, colour))
    return percent, problems


def _palette(program: Program, policy: PickPolicy) -> tuple[str, ...]:
    """Colours a simulated Colour Prima can be announced in: those it allows that the ball set has."""
    fixed = policy.colour or program.colour
    allowed = {fixed.strip().lower()} if fixed is not None else program.colours
    return tuple(c for c in DEFAULT_PALETTE if c in allowed)


def _pick(program: Program, policy: PickPolicy, colour: str | None) -> ManagerPick:
    if program.family is Family.BINGO_EXTRA:
        return ManagerPick(program.program_id, max_ball=policy.max_ball)
    if program.family is Family.SUPER_PRIMA:
        return ManagerPick(program.program_id, amount=policy.amount, max_ball=policy.max_ball)
    return ManagerPick(program.program_id, amount=policy.amount, colour=colour)


def simulate(
    program: Program,
    profile: SalesProfile,
    *,
    days: int,
    seed: int,
    bolsa_percent: Decimal | None = None,
    pick_policy: PickPolicy = PickPolicy(),  # frozen: a shared default is safe
    record_games: bool = False,
) -> SimulationReport:
    """Play `days` simulated days of `program` under `profile` with the real prize logic.

    `bolsa_percent` (required for BA-19/BA-20, refused otherwise): the share of each game's sales funding
    the Bolsa Acumulada that pays them. Raises `SimulationError` for inputs it cannot play, `ProgramError`
    if the prize rules refuse something, and `UnbalancedSimulation` if the money does not add up.
    """
    percent, problems = _check_inputs(program, profile, days, bolsa_percent, pick_policy)
    if problems:
        raise SimulationError(problems)
    from_bolsa = program.info.funding is Funding.BOLSA_ACUMULADA
    rng = random.Random(seed)
    # A separate stream for the manager's colour choices keeps the games the same for every program.
    pick_rng = random.Random(f"{seed}/picks")
    deck = deck_for(profile)
    # One C-level getter per card: a card's completion ordinal is max(getter(position)), fast in CPython.
    getters: list[Callable[[list[int]], tuple[int, ...]]] = [itemgetter(*card) for card in deck]
    colour_of = default_colours()
    ball_colour = [""] + [colour_of[str(n)] for n in range(1, MAX_NUMBER + 1)]
    palette = _palette(program, pick_policy) if program.family is Family.COLOUR_PRIMA else ()
    offsets = profile.offsets()
    session_ends = set(itertools.accumulate(profile.session_sizes()))
    tz = zone(profile.time_zone)
    balls = list(range(1, MAX_NUMBER + 1))
    position = [0] * (MAX_NUMBER + 1)

    state: ProgramState = initial_state(program)
    pool = total_funded = total_paid = total_sales = ZERO
    games = games_in_play = 0
    awards: list[Award] = []
    series: list[DayPoint] = []
    log: list[GameRecord] = []
    activation: datetime | None = None
    last_award_at: datetime | None = None
    last_award_game = 0
    last_start: datetime | None = None

    for d in range(days):
        day = profile.start_date + timedelta(days=d)
        first = first_instant_at(datetime.combine(day, profile.first_game), tz)
        day_paid = day_sales = ZERO
        day_hits = day_in_play = 0
        for g, offset in enumerate(offsets, start=1):
            start = to_utc(first + offset)
            if activation is None:
                activation = start
            last_start = start
            games += 1
            # Sales and draw first, from the seed alone (the same games whatever the program).
            sold = rng.randint(profile.min_cards, profile.max_cards)
            first_serial = rng.randrange(len(deck))
            rng.shuffle(balls)
            sales = _EXACT.multiply(profile.card_price, Decimal(sold))
            share = (
                prize_from_sales(sales, percent) if from_bolsa else contribution(program, sales)
            )  # the pool engine books bet × rate exactly: the amount and its residue
            funded = _EXACT.add(share.amount, share.residue)
            pool = _EXACT.add(pool, funded)
            total_funded = _EXACT.add(total_funded, funded)
            total_sales = _EXACT.add(total_sales, sales)
            day_sales = _EXACT.add(day_sales, sales)

            last_of_session = g in session_ends
            ctx = GameContext(
                start=start,
                time_zone=profile.time_zone,
                hall_category=profile.hall_category,
                cards_sold=sold,
                pool_amount=pool,
                last_game_of_session=last_of_session,
            )
            play = in_play(program, state, ctx)
            picked = _manager_pick(program, state, ctx, play, pick_policy, g == 1 or g - 1 in session_ends)
            if picked is not None:
                if program.family is Family.COLOUR_PRIMA and picked.colour is None:
                    picked = ManagerPick(picked.program_id, picked.amount, None, pick_rng.choice(palette))
                ctx = GameContext(
                    start=start,
                    time_zone=profile.time_zone,
                    hall_category=profile.hall_category,
                    cards_sold=sold,
                    pool_amount=pool,
                    last_game_of_session=last_of_session,
                    manager_picks=(picked,),
                )
                play = in_play(program, state, ctx)

            bingo, winners = _bingo(balls, position, getters, first_serial, sold)
            colour = ball_colour[balls[bingo - 1]]

            won = play is not None and evaluate(play, bingo, colour)
            paid = ZERO
            if play is not None:
                games_in_play += 1
                day_in_play += 1
            if won:
                assert play is not None
                result = payout(program, pool, winners, amount=play.amount)
                paid = _EXACT.multiply(result.share, Decimal(len(winners)))
                pool_after = result.next_pool
                if _EXACT.add(paid, pool_after) != pool:
                    raise UnbalancedSimulation(f"award of game {games}: {paid} + {pool_after} != {pool}")
                since = last_award_at or activation
                awards.append(
                    Award(
                        day=d + 1,
                        game=g,
                        game_number=games,
                        start=start,
                        cards_sold=sold,
                        bingo_ordinal=bingo,
                        ball=balls[bingo - 1],
                        ball_colour=colour,
                        max_ball=play.max_ball,
                        colour=play.colour,
                        winners=len(winners),
                        prize=result.prize,
                        paid=paid,
                        remainder=result.remainder,
                        pool_before=pool,
                        pool_after=pool_after,
                        days_since=(start - since) / timedelta(days=1),
                        games_since=games - last_award_game,
                    )
                )
                last_award_at, last_award_game = start, games
                total_paid = _EXACT.add(total_paid, paid)
                day_paid = _EXACT.add(day_paid, paid)
                day_hits += 1
                pool = pool_after
            if record_games:
                log.append(
                    GameRecord(
                        day=d + 1,
                        game=g,
                        start=start,
                        cards_sold=sold,
                        first_serial=first_serial + 1,
                        balls=tuple(balls),
                        sales=sales,
                        funded=funded,
                        pool=ctx.pool_amount,
                        last_game_of_session=last_of_session,
                        play=play,
                        bingo_ordinal=bingo,
                        ball_colour=colour,
                        winners=winners,
                        won=won,
                        paid=paid,
                    )
                )
            state = next_state(program, state, won, ctx)
        series.append(
            DayPoint(
                day=d + 1,
                date=day,
                pool_end=pool,
                paid=day_paid,
                hits=day_hits,
                games_in_play=day_in_play,
                sales=day_sales,
            )
        )

    assert last_start is not None
    assert activation is not None
    report = SimulationReport(
        program=program,
        profile=profile,
        seed=seed,
        days=days,
        games=games,
        games_in_play=games_in_play,
        total_sales=total_sales,
        total_funded=total_funded,
        total_paid=total_paid,
        pool_end=pool,
        funding_percent=percent,
        from_bolsa=from_bolsa,
        pick_policy=pick_policy,
        awards=tuple(awards),
        series=tuple(series),
        days_since_last_award=(last_start - (last_award_at or activation)) / timedelta(days=1),
        game_log=tuple(log),
    )
    if not report.balanced:
        raise UnbalancedSimulation(
            f"funded {total_funded} != paid {total_paid} + pool at the end {pool} ({program.label})"
        )
    return report


def _bingo(
    balls: Sequence[int],
    position: list[int],
    getters: Sequence[Callable[[list[int]], tuple[int, ...]]],
    first_serial: int,
    sold: int,
) -> tuple[int, tuple[int, ...]]:
    """The Bingo ordinal (the earliest ball at which a sold card holds its 15 numbers) and the serials
    complete at it. `position` is scratch space indexed by ball number; the cards sold are the run of
    `sold` serials from `first_serial` (0-based), wrapping round the deck."""
    for ordinal, ball in enumerate(balls, start=1):
        position[ball] = ordinal
    end = first_serial + sold
    run = [*getters[first_serial:end], *getters[: max(0, end - len(getters))]]
    complete = [max(card(position)) for card in run]
    bingo = min(complete)
    serials = sorted((first_serial + i) % len(getters) + 1 for i, at in enumerate(complete) if at == bingo)
    return bingo, tuple(serials)


def _manager_pick(
    program: Program,
    state: ProgramState,
    ctx: GameContext,
    play: InPlay | None,
    policy: PickPolicy,
    session_start: bool,
) -> ManagerPick | None:
    """The pick the simulated hall manager announces for this game, if any (colour drawn by the caller)."""
    family = program.family
    if family is Family.BINGO_EXTRA:
        # The order is picked for the trigger game only: in play, no escalation yet (validate_pick).
        if policy.max_ball is None or play is None or state.steps or state.pick is not None:
            return None
        return _pick(program, policy, None)
    if family not in (Family.SUPER_PRIMA, Family.COLOUR_PRIMA) or state.pick is not None:
        return None
    if policy.when is PickWhen.SESSION_START and not session_start:
        return None
    amount = policy.amount if policy.amount is not None else program.amount
    if amount is None or ctx.pool_amount < amount:
        return None  # the Bolsa cannot pay it yet: the manager waits
    colour = policy.colour or program.colour
    return _pick(program, policy, colour)


__all__ = [
    "Award",
    "DayPoint",
    "GameRecord",
    "PickPolicy",
    "PickWhen",
    "SalesProfile",
    "SimulationError",
    "SimulationReport",
    "UnbalancedSimulation",
    "deck_for",
    "simulate",
]
