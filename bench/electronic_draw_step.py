"""Benchmark: the electronic draw step (`bingo.electronic.services.games.draw_ball`) at 100,000 cards in play,
every prize decided and credited, beside a bare ball step in the same run (issue 13).

Not a test. On PostgreSQL (``DATABASE_URL``, a database of its own: created and migrated if missing, dropped
first with ``--fresh``) it makes a venue, a speciality of electronic bingo on the 90-ball card (Line 10 %,
Bingo 50 %, two figures at fixed amounts, a golden ball, an accumulated prize from a pool with a max ball),
its verified session, one terminal per 600 cards and a funded player card per terminal. For each of
``--games`` games: the sales open (`games.set_running`), the terminals buy the cards (60-card purchases
written as `sales.purchase` writes them: the ledger spend, the Purchase, the dealt cards; see `sell`), the
sales close through `games.close_sales` (pools funded, terms fixed, the detector built from the ECard rows),
and every ball step runs through `games.draw_ball` in this process, one after another, until the game ends
with its Bingo: the ball drawn by the CSPRNG, detection, the decisions, every prize paid through the
ledger (and the pool engine for the accumulated prize), the EPrize/EWin rows, the audit and the events.
The Celery door is replaced by a no-op (the bench drives the steps itself; bench/draw_step.py measures the
worker's own cost), so a figure here is the step's transaction, what a draw task spends inside itself.

The baseline, in the same run and alternating ball by ball with the product (both see the same load of the
shared machine): a bare ball step on an empty game of another speciality: the game row locked, an EBall
row written, the game row updated, committed. `--profile` adds where the product's step spends its time
(detection, decisions' locks, payment), timed around those service functions.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_edraw \\
        flock /tmp/hall-bench.lock .venv/bin/python bench/electronic_draw_step.py [--fresh] [--quick]

Verifiable draws (issue 28), on and off in the same run: each game of the product speciality opens with
HALL_VERIFIABLE_DRAWS on (its draw committed, its sales digest fixed at the close over every card, each ball
the seed's: `bingo.draws.services.ball_at`), and beside it, in a second speciality with the same rules and
the same number of cards, a game opens with the setting off (drawn by the CSPRNG, as before the issue); their
ball steps alternate (on, off, bare), each with the setting it opened with, so both see the same load.
``--verifiable on`` or ``off`` runs one side only.

Target (issue 13): the draw step with every prize decided and credited <= 50 ms p99 at 100,000 cards.
Target (issue 28): the step with the setting on within 10 % of the step with it off (p50 and p99).
The last line: ``cards=… games=… steps=… p50_ms=… p99_ms=… prize_p99_ms=… max_ms=… close_s=…
baseline_p50_ms=… baseline_p99_ms=… off_p50_ms=… off_p99_ms=… off_close_s=… on_vs_off_p50=…
on_vs_off_p99=…`` (prize_p99: the steps that decided a prize; the first figures are the product's steps
with the setting on, or off with ``--verifiable off``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Anonymous cards, as before the door (issue 27): these benchmarks measure sales, not admissions.
os.environ.setdefault("HALL_DOOR_CARDS_NEED_ADMISSION", "0")

PER_PURCHASE = 60
PER_TERMINAL = 600
RULES: dict[str, Any] = {
    "family": "electronic",
    "layout": "90",
    "card_price": "0.10",
    "purchase_sizes": [PER_PURCHASE],
    "max_cards": PER_TERMINAL,
    "pace_seconds": "0.5",
    "sale_seconds": 3600,
    "pause_seconds": 0,
    "prizes": [
        {"code": "linea", "name": "Línea", "type": "line", "percent": "10"},
        {"code": "bingo", "name": "Bingo", "type": "bingo", "percent": "50"},
        {"code": "esquinas", "name": "Esquinas", "type": "figure", "figure": "corners", "fixed": "5.00"},
        {"code": "aspa", "name": "Aspa", "type": "figure", "figure": "x", "fixed": "10.00"},
        {"code": "oro", "name": "Bola de oro", "type": "golden_ball", "fixed": "20.00"},
        {
            "code": "acumulado",
            "name": "Acumulado",
            "type": "accumulated",
            "pool": {"funding_percent": "2", "reserve_percent": "1", "seed": "100.00"},
            "max_ball": 45,
        },
    ],
}


def ensure_database(url: str, *, fresh: bool) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1].split("?")[0]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile, in ms."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1] * 1e3


class Timers:
    """Seconds spent in some service functions during the current step (--profile)."""

    def __init__(self) -> None:
        self.step: dict[str, float] = defaultdict(float)
        self.total: dict[str, list[float]] = defaultdict(list)

    def wrap(self, module: Any, name: str, label: str) -> None:
        inner: Callable[..., Any] = getattr(module, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.step[label] += time.perf_counter() - t0

        setattr(module, name, timed)

    def end_step(self) -> dict[str, float]:
        done = dict(self.step)
        for label, seconds in done.items():
            self.total[label].append(seconds)
        self.step.clear()
        return done


class Hall:
    """The scratch hall: a speciality with its verified session, terminals and funded player cards (and
    `off`: a second one, the same, whose games open with the verifiable draws off)."""

    def __init__(self, run: str, cards: int, *, with_off: bool = True) -> None:
        from django.contrib.auth.models import User
        from django.utils import timezone

        from bingo.electronic.models import ElectronicSession, Terminal, TerminalState, Verification
        from bingo.electronic.services import specialities
        from halls.cashier import ledger
        from halls.cashier.ledger import Kind
        from halls.cashier.models import DeviceKind, TxKind
        from halls.cashier.services import devices
        from halls.cashier.services import ledger as books
        from halls.cashier.services import player_cards as card_service
        from halls.models import Jurisdiction, Role, Room, StaffRole, Venue

        self.venue = Venue.objects.create(
            name=f"Bench {run}", licence_number=f"BE-{run}", jurisdiction=Jurisdiction.ML
        )
        self.operator = User.objects.create(username=f"bench-operator-{run}")
        StaffRole.objects.create(user=self.operator, venue=self.venue, role=Role.OPERATOR)
        self.speciality = specialities.create_speciality(
            room=Room.objects.create(venue=self.venue, name="Sala electrónica"),
            code="BENCH",
            name="Bench",
            rules=RULES,
            authorisation_ref="BENCH-1",
            actor=self.operator,
        )
        # The verifiable draws off: a second speciality, the same rules, terminals and cards of its own.
        self.off = (
            specialities.create_speciality(
                room=Room.objects.create(venue=self.venue, name="Sala sin compromiso"),
                code="OFF",
                name="Off",
                rules=RULES,
                authorisation_ref="BENCH-1",
                actor=self.operator,
            )
            if with_off
            else None
        )
        # The baseline's speciality: its own room and game, the same rules.
        self.bare = specialities.create_speciality(
            room=Room.objects.create(venue=self.venue, name="Sala base"),
            code="BARE",
            name="Bare",
            rules=RULES,
            authorisation_ref="BENCH-1",
            actor=self.operator,
        )
        selling = [self.speciality] if self.off is None else [self.speciality, self.off]
        self.terminals_of: dict[int, list[Any]] = {}
        for speciality in selling:
            made = self.terminals_of.setdefault(speciality.pk, [])
            for n in range(math.ceil(cards / PER_TERMINAL)):
                device, _token = devices.register_device(
                    venue_id=self.venue.pk,
                    name=f"Terminal {speciality.code} {n + 1}",
                    kind=DeviceKind.TERMINAL,
                    actor="bench",
                )
                made.append(
                    Terminal.objects.create(
                        device=device, speciality=speciality, state=TerminalState.IN_SERVICE
                    )
                )
        self.terminals = self.terminals_of[self.speciality.pk]
        now = timezone.now()
        for speciality in (*selling, self.bare):
            verification = Verification.objects.create(
                speciality=speciality,
                started_at=now,
                finished_at=now,
                passed=True,
                system_checks=[{"check": "bench", "ok": True, "detail": "set up by the bench"}],
                rng_checks=[],
                actor_label="bench",
            )
            Terminal.objects.filter(speciality=speciality).update(verified_by=verification)
            ElectronicSession.objects.create(
                speciality=speciality, verification=verification, opened_at=now, opened_by="bench"
            )
        house = books.venue_account(self.venue.pk, Kind.HOUSE)
        self.player_cards = []
        for n in range(len(self.terminals)):
            card = card_service.issue_card(venue_id=self.venue.pk, actor="bench")
            funding = Decimal("1000.00")
            books.post(
                venue_id=self.venue.pk,
                kind=TxKind.CARD_CASH_IN,
                key=f"bench:fund:{run}:{n}",
                legs=[ledger.debit(house.pk, funding), ledger.credit(books.card_account(card).pk, funding)],
                actor="bench",
            )
            self.player_cards.append(card)


def sell(hall: Hall, game: Any, cards: int, tag: str) -> float:
    """`cards` cards bought, 600 a terminal in ten purchases of 60: what `sales.purchase` writes (the ledger
    spend through `cards.spend`, the Purchase row, the cards dealt from a fresh seed), one transaction per
    terminal and without its per-request checks and terminal event (through the service it takes minutes
    at 100,000 cards on this machine; bench/electronic_sales.py measures it). The seconds it took."""
    import secrets

    from django.db import transaction
    from django.utils import timezone

    from bingo.electronic.models import ECard, Purchase
    from bingo.electronic.services.steps import rules_of, tell_terminal
    from halls.cashier.services import player_cards as card_service
    from halls.eventtypes import EventType, TerminalBalance

    rules = rules_of(game.version)
    t0 = time.perf_counter()
    left = cards
    terminals = hall.terminals_of[game.speciality_id]  # the player cards are shared by the specialities
    for terminal, card in zip(terminals, hall.player_cards, strict=True):
        if left <= 0:
            break
        with transaction.atomic():
            rows = []
            for n in range(min(PER_TERMINAL, left) // PER_PURCHASE):
                key = f"{tag}:{n}"
                seed = secrets.token_bytes(16)
                amount = rules.card_price * PER_PURCHASE
                moved = card_service.spend(
                    card=card,
                    amount=amount,
                    key=f"epurchase:{terminal.pk}:{key}",
                    actor=terminal.device.name,
                    device=terminal.device,
                    data={"game": game.pk, "terminal": terminal.pk, "key": key, "cards": PER_PURCHASE},
                )
                bought = Purchase.objects.create(
                    game=game,
                    terminal=terminal,
                    player_card=card,
                    key=key,
                    cards=PER_PURCHASE,
                    amount=amount,
                    seed=seed.hex(),
                    transaction=moved.transaction,
                    created_at=timezone.now(),
                )
                rows += [
                    ECard(game=game, purchase=bought, position=i, cells=bytes(cells))
                    for i, cells in enumerate(rules.layout.deal(seed, PER_PURCHASE), start=1)
                ]
            ECard.objects.bulk_create(rows, batch_size=2000)
            left -= len(rows)
            # The terminal's stream, as the purchase's TERMINAL_CARDS event makes it (one event here).
            tell_terminal(
                terminal,
                EventType.TERMINAL_BALANCE,
                TerminalBalance(terminal=terminal.pk, balance=moved.balance),
            )
    return time.perf_counter() - t0


def bare_step(game_id: int, ordinal: int, number: int) -> None:
    """The baseline: a ball step with nothing to decide: lock, a ball row, the game row, commit."""
    from django.db import transaction
    from django.utils import timezone

    from bingo.electronic.models import EBall
    from bingo.electronic.services.locks import lock_egame

    with transaction.atomic():
        game = lock_egame(game_id)
        assert game is not None
        now = timezone.now()
        EBall.objects.create(game=game, ordinal=ordinal, number=number, drawn_at=now)
        game.balls_drawn = ordinal
        game.last_ball_at = now
        game.save(update_fields=["balls_drawn", "last_ball_at"])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cards", type=int, default=100_000)
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="10,000 cards, 2 games")
    parser.add_argument("--fresh", action="store_true", help="drop and recreate the database first")
    parser.add_argument("--profile", action="store_true", help="where the product's step spends its time")
    parser.add_argument(
        "--verifiable",
        choices=("both", "on", "off"),
        default="both",
        help="both: the product's games with the verifiable draws on, beside games with them off (default)",
    )
    args = parser.parse_args()
    cards = 10_000 if args.quick else args.cards
    games_count = 2 if args.quick else args.games
    cards = max(PER_PURCHASE, cards // PER_PURCHASE * PER_PURCHASE)

    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench_edraw")
    ensure_database(os.environ["DATABASE_URL"], fresh=args.fresh)

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    from bingo.electronic.models import EGameState, ElectronicGame, EPrize
    from bingo.electronic.services import awards, detection, games

    games.register_draw_enqueuer(lambda game_id, ordinal, countdown: None)  # the bench drives the steps
    timers = Timers()
    if args.profile:
        timers.wrap(detection, "apply", "detect")
        timers.wrap(awards, "prepare", "prepare (locks)")
        timers.wrap(awards, "pay", "pay")
        from halls import events
        from halls.cashier.services import ledger as books
        from jackpots.services import awards as pool_awards

        timers.wrap(awards, "settle", "settle (post, rows, audit, events)")
        timers.wrap(books, "post_many", "settle: ledger post_many + audit")
        timers.wrap(pool_awards, "award_level", "pay: pool award")
        timers.wrap(events, "emit_many", "settle: every event numbered")
        timers.wrap(events, "publish", "after commit: publish")  # each event to the channel layer

    load = os.getloadavg()
    print(
        f"load {load[0]:.2f} {load[1]:.2f}; {connection.vendor}; {cards:,} cards a game, {games_count} games"
    )
    run = f"{int(time.time())}-{os.getpid()}"
    t0 = time.perf_counter()
    hall = Hall(run, cards, with_off=args.verifiable == "both")
    print(
        f"hall: {len(hall.terminals)} terminals and player cards in {time.perf_counter() - t0:.1f} s",
        flush=True,
    )

    steps: list[float] = []
    prize_steps: list[float] = []
    committed: list[float] = []  # the step up to its commit (without publishing the events; --profile)
    bare: list[float] = []
    closes: list[float] = []
    paid = 0
    prize_queries: list[int] = []  # the statements of each step deciding prizes (the others': plain)
    queries = [0]  # the current step's statements

    def counted(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        queries[0] += 1
        return execute(sql, params, many, context)

    plain_queries: list[int] = []
    off_steps: list[float] = []  # the steps of the games opened with the verifiable draws off
    plain_steps: list[float] = []  # the steps deciding no prize (each side's games win different prizes)
    off_plain: list[float] = []
    off_closes: list[float] = []
    on_side = args.verifiable in ("on", "both")
    flag_of = {hall.speciality.pk: on_side}
    if hall.off is not None:
        flag_of[hall.off.pk] = False

    def opened(speciality: Any) -> Any:
        """The speciality's next game, its sales opened with its side's setting."""
        settings.HALL_VERIFIABLE_DRAWS = flag_of[speciality.pk]
        games.set_running(speciality=speciality, running=True, actor="bench")
        return ElectronicGame.objects.get(speciality=speciality, state=EGameState.SELLING)

    def closed_sales(game: Any) -> float:
        settings.HALL_VERIFIABLE_DRAWS = flag_of[game.speciality_id]
        t0 = time.perf_counter()
        done = games.close_sales(game.pk, early=True)
        took = time.perf_counter() - t0
        assert done is not None, "the sales did not close"
        assert done.state == EGameState.DRAWING, "the game did not start drawing"
        return took

    for number in range(games_count):
        game = opened(hall.speciality)
        other = opened(hall.off) if hall.off is not None else None
        sold_in = sell(hall, game, cards, f"{run}:{number}")
        if other is not None:
            sell(hall, other, cards, f"{run}:{number}:off")
        closes.append(closed_sales(game))
        if other is not None:
            off_closes.append(closed_sales(other))
        games.set_running(speciality=hall.bare, running=True, actor="bench")
        base = ElectronicGame.objects.get(speciality=hall.bare, state=EGameState.SELLING)
        ElectronicGame.objects.filter(pk=base.pk).update(state=EGameState.DRAWING)
        print(
            f"game {number + 1}: {cards:,} cards sold in {sold_in:.1f} s "
            f"(bulk); sales closed in {closes[-1]:.2f} s"
            + (f" (the setting off: {off_closes[-1]:.2f} s)" if other is not None else ""),
            flush=True,
        )
        ordinal = 0
        game_steps: list[float] = []
        timers.step.clear()  # what the sales and the close spent is not a ball's
        product_on, other_on = True, other is not None
        while product_on or other_on:
            ordinal += 1
            if product_on:
                settings.HALL_VERIFIABLE_DRAWS = flag_of[hall.speciality.pk]
                decided_before = EPrize.objects.filter(game_id=game.pk).count()
                queries[0] = 0
                t0 = time.perf_counter()
                with connection.execute_wrapper(counted):
                    ball = games.draw_ball(game.pk, ordinal, actor="bench")
                took = time.perf_counter() - t0
                assert ball is not None
                spent = timers.end_step()
                decided = EPrize.objects.filter(game_id=game.pk).count() - decided_before
                steps.append(took)
                game_steps.append(took)
                committed.append(took - spent.get("after commit: publish", 0.0))
                (prize_queries if decided else plain_queries).append(queries[0])
                if not decided:
                    plain_steps.append(took)
                if decided:
                    prize_steps.append(took)
                    if args.profile:
                        parts = ", ".join(f"{k} {v * 1e3:.1f}" for k, v in spent.items())
                        print(
                            f"  ball {ordinal}: {decided} prizes decided, {queries[0]} queries, "
                            f"{took * 1e3:.1f} ms ({parts})"
                        )
                product_on = (
                    ElectronicGame.objects.filter(pk=game.pk).values_list("state", flat=True).get()
                    == EGameState.DRAWING
                )
            if other_on and other is not None:
                settings.HALL_VERIFIABLE_DRAWS = False
                decided_before = EPrize.objects.filter(game_id=other.pk).count()
                t0 = time.perf_counter()
                ball = games.draw_ball(other.pk, ordinal, actor="bench")
                off_steps.append(time.perf_counter() - t0)
                assert ball is not None
                if EPrize.objects.filter(game_id=other.pk).count() == decided_before:
                    off_plain.append(off_steps[-1])
                timers.step.clear()
                other_on = (
                    ElectronicGame.objects.filter(pk=other.pk).values_list("state", flat=True).get()
                    == EGameState.DRAWING
                )
            t0 = time.perf_counter()
            bare_step(base.pk, ordinal, ordinal)  # its numbers need only be distinct
            bare.append(time.perf_counter() - t0)
        ElectronicGame.objects.filter(pk=base.pk).update(state=EGameState.CLOSED)
        games.set_running(speciality=hall.bare, running=False, actor="bench")
        prizes = list(EPrize.objects.filter(game_id=game.pk).order_by("ordinal", "pk"))
        paid += sum(1 for p in prizes if p.won)
        won = ", ".join(f"{p.code}@{p.ordinal}x{p.winners}" for p in prizes if p.won)
        print(
            f"  {len(game_steps)} balls; step p50 {percentile(game_steps, 50):.1f} ms, "
            f"max {max(game_steps) * 1e3:.1f} ms; "
            f"won: {won or 'nothing'}",
            flush=True,
        )

    p50, p99, top = percentile(steps, 50), percentile(steps, 99), max(steps) * 1e3
    prize99 = percentile(prize_steps, 99)
    b50, b99 = percentile(bare, 50), percentile(bare, 99)
    print(
        f"product : {len(steps)} steps, p50 {p50:.1f} ms p99 {p99:.1f} ms max {top:.1f} ms; "
        f"the {len(prize_steps)} steps deciding prizes p99 {prize99:.1f} ms; {paid} prizes won and paid"
    )
    if args.profile:
        print(
            f"  up to the commit (the events' publishing after it left out): "
            f"p50 {percentile(committed, 50):.1f} ms p99 {percentile(committed, 99):.1f} ms"
        )
        for label, values in timers.total.items():
            print(f"  {label}: p50 {percentile(values, 50):.2f} ms p99 {percentile(values, 99):.2f} ms")
    print(
        f"  queries a step: {min(plain_queries, default=0)}-{max(plain_queries, default=0)} without a prize, "
        f"{min(prize_queries, default=0)}-{max(prize_queries, default=0)} deciding prizes"
    )
    print(f"baseline: {len(bare)} bare ball steps, p50 {b50:.1f} ms p99 {b99:.1f} ms")
    o50, o99 = percentile(off_steps, 50), percentile(off_steps, 99)
    side = "on" if on_side else "off"
    if off_steps:
        print(
            f"verifiable draws: {side} p50 {p50:.1f} ms p99 {p99:.1f} ms ({len(steps)} steps); "
            f"off p50 {o50:.1f} ms p99 {o99:.1f} ms ({len(off_steps)} steps); "
            f"on/off p50 {p50 / o50:.3f} p99 {p99 / o99:.3f}; "
            f"close of sales {side} {max(closes):.2f} s, off {max(off_closes):.2f} s"
        )
        q50, q99 = percentile(plain_steps, 50), percentile(plain_steps, 99)
        r50, r99 = percentile(off_plain, 50), percentile(off_plain, 99)
        print(
            f"  the steps deciding no prize: {side} p50 {q50:.1f} ms p99 {q99:.1f} ms ({len(plain_steps)}); "
            f"off p50 {r50:.1f} ms p99 {r99:.1f} ms ({len(off_plain)}); on/off p50 {q50 / r50:.3f} "
            f"p99 {q99 / r99:.3f}"
        )
    load = os.getloadavg()
    print(f"load {load[0]:.2f} {load[1]:.2f} (2 cores shared with the others' tests)")
    print(
        f"cards={cards} games={games_count} steps={len(steps)} p50_ms={p50:.1f} p99_ms={p99:.1f} "
        f"prize_p99_ms={prize99:.1f} max_ms={top:.1f} close_s={max(closes):.2f} "
        f"baseline_p50_ms={b50:.1f} baseline_p99_ms={b99:.1f}"
        + (
            f" off_p50_ms={o50:.1f} off_p99_ms={o99:.1f} off_close_s={max(off_closes):.2f} "
            f"on_vs_off_p50={p50 / o50:.3f} on_vs_off_p99={p99 / o99:.3f}"
            if off_steps
            else ""
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
