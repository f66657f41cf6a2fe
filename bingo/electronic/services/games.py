"""The life of an electronic game (EB-01, EB-05.a-c): one common draw per speciality, run by Celery.

- `start_next_game`: while the speciality is `running` and a session is open, game n+1 opens its sales
  (SELLING, the version in force now, `sales_close_at = now + sale_seconds`). The tick starts one whenever
  the speciality has no game selling, so the next game sells while the current one draws.
  `sales_close_at` is on the venue's clock (halls.services.venueclock: the real time in production; moved
  forward by a certification lab elsewhere), and so is every "now" it is compared with: a lab that moves
  a venue's clock past it sees the sales close (the purchases refused, the tick closing them).
- `close_sales` (the tick, at `sales_close_at`): the sold set counted (the game's FOR UPDATE waits for the
  purchases in flight, which hold it FOR SHARE), the pools funded (one contribution per pool and game),
  the golden ball drawn, the terms fixed and announced with the pools' meters, the detector built. The game
  draws at once unless another game of the speciality is still drawing: it then waits (SELLING with its
  sales closed) until that game ends and the pause has passed. A game with no card sold closes at once.
- `draw_ball(game_id, ordinal)` (a Celery task per ball): a no-op unless `ordinal` is the next ball; else
  the ball, the detector, the decisions, every prize paid (services.awards), the game closed when over,
  or the next ball enqueued at the pace once this one commits. Everything of a ball is one transaction: a
  worker killed mid-step leaves the ball undrawn (the step is redone) or drawn and paid (the next continues).
- `tick` (beat, every second): closes due sales, begins waiting draws, starts next games, re-enqueues
  stalled draws.

Balls (issue 28): a game committed when its sales opened (services.commitments, HALL_VERIFIABLE_DRAWS) draws
the balls its seed and its sales digest give, in order, and the golden ball they give at the close of sales;
otherwise `secrets` (the CSPRNG). Its seed is revealed after it. Tests replace the picker through
`use_ball_picker` only.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from kombu.exceptions import OperationalError

from bingo.draws.models import DrawCommitment
from bingo.electronic import network_hooks
from bingo.electronic.models import (
    EBall,
    EGameState,
    ElectronicGame,
    ElectronicSession,
    EPrize,
    Purchase,
    Speciality,
    SpecialityPool,
)
from bingo.electronic.prizetable import (
    POOL_TYPES,
    Decision,
    PrizeType,
    Rules,
    Terms,
    decide,
    fix_terms,
    game_over,
    terms_from_json,
    terms_json,
)
from bingo.electronic.services import awards, commitments, detection, feed, meters, specialities, stepsql
from bingo.electronic.services.locks import lock_egame, lock_speciality
from bingo.electronic.services.steps import Told, estep, record, rules_of
from halls import leases, money
from halls.actors import Actor
from halls.eventtypes import (
    EGameBall,
    EGameClosed,
    EGameSalesClosed,
    EGameSalesOpened,
    EPrizeTerms,
    EventType,
)
from halls.feed.services import emit
from halls.services import audit, venueclock
from jackpots.services import contributions, folding
from jackpots.services.locks import lock_pools

log = logging.getLogger("hall.electronic")

LEASE_KIND = "electronic"  # the ball step's lease (halls.leases; config.leases names the task's)

ACTOR = "electronic"  # who the engine's own steps are audited as
ZERO = money.ZERO

# --- where balls come from --------------------------------------------------------------------------------

# (game, purpose "ball" | "golden", the numbers it may be, ascending) -> the number drawn.
BallPicker = Callable[[ElectronicGame, str, Sequence[int]], int]


def _secure(game: ElectronicGame, purpose: str, numbers: Sequence[int]) -> int:
    return secrets.choice(numbers)


_picker: BallPicker = _secure


def use_ball_picker(picker: BallPicker | None) -> BallPicker:
    """FOR TESTS ONLY: draw with `picker` (None: back to the CSPRNG); returns the picker it replaces."""
    global _picker  # one picker per process; production never calls this
    previous = _picker
    _picker = picker or _secure
    return previous


def _pick(game: ElectronicGame, purpose: str, numbers: Sequence[int]) -> int:
    number = _picker(game, purpose, numbers)
    if number not in numbers:
        raise ValueError(f"ball {number} is not one of the numbers left to draw")
    return number


# --- the door to the ball task ----------------------------------------------------------------------------

# bingo.electronic.apps registers the Celery door (tasks.enqueue_draw) here: services import no tasks.
_enqueue: Callable[[int, int, float], None] | None = None


def register_draw_enqueuer(enqueue: Callable[[int, int, float], None]) -> None:
    global _enqueue  # one door per process, set once at start-up
    _enqueue = enqueue


def dispatch(game_id: int, ordinal: int, countdown: float = 0.0) -> None:
    """Enqueue a ball step; with the broker away, log it and leave it to the reaper (its state is kept)."""
    if _enqueue is None:
        raise RuntimeError("no electronic draw enqueuer registered (bingo.electronic.apps registers it)")
    try:
        _enqueue(game_id, ordinal, countdown)
    except OperationalError as exc:
        log.warning(
            "could not enqueue ball %s of electronic game %s (%s): the reaper will", ordinal, game_id, exc
        )


def _schedule(game: ElectronicGame, countdown: float) -> None:
    """After the caller's transaction commits, enqueue the game's next ball."""
    game_id, ordinal = game.pk, game.balls_drawn + 1
    transaction.on_commit(lambda: dispatch(game_id, ordinal, countdown))


# --- the operator's switch and the next game --------------------------------------------------------------


def set_running(*, speciality: Speciality, running: bool, actor: Actor) -> Speciality:
    """Start or stop a speciality's games (the operator): stopped, the game in play ends as usual and no
    next game starts. Started with a session open, its first game opens its sales now."""
    with transaction.atomic():
        locked = lock_speciality(speciality.pk)
        if locked.running != running:
            locked.running = running
            locked.save(update_fields=["running"])
            audit.record(
                venue_id=locked.venue_id,
                actor=actor,
                action="electronic.running" if running else "electronic.stopped",
                obj=locked,
                data={"speciality": locked.pk, "running": running},
            )
        if running:
            _start_locked(locked, timezone.now(), actor)
    return locked


def start_next_game(
    speciality: Speciality | int, *, now: datetime | None = None, actor: Actor = ACTOR
) -> ElectronicGame | None:
    """Open the sales of the speciality's next game, or None: not running, no session open, or a game is
    selling already (its sales open or closed and waiting to draw)."""
    speciality_id = speciality if isinstance(speciality, int) else speciality.pk
    with transaction.atomic():
        locked = lock_speciality(speciality_id)
        return _start_locked(locked, now or timezone.now(), actor)


def _start_locked(speciality: Speciality, now: datetime, actor: Actor) -> ElectronicGame | None:
    if not speciality.running:
        return None
    session = ElectronicSession.objects.filter(speciality=speciality, closed_at__isnull=True).first()
    if session is None:
        return None
    if ElectronicGame.objects.filter(speciality=speciality, state=EGameState.SELLING).exists():
        return None
    version = specialities.version_in_force(speciality, now)
    rules = rules_of(version)
    last = (
        ElectronicGame.objects.filter(speciality=speciality)
        .order_by("-number")
        .values_list("number", flat=True)
        .first()
    )
    game = ElectronicGame.objects.create(
        speciality=speciality,
        version=version,
        session=session,
        number=(last or 0) + 1,
        state=EGameState.SELLING,
        created_at=now,
        sales_close_at=venueclock.at(speciality.venue_id, now) + timedelta(seconds=rules.sale_seconds),
    )
    # The draw committed before the first card is sold: its commitment goes out with the opening.
    draw = commitments.commit(game, rules, actor)
    step = estep(game)
    opened = EGameSalesOpened(
        speciality=step["speciality"],
        game=step["game"],
        number=step["number"],
        state=step["state"],
        sales_close_at=game.sales_close_at,
        card_price=rules.card_price,
    )
    data = {
        "version": version.number,
        "session": session.pk,
        "sales_close_at": game.sales_close_at.isoformat(),
    }
    if draw is not None:
        opened["commitment"] = data["commitment"] = draw.commitment
    record(game, actor, EventType.EGAME_SALES_OPENED, data, opened)
    return game


# --- the close of sales -------------------------------------------------------------------------------------


def close_sales(
    game: ElectronicGame | int, *, now: datetime | None = None, early: bool = False, actor: Actor = ACTOR
) -> ElectronicGame | None:
    """Close the game's sales at `sales_close_at` (before it only if `early`: the tests' and an operator's
    way); None if not due or done already."""
    game_id = game if isinstance(game, int) else game.pk
    now = now or timezone.now()
    with transaction.atomic():
        locked = lock_egame(game_id)
        if locked is None or locked.state != EGameState.SELLING or locked.sales_closed_at is not None:
            return None
        if not early and venueclock.at(locked.speciality.venue_id, now) < locked.sales_close_at:
            return None
        return _close_locked(locked, now, actor)


def _close_locked(game: ElectronicGame, now: datetime, actor: Actor) -> ElectronicGame:
    speciality = game.speciality
    rules = rules_of(game.version)
    sold = Purchase.objects.filter(game=game).aggregate(cards=Sum("cards"), sales=Sum("amount"))
    game.cards_sold = int(sold["cards"] or 0)
    game.sales_total = sold["sales"] or ZERO
    game.sales_closed_at = now
    # The sold set is final (the game FOR UPDATE): the draw's sales digest is fixed over it first (its
    # commitment's lock ranks before the pools').
    ids, cells = detection.card_cells(game, rules.layout.cells)
    draw = commitments.close(game, ids, cells, actor)
    digest = draw.sales_digest if draw is not None else None
    if game.cards_sold == 0:
        terms = fix_terms(rules, sales=ZERO, cards=0)
        game.terms = {**terms_json(terms), "meters": {}, "golden_ball": None}
        game.state = EGameState.CLOSED
        game.closed_at = now
        game.save()
        commitments.audit_close(draw, actor)
        _announce_close(game, rules, terms, {}, None, actor, digest)
        record(
            game, actor, EventType.EGAME_CLOSED, {"balls": 0}, EGameClosed(**estep(game), balls=0, prizes=[])
        )
        feed.sales_closed(game, digest, now)  # the authority's feed: no card sold, and the game's end
        feed.ended(game, now)
        if draw is not None:
            commitments.reveal_after_commit(game)
        return game
    amounts = _fund_pools(game, rules, actor)
    commitments.audit_close(draw, actor)  # the draw's close in the chain, after the pools' locks
    golden = None
    if any(p.type is PrizeType.GOLDEN_BALL for p in rules.prizes):
        golden = _golden_number(game, rules, draw)
    joined = network_hooks.joins(game)  # the Gran prizes this game plays in a network round
    terms = _network_only_joined(
        fix_terms(
            rules, sales=game.sales_total, cards=game.cards_sold, golden_ball=golden, network=bool(joined)
        ),
        rules,
        joined,
    )
    game.terms = {
        **terms_json(terms),
        "meters": {code: money.text(amount) for code, amount in amounts.items()},
        "golden_ball": golden,
    }
    detection.sales_closed(game, rules, cards=(ids, cells))
    drawing = (
        ElectronicGame.objects.filter(speciality=speciality, state=EGameState.DRAWING)
        .exclude(pk=game.pk)
        .exists()
    )
    if not drawing:
        game.state = EGameState.DRAWING
    game.save()
    _announce_close(game, rules, terms, amounts, golden, actor, digest)
    feed.sales_closed(game, digest, now)  # the authority's feed: the game's sales
    if amounts:
        meters.publish(speciality, rules, terms)
    if not drawing:
        _schedule(game, max(float(rules.pace_seconds), _pause_left(game, rules, now)))
    if joined:
        network_hooks.sales_closed(game)  # last: its outbox number is the last lock
    return game


def _network_only_joined(terms: Terms, rules: Rules, joined: frozenset[str]) -> Terms:
    """The terms with a network prize in play only when the game joined a network round for it."""
    prizes = tuple(
        replace(p, in_play=False) if rules.prize(p.code).network and p.code not in joined else p
        for p in terms.prizes
    )
    return replace(terms, prizes=prizes)


def _fund_pools(game: ElectronicGame, rules: Rules, actor: Actor) -> dict[str, Decimal]:
    """One contribution of the game's sales to each pool prize in play (under the pools' exclusive locks,
    so in this transaction), folded: prize code -> the meter announced."""
    codes = [p.code for p in rules.prizes if p.type in POOL_TYPES and not p.network]
    if not codes:
        return {}
    pools = dict(
        SpecialityPool.objects.filter(speciality_id=game.speciality_id, prize_code__in=codes).values_list(
            "prize_code", "pool_id"
        )
    )
    lock_pools(pools.values())
    source = specialities.member_source(game.speciality_id).at("egame", game.pk)
    contributions.contribute_pools(
        items=[
            (
                pool_id,
                contributions.ContributionItem(
                    source=source, bet=game.sales_total, idempotency_key=f"egame:{game.pk}"
                ),
            )
            for pool_id in sorted(pools.values())
        ],
        actor=actor,
    )
    for pool_id in sorted(pools.values()):
        folding.fold(pool_id)
    amounts = meters.pool_amounts(game.speciality_id)
    return {code: amounts[code] for code in codes if code in amounts}


def _announce_close(
    game: ElectronicGame,
    rules: Rules,
    terms: Terms,
    amounts: dict[str, Decimal],
    golden: int | None,
    actor: Actor,
    sales_digest: str | None = None,
) -> None:
    prizes = [
        EPrizeTerms(
            code=p.code,
            name=rules.prize(p.code).name,
            type=str(p.type),
            pattern=p.pattern,
            in_play=p.in_play,
            amount=money.cents_down(amounts[p.code]) if p.code in amounts else p.amount,
            max_ball=p.max_ball,
        )
        for p in terms.prizes
    ]
    step = estep(game)
    public = EGameSalesClosed(
        speciality=step["speciality"],
        game=step["game"],
        number=step["number"],
        state=step["state"],
        cards=game.cards_sold,
        sales=game.sales_total,
        prizes=prizes,
        golden_ball=golden,
    )
    if sales_digest is not None:
        public["sales_digest"] = sales_digest  # the draw's: its balls follow from the seed and it
    record(game, actor, EventType.EGAME_SALES_CLOSED, {**public, "terms": game.terms}, public)


def _pause_left(game: ElectronicGame, rules: Rules, now: datetime) -> float:
    """Seconds until the pause after the speciality's previous game ends (0 if it has passed)."""
    before = (
        ElectronicGame.objects.filter(
            speciality_id=game.speciality_id, number__lt=game.number, closed_at__isnull=False
        )
        .order_by("-number")
        .values_list("closed_at", flat=True)
        .first()
    )
    if before is None:
        return 0.0
    return max(0.0, (before + timedelta(seconds=rules.pause_seconds) - now).total_seconds())


def begin_draw(
    game: ElectronicGame | int, *, now: datetime | None = None, actor: Actor = ACTOR
) -> ElectronicGame | None:
    """A game whose sales closed while another drew starts drawing, once no other game draws."""
    game_id = game if isinstance(game, int) else game.pk
    now = now or timezone.now()
    with transaction.atomic():
        locked = lock_egame(game_id)
        if locked is None:
            return None
        return _begin_locked(locked, now, actor)


def _begin_locked(game: ElectronicGame, now: datetime, actor: Actor) -> ElectronicGame | None:
    if game.state != EGameState.SELLING or game.sales_closed_at is None:
        return None
    if ElectronicGame.objects.filter(speciality_id=game.speciality_id, state=EGameState.DRAWING).exists():
        return None
    rules = rules_of(game.version)
    game.state = EGameState.DRAWING
    game.save(update_fields=["state"])
    audit.record(
        venue_id=game.speciality.venue_id,
        actor=actor,
        action="electronic.draw_started",
        obj=game,
        data={"speciality": game.speciality_id, "game": game.pk, "number": game.number},
    )
    _schedule(game, max(float(rules.pace_seconds), _pause_left(game, rules, now)))
    return game


# --- a ball -------------------------------------------------------------------------------------------------


def draw_ball(game_id: int, ordinal: int, *, actor: Actor = ACTOR) -> EBall | None:
    """Draw ball `ordinal` of the game and pay what it decides, or nothing if it is not the next ball."""
    # What the payment and the end emit on the authority's feed (pools' awards, the seed's reveal) is held
    # until the step's ball and prizes are told (feed.step): the feed tells the step in the order it happened.
    with transaction.atomic(), emit.holding() as held:
        game = lock_egame(game_id)
        if game is None or game.state != EGameState.DRAWING or game.balls_drawn + 1 != ordinal:
            return None
        rules = rules_of(game.version)
        terms = terms_from_json(game.terms)
        detector = detection.step(game, rules, ordinal)  # it knows the balls drawn, as committed
        drawn = set(detector.drawn)
        number = _next_number(game, rules, ordinal, drawn)
        now = timezone.now()
        ball = EBall(game=game, ordinal=ordinal, number=number, drawn_at=now)  # written with the game
        game.balls_drawn = ordinal
        game.last_ball_at = now
        result = detector.apply(ordinal, number)
        completed = {key: [int(c) for c in ids] for key, ids in result.completed.items()}
        decisions = decide(
            terms, ordinal=ordinal, ball=number, completed=completed, decided=set(game.decided)
        )
        over = game_over(terms, ordinal=ordinal, bingo_made=bool(completed.get("full")))
        waiting = None
        if over:
            decisions += _still_open(terms, ordinal, set(game.decided) | {d.code for d in decisions})
            waiting = _lock_waiting(game)
        # A network prize (Gran Línea / Gran Bingo) is decided by the central: the hall's first completion
        # is only reported (bingo.electronic.network_hooks), never paid here.
        network = [d for d in decisions if rules.prize(d.code).network]
        network_hooks.decided(game, network)
        # Every lock the payment takes (pools, accounts), before the first audit entry.
        prepared = awards.prepare(game, rules, [d for d in decisions if not rules.prize(d.code).network])
        told = Told()  # the step's audit entries and events, written at its end in one go each
        told.change(
            game,
            actor,
            EventType.EGAME_BALL,
            {"ordinal": ordinal, "ball": number},
            EGameBall(**estep(game), ordinal=ordinal, ball=number, drawn_at=now),
        )
        paid = awards.pay(game, rules, terms, prepared, actor, told)
        game.decided = [*game.decided, *(d.code for d in decisions)]
        if any(d.won and d.code in prepared.pools for d in decisions):
            told.events.extend(meters.events(game.speciality, rules, terms))
        if over:
            _end(game, ball, now, actor, told, paid.rows)
        else:
            stepsql.save_step(ball, game, ["balls_drawn", "last_ball_at", "decided"])
        awards.settle(game, prepared, paid, actor, told)
        # The authority's feed: the ball, the prizes it decided, the game's end (the seed comes with its
        # reveal); last, after the step's locks and audit entries (their numbers are the last lock).
        feed.step(game, ordinal, number, now, paid.rows, paid.winners, over=over, held=held)
        if over:
            if waiting is not None:
                _begin_locked(waiting, now, actor)
            network_hooks.ended(game)  # last: its outbox number is the last lock
        else:
            _schedule(game, float(rules.pace_seconds))
    return ball


# FOR TESTS ONLY: games a test's picker drew a ball of; their later balls are the CSPRNG's, not the seed's
# (the seed's order would repeat a ball the picker drew). Keyed by id and creation time: SQLite gives a
# rolled-back test's game id to the next test's game, which must draw its seed's balls.
_picked_by_test: set[tuple[int, datetime]] = set()


def _golden_number(game: ElectronicGame, rules: Rules, draw: DrawCommitment | None) -> int:
    """The golden ball, drawn at the close of sales: the committed seed's (a verifiable draw), else the
    CSPRNG's. A test's picker (`use_ball_picker`) overrides both."""
    if _picker is _secure and draw is not None:
        number = commitments.golden(draw)
        if number is not None:
            return number
    return _pick(game, "golden", range(1, rules.layout.max_number + 1))


def _next_number(game: ElectronicGame, rules: Rules, ordinal: int, drawn: set[int]) -> int:
    """Ball `ordinal`: the one the committed seed gives at it (a verifiable draw), else the CSPRNG's. A
    test's picker (`use_ball_picker`) overrides both."""
    left = [n for n in range(1, rules.layout.max_number + 1) if n not in drawn]
    if _picker is not _secure:
        _picked_by_test.add((game.pk, game.created_at))
    elif (game.pk, game.created_at) not in _picked_by_test:
        number = commitments.ball(game, ordinal)
        if number is not None:
            if number not in left:  # the balls drawn are not the seed's: never draw one twice
                raise ValueError(f"ball {number} due at {ordinal} was drawn already")
            return number
    return _pick(game, "ball", left)


def _still_open(terms: Terms, ordinal: int, decided: set[str]) -> list[Decision]:
    """The game ends: every prize in play not decided yet is decided now, not won."""
    return [Decision(p.code, ordinal, ()) for p in terms.prizes if p.in_play and p.code not in decided]


def _lock_waiting(game: ElectronicGame) -> ElectronicGame | None:
    """The speciality's game waiting to draw (its sales closed while this one drew), locked: a later game,
    the same rank at a higher id, before the step's first audit entry."""
    waiting = (
        ElectronicGame.objects.filter(
            speciality_id=game.speciality_id, state=EGameState.SELLING, sales_closed_at__isnull=False
        )
        .values_list("pk", flat=True)
        .first()
    )
    return None if waiting is None else lock_egame(waiting)


def _end(
    game: ElectronicGame, ball: EBall, now: datetime, actor: Actor, told: Told, prizes: list[EPrize]
) -> None:
    """The game is over: closed, announced with every prize decided (the earlier balls' and `prizes`, this
    ball's, written with the step); the caller then begins the waiting game's draw."""
    game.state = EGameState.CLOSED
    game.closed_at = now
    stepsql.save_step(ball, game, ["balls_drawn", "last_ball_at", "decided", "state", "closed_at"])
    earlier = list(EPrize.objects.filter(game=game).order_by("ordinal", "pk"))
    payloads = [awards.prize_payload(game, p) for p in [*earlier, *prizes]]
    told.change(
        game,
        actor,
        EventType.EGAME_CLOSED,
        {"balls": game.balls_drawn},
        EGameClosed(**estep(game), balls=game.balls_drawn, prizes=payloads),
    )
    commitments.reveal_after_commit(game)  # a worker reveals the draw's seed once this commits


# --- the beat ---------------------------------------------------------------------------------------------


def stalled_draws(now: datetime | None = None) -> list[tuple[int, int]]:
    """Drawing games whose next step is lost (game id, next ordinal): due (the pace since the last ball; the
    pause, before the first) and held by no live worker's lease (halls.leases), or past the stall grace."""
    now = now or timezone.now()
    stalled = []
    for game in ElectronicGame.objects.filter(state=EGameState.DRAWING).select_related("version"):
        rules = rules_of(game.version)
        allowed = timedelta(seconds=float(rules.pace_seconds))
        since = game.last_ball_at
        if since is None:
            allowed += timedelta(seconds=rules.pause_seconds)
            since = game.sales_closed_at
            before = (
                ElectronicGame.objects.filter(speciality_id=game.speciality_id, number__lt=game.number)
                .order_by("-number")
                .values_list("closed_at", flat=True)
                .first()
            )
            if since is not None and before is not None and before > since:
                since = before
        ordinal = game.balls_drawn + 1
        if since is not None and leases.lost(LEASE_KIND, game.pk, ordinal, now - since - allowed):
            stalled.append((game.pk, ordinal))
    return stalled


def reap_stalled_draws(now: datetime | None = None) -> list[tuple[int, int]]:
    stalled = stalled_draws(now)
    for game_id, ordinal in stalled:
        log.warning("electronic game %s stalled before ball %s: re-enqueued", game_id, ordinal)
        leases.taken_over(LEASE_KIND, game_id, ordinal)
        dispatch(game_id, ordinal)
    return stalled


@dataclass
class Ticked:
    closed: list[int] = field(default_factory=list)
    begun: list[int] = field(default_factory=list)
    started: list[int] = field(default_factory=list)
    reaped: list[tuple[int, int]] = field(default_factory=list)
    revealed: list[int] = field(default_factory=list)


def tick(now: datetime | None = None) -> Ticked:
    """One beat: close due sales, begin waiting draws, open next games, re-enqueue stalled draws, reveal
    the seeds of finished games not yet revealed. Each
    game and speciality in its own transaction: one failing is logged and does not stop the others."""
    now = now or timezone.now()
    done = Ticked()
    for game_id in _sales_due(now):
        if _safely(close_sales, game_id, now=now) is not None:
            done.closed.append(game_id)
    waiting = ElectronicGame.objects.filter(state=EGameState.SELLING, sales_closed_at__isnull=False)
    for game_id in waiting.values_list("pk", flat=True):
        if _safely(begin_draw, game_id, now=now) is not None:
            done.begun.append(game_id)
    idle = Speciality.objects.filter(running=True, sessions__closed_at__isnull=True).exclude(
        games__state=EGameState.SELLING
    )
    for speciality_id in idle.values_list("pk", flat=True).distinct():
        started = _safely(start_next_game, speciality_id, now=now)
        if started is not None:
            done.started.append(started.pk)
    done.reaped = reap_stalled_draws(now)
    if commitments.enabled():
        done.revealed = commitments.reveal_due()  # a reveal whose task was lost
    return done


def _sales_due(now: datetime) -> list[int]:
    """The games selling whose `sales_close_at` their venue's clock has reached at the real instant `now`
    (a game selling per speciality at most: few rows; one offset read per venue)."""
    selling = ElectronicGame.objects.filter(state=EGameState.SELLING, sales_closed_at__isnull=True)
    offsets: dict[int, timedelta] = {}
    due = []
    for game_id, close_at, venue_id in selling.values_list("pk", "sales_close_at", "speciality__venue_id"):
        if venue_id not in offsets:
            offsets[venue_id] = venueclock.offset(venue_id)
        if now + offsets[venue_id] >= close_at:
            due.append(game_id)
    return due


def _safely(
    step: Callable[..., ElectronicGame | None], target: int, **kwargs: object
) -> ElectronicGame | None:
    try:
        return step(target, **kwargs)
    except Exception:
        log.exception("electronic %s of %s failed", step.__name__, target)
        return None
