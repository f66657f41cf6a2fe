"""The central's side of a simultaneous game: create it, allocate the network series to the member halls,
open and close its sales, draw its balls, take the halls' sale reports and claims, decide the prizes.

Every decision is written with the stream entry that carries it to the halls (halls.link.services.streams,
stream "network.<network code>") and audited in the chain of each member hall concerned."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo import cardgen
from bingo import claims as claim_rules
from bingo.cards import CardGrid
from bingo.network.simultaneous import rules
from bingo.network.simultaneous.models import (
    Allocation,
    ClaimStatus,
    NetworkBall,
    NetworkClaim,
    NetworkGame,
    NetworkGameState,
    NetworkPrize,
    PrizeKind,
    Reconciliation,
    ReportedSale,
)
from bingo.network.simultaneous.services import commitments, feed
from bingo.network.simultaneous.services.locks import lock_network_game, share_network_games
from bingo.prizes import prize_from_sales, split_equally
from bingo.traditional.labels import verdict_text
from halls import events, money
from halls.actors import Actor
from halls.errors import Conflict, DomainError, InvalidInput, NotFound
from halls.eventtypes import EventType, SimultaneousGame
from halls.fields import from_db
from halls.link import registry
from halls.link.kinds import LinkKind
from halls.link.services import streams
from halls.models import Network, Venue
from halls.services import audit, regions

_pick = secrets.choice  # the CSPRNG (DESIGN §4): never `random`; a committed draw's balls: its seed's

REMAINDER_TO = "house: rounding residue of an equal split (OP-10)"
LAST_ORDINAL = 90

# The doors' way to schedule work after commit (bingo.network.simultaneous.apps registers the Celery tasks'):
# the
# next ball (game id, ordinal, countdown) and the end of a claim window (game id, countdown).
_enqueue_ball: Callable[[int, int, float], None] | None = None
_enqueue_decision: Callable[[int, float], None] | None = None


def register_step_enqueuer(
    ball: Callable[[int, int, float], None], decision: Callable[[int, float], None] | None = None
) -> None:
    global _enqueue_ball, _enqueue_decision  # one door per process, set once at start-up
    _enqueue_ball, _enqueue_decision = ball, decision


# --- helpers ----------------------------------------------------------------------------------------------


def _member_ids(game: NetworkGame) -> list[int]:
    allocated = list(game.allocations.order_by("venue_id").values_list("venue_id", flat=True))
    return allocated or list(game.network.venues.order_by("pk").values_list("pk", flat=True))


def _audit(game: NetworkGame, actor: Actor, action: str, data: dict[str, Any], venues: Iterable[int]) -> None:
    """The decision in the chain of each member hall it concerns (the central keeps one chain per hall)."""
    for venue_id in venues:
        audit.record(
            venue_id=venue_id, actor=actor, action=action, obj=game, data={"game": game.code, **data}
        )


def _tell(game: NetworkGame) -> None:
    last = NetworkBall.objects.filter(game=game).order_by("-ordinal").values_list("number", flat=True).first()
    shown = SimultaneousGame(
        code=game.code,
        state=game.state,
        halls=game.allocations.count(),
        cards_sold=game.cards_sold,
        sales_total=game.sales_total,
        balls_drawn=game.balls_drawn,
        last_ball=last,
    )
    events.emit(f"simultaneous.{game.code}", EventType.SIMULTANEOUS_GAME, shown)


def _append(game: NetworkGame, kind: LinkKind, payload: dict[str, Any]) -> None:
    streams.append(stream=game.stream, kind=kind, payload={"game": game.code, **payload})


def _require(game: NetworkGame, state: NetworkGameState, doing: str) -> None:
    if game.state != state:
        raise Conflict(
            _("Network game %(code)s is %(state)s: cannot %(doing)s.")
            % {"code": game.code, "state": NetworkGameState(game.state).label.lower(), "doing": doing},
            code="wrong_state",
            state=game.state,
        )


def _game_by_code(code: Any) -> NetworkGame:
    game = NetworkGame.objects.filter(code=str(code)).first()
    if game is None:
        raise NotFound(_("No network game %(code)s.") % {"code": code}, code="unknown_network_game")
    return game


# --- setting up -------------------------------------------------------------------------------------------


def create_game(
    *,
    network: Network,
    code: str,
    card_price: Decimal,
    line_percent: Decimal,
    bingo_percent: Decimal,
    hall_percent: Decimal,
    sales_deadline: datetime,
    actor: User,
    operation_id: str,
    pace_seconds: Decimal | None = None,
) -> NetworkGame:
    """A network game being set up. The same `operation_id` again answers the game it made."""
    earlier = NetworkGame.objects.filter(operation_id=operation_id).first()
    if earlier is not None:
        if earlier.code != code or earlier.network_id != network.pk:
            raise Conflict(
                _("Operation %(operation)s made another network game.") % {"operation": operation_id},
                code="operation_id_reused",
            )
        return earlier
    try:
        price = money.parse("card_price", card_price, text=False, places=2, positive=True)
    except money.MoneyError as exc:
        raise InvalidInput(_("The card price is a positive amount in cents."), code="bad_card_price") from exc
    percents = (line_percent, bingo_percent, hall_percent)
    if any(p < 0 for p in percents) or sum(percents) > 100:
        raise InvalidInput(
            _("The prize percentages are each 0 or more and 100 at most together."), code="bad_percent"
        )
    if sales_deadline <= timezone.now():
        raise InvalidInput(_("The sales deadline must be in the future."), code="bad_deadline")
    with transaction.atomic():
        if NetworkGame.objects.filter(code=code).exists():
            raise Conflict(
                _("There is already a network game %(code)s.") % {"code": code}, code="game_exists"
            )
        game = NetworkGame.objects.create(
            network=network,
            code=code,
            card_price=price,
            line_percent=line_percent,
            bingo_percent=bingo_percent,
            hall_percent=hall_percent,
            sales_deadline=sales_deadline,
            pace_seconds=pace_seconds or Decimal("4"),
            operation_id=operation_id,
            created_at=timezone.now(),
            created_by=actor,
        )
        terms = {
            "card_price": price,
            "line_percent": line_percent,
            "bingo_percent": bingo_percent,
            "hall_percent": hall_percent,
            "sales_deadline": sales_deadline.isoformat(),
        }
        _audit(game, actor, "simultaneous.created", terms, _member_ids(game))
        _tell(game)
    return game


def allocate(*, game: NetworkGame, strips: Sequence[tuple[str, int]], actor: User) -> list[Allocation]:
    """Generate the network series and give each hall (licence number, strips) its own run of it; each
    hall hears of its run on the network's stream. Once per game, while it is being set up."""
    members = {v.licence_number: v for v in game.network.venues.all()}
    strangers = sorted(hall for hall, _count in strips if hall not in members)
    if strangers:
        raise InvalidInput(
            _("Not members of network %(network)s: %(halls)s.")
            % {"network": game.network.code, "halls": ", ".join(strangers)},
            code="not_a_member",
            halls=strangers,
        )
    try:
        runs = rules.allocate(strips)
    except ValueError as exc:
        raise InvalidInput(
            _("Give each member hall once, with at least one strip of six cards."), code="bad_allocation"
        ) from exc
    if not runs:
        raise InvalidInput(_("Allocate cards to at least one hall."), code="bad_allocation")
    total = sum(count for _hall, count in strips)
    with transaction.atomic():
        # A game across regions needs an operator agreement and a protocol for each pair (IB-02…IB-04,
        # R-14): refused before anything is written (the agreements' locks come before the game's).
        regions.check_network_span(network=game.network, venues=[members[run.hall] for run in runs])
        game = lock_network_game(game.pk)
        _require(game, NetworkGameState.SETUP, _("allocate its cards"))
        if game.allocations.exists():
            raise Conflict(_("The cards of this game are already allocated."), code="already_allocated")
        seed = secrets.token_hex(32)
        generated = cardgen.generate_series(seed.encode(), total)
        game.seed, game.generator, game.strips = seed, cardgen.CURRENT, total
        game.rederived_strips = [list(pair) for pair in generated.rederived]
        game.save(update_fields=["seed", "generator", "strips", "rederived_strips"])
        # Each hall makes only its own run of the series; the digest of the run's faces lets it check
        # they are the central's master cards without the whole series crossing the link.
        keys = generated.keys()
        faces = {run.hall: cardgen.faces_digest(keys[run.first - 1 : run.last]) for run in runs}
        made = Allocation.objects.bulk_create(
            Allocation(game=game, venue=members[run.hall], first_serial=run.first, last_serial=run.last)
            for run in runs
        )
        # Every audit entry before the first stream entry (halls.locks: AUDIT_HEAD before STREAM).
        for run in runs:
            data = {"first": run.first, "last": run.last, "strips": total, "seed": seed}
            _audit(game, actor, "simultaneous.allocated", data, [members[run.hall].pk])
        for run in runs:
            _append(
                game,
                LinkKind.SB_ALLOCATED,
                {
                    "hall": run.hall,
                    "seed": seed,
                    "generator": game.generator,
                    "rederived": game.rederived_strips,
                    "strips": total,
                    "first": run.first,
                    "last": run.last,
                    "faces": faces[run.hall],
                    "card_price": money.text(game.card_price),
                    "deadline": game.sales_deadline.isoformat(),
                    "line_percent": str(game.line_percent),
                    "bingo_percent": str(game.bingo_percent),
                    "hall_percent": str(game.hall_percent),
                },
            )
        _tell(game)
    return made


def master_card(game: NetworkGame, serial: int) -> CardGrid:
    """Card `serial` of the network series, recomputed from its seed (the cartón matriz)."""
    return cardgen.recompute_card(
        game.generator, game.seed.encode(), serial, cardgen.rederived_pairs(game.rederived_strips)
    )


def open_sales(*, game: NetworkGame, actor: Actor) -> NetworkGame:
    with transaction.atomic():
        game = lock_network_game(game.pk)
        _require(game, NetworkGameState.SETUP, _("open its sales"))
        if not game.allocations.exists():
            raise Conflict(_("Allocate the cards before opening the sales."), code="not_allocated")
        if game.sales_deadline <= timezone.now():
            raise Conflict(_("The sales deadline has passed."), code="deadline_passed")
        game.state = NetworkGameState.ON_SALE
        game.save(update_fields=["state"])
        # The draw committed before any hall sells a card; the halls get its commitment with the opening.
        draw = commitments.commit(game, _member_ids(game), actor)
        _audit(game, actor, "simultaneous.sales_opened", {}, _member_ids(game))
        _append(game, LinkKind.SB_SALES_OPENED, {} if draw is None else {"commitment": draw.commitment})
        _tell(game)
        feed.sales_opened(game, draw)  # the authority's feed: a session of its own, and its commitment
    return game


# --- sales ------------------------------------------------------------------------------------------------


def record_sale(message: registry.VenueMessage) -> dict[str, Any]:
    """A hall's sale or return, reported by its outbox: counted while the game is on sale, refused after
    (the hall then refunds those cards: they are not in the network game). Answered the hall's totals in
    the game after it. `record_sales` of one message."""
    (answer,) = record_sales([message])
    if isinstance(answer, DomainError):
        raise answer
    return answer


def record_sales(messages: list[registry.VenueMessage]) -> list[dict[str, Any] | DomainError]:
    """A hall's run of sale reports (its outbox's consecutive ones, the link's batch of them; one venue),
    each taken as `record_sale` takes it: refused (nothing of it written) or counted once per operation
    (a report sent again is kept as first received) and answered the hall's totals after it, in order.

    A run costs the same statements whatever its length (issue 30): the games' ids, the games FOR SHARE
    (halls' reports go on together; the close of sales waits for them), the hall's allocations, its
    totals and the operations it reported already, and one INSERT … ON CONFLICT DO NOTHING of the new
    ones (the venue's link is held: no other transaction reports this hall's sales meanwhile)."""
    if not messages:
        return []
    venue_id = messages[0].venue_id
    if any(m.venue_id != venue_id for m in messages):
        raise ValueError("record_sales takes one venue's messages")
    codes = {str(m.payload.get("game")) for m in messages}
    ids = dict(NetworkGame.objects.filter(code__in=codes).values_list("code", "pk"))
    games = share_network_games(list(ids.values()))
    allocations = {a.game_id: a for a in Allocation.objects.filter(game_id__in=games, venue_id=venue_id)}
    checked: list[ReportedSale | DomainError] = []
    for message in messages:
        game = games.get(ids.get(str(message.payload.get("game")), 0))
        try:
            checked.append(_checked_sale(game, allocations, message))
        except DomainError as refusal:
            checked.append(refusal)
    sales = [sale for sale in checked if isinstance(sale, ReportedSale)]
    if not sales:
        return [sale for sale in checked if isinstance(sale, DomainError)]  # each one a refusal
    totals = _halls_totals({sale.game_id for sale in sales}, venue_id)
    seen = set(
        ReportedSale.objects.filter(
            game_id__in={sale.game_id for sale in sales},
            venue_id=venue_id,
            operation__in={sale.operation for sale in sales},
        ).values_list("game_id", "operation")
    )
    new: list[ReportedSale] = []
    answers: list[dict[str, Any] | DomainError] = []
    for sale in checked:
        if isinstance(sale, DomainError):
            answers.append(sale)
            continue
        if (sale.game_id, sale.operation) not in seen:  # else counted already: kept as first received
            seen.add((sale.game_id, sale.operation))
            new.append(sale)
            sign = -1 if sale.returned else 1
            cards, amount = totals.get(sale.game_id, (0, Decimal(0)))
            totals[sale.game_id] = (cards + sign * sale.cards, amount + sign * sale.amount)
        cards, amount = totals.get(sale.game_id, (0, Decimal(0)))
        answers.append({"cards": cards, "amount": money.text(amount)})
    if new:
        ReportedSale.objects.bulk_create(new, ignore_conflicts=True)
    return answers


def _checked_sale(
    game: NetworkGame | None, allocations: dict[int, Allocation], message: registry.VenueMessage
) -> ReportedSale:
    """A sale report's row (unsaved) if the game takes it, else the refusal (a DomainError) raised."""
    payload = message.payload
    if game is None:
        raise NotFound(
            _("No network game %(code)s.") % {"code": payload.get("game")}, code="unknown_network_game"
        )
    if game.state != NetworkGameState.ON_SALE:
        raise Conflict(
            _("The sales of network game %(code)s are closed: this sale is not in the game.")
            % {"code": game.code},
            code="network_sales_closed",
        )
    allocation = allocations.get(game.pk)
    if allocation is None:
        raise _not_allocated(game)
    first, last = int(payload["first"]), int(payload["last"])
    if not rules.Run("", allocation.first_serial, allocation.last_serial).holds(first, last):
        raise Conflict(
            _("Cards %(first)s–%(last)s were never allocated to this hall.") % {"first": first, "last": last},
            code="card_not_allocated",
        )
    cards = last - first + 1
    try:
        amount = money.parse("amount", payload["amount"], places=money.CENT_PLACES)
    except money.MoneyError:
        amount = None
    if int(payload["cards"]) != cards or amount is None or amount != game.card_price * cards:
        raise InvalidInput(_("The sale's cards or amount do not add up."), code="bad_sale_report")
    return ReportedSale(
        game=game,
        venue_id=message.venue_id,
        operation=int(payload["operation"]),
        returned=bool(payload.get("returned")),
        first_serial=first,
        last_serial=last,
        cards=cards,
        amount=amount,
        received_at=timezone.now(),
    )


def _not_allocated(game: NetworkGame) -> Conflict:
    return Conflict(
        _("This hall has no cards allocated in network game %(code)s.") % {"code": game.code},
        code="card_not_allocated",
    )


def _halls_totals(game_ids: Iterable[int], venue_id: int) -> dict[int, tuple[int, Decimal]]:
    """The hall's cards and amount in each of the games it has reports in (its sales less its returns), in
    one statement (see `_hall_totals`)."""
    wanted = sorted(set(game_ids))
    table = ReportedSale._meta.db_table
    marks = ", ".join(["%s"] * len(wanted))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT game_id, COALESCE(SUM(CASE WHEN returned THEN -cards ELSE cards END), 0),"  # noqa: S608 (a model's table)
            " COALESCE(SUM(CASE WHEN returned THEN -amount ELSE amount END), 0)"
            f" FROM {table} WHERE venue_id = %s AND game_id IN ({marks}) GROUP BY game_id",
            [venue_id, *wanted],
        )
        rows = cursor.fetchall()
    field = ReportedSale._meta.get_field("amount")
    return {
        int(game_id): (int(cards), Decimal(from_db(field, amount, connection)))
        for game_id, cards, amount in rows
    }


def _allocation(game: NetworkGame, venue_id: int) -> Allocation:
    allocation = Allocation.objects.filter(game=game, venue_id=venue_id).first()
    if allocation is None:
        raise _not_allocated(game)
    return allocation


def _hall_totals(game: NetworkGame, venue_id: int) -> tuple[int, Decimal]:
    """The hall's cards and amount in the game: its sales less its returns. One plain statement (every
    sale report asks it: the ORM's aggregate cost more to compile than to run); the amount read as the ORM
    reads money (integer units on SQLite: the sum is exact there too)."""
    table = ReportedSale._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COALESCE(SUM(CASE WHEN returned THEN -cards ELSE cards END), 0),"  # noqa: S608 (a model's table)
            " COALESCE(SUM(CASE WHEN returned THEN -amount ELSE amount END), 0)"
            f" FROM {table} WHERE game_id = %s AND venue_id = %s",
            [game.pk, venue_id],
        )
        cards, amount = cursor.fetchone()
    return int(cards), Decimal(from_db(ReportedSale._meta.get_field("amount"), amount, connection))


def close_sales(*, game: NetworkGame, actor: Actor) -> NetworkGame:
    """Close the sales network-wide (at the deadline, before the first ball): what each hall's reports
    counted is the game; the prizes are fixed from the network's total and announced to every hall."""
    with transaction.atomic():
        game = lock_network_game(game.pk)
        _require(game, NetworkGameState.ON_SALE, _("close its sales"))
        halls: dict[str, dict[str, Any]] = {}
        cards_sold, total = 0, Decimal("0")
        for allocation in game.allocations.select_related("venue").order_by("venue_id"):
            cards, amount = _hall_totals(game, allocation.venue_id)
            operations = sorted(
                ReportedSale.objects.filter(game=game, venue_id=allocation.venue_id).values_list(
                    "operation", flat=True
                )
            )
            halls[allocation.venue.licence_number] = {
                "operations": operations,
                "cards": cards,
                "amount": money.text(amount),
            }
            cards_sold += cards
            total += amount
        line = prize_from_sales(total, game.line_percent)
        bingo = prize_from_sales(total, game.bingo_percent)
        hall = prize_from_sales(total, game.hall_percent)
        game.state = NetworkGameState.SALES_CLOSED
        game.cards_sold, game.sales_total = cards_sold, total
        game.line_prize, game.bingo_prize, game.hall_prize = line.amount, bingo.amount, hall.amount
        game.prize_rounding_residue = line.residue + bingo.residue + hall.residue
        game.save()
        # The sales digest over every card the reports counted (the halls' later reports are refused).
        draw = commitments.close(game, actor)
        figures: dict[str, Any] = {
            "cards_sold": cards_sold,
            "sales_total": money.text(total),
            "line_prize": money.text(line.amount),
            "bingo_prize": money.text(bingo.amount),
            "hall_prize": money.text(hall.amount),
        }
        if draw is not None:
            figures["draw"] = {"sales_digest": draw.sales_digest, "cards": draw.cards}
        _audit(game, actor, "simultaneous.sales_closed", {"halls": halls, **figures}, _member_ids(game))
        _append(game, LinkKind.SB_SALES_CLOSED, {"halls": halls, **figures})
        _tell(game)
        feed.sales_closed(game, draw.sales_digest if draw is not None else None)  # the authority's feed
    return game


def close_due_sales(now: datetime | None = None) -> list[str]:
    """Close the sales of every game on sale whose deadline has come (beat, every few seconds); a game in
    which no hall sold anything is voided there and then (nothing to draw)."""
    now = now or timezone.now()
    closed = []
    for game in NetworkGame.objects.filter(state=NetworkGameState.ON_SALE, sales_deadline__lte=now):
        game = close_sales(game=game, actor="beat")
        if game.cards_sold == 0:
            void_game(game=game, actor="beat")
        closed.append(game.code)
    return closed


def void_game(*, game: NetworkGame, actor: Actor) -> NetworkGame:
    """Void a network game whose sales closed with no card sold in any hall (nothing to draw, nothing to
    pay): audited in every member hall's chain, and the halls told on the stream (their local games are
    void already: a hall with no card in play voids its own at the close of sales)."""
    with transaction.atomic():
        game = lock_network_game(game.pk)
        _require(game, NetworkGameState.SALES_CLOSED, _("void it"))
        if game.cards_sold != 0:
            raise Conflict(
                _("Network game %(code)s has %(cards)s cards sold: it is played, not voided.")
                % {"code": game.code, "cards": game.cards_sold},
                code="cards_sold",
                cards_sold=game.cards_sold,
            )
        game.state = NetworkGameState.VOID
        game.save(update_fields=["state"])
        data = {"reason": "nothing sold", "cards_sold": 0}
        _audit(game, actor, "simultaneous.voided", data, _member_ids(game))
        _append(game, LinkKind.SB_GAME_CLOSED, {"void": True})
        _tell(game)
        feed.ended(game)  # the authority's feed: the game void, its session closed
        commitments.reveal_after_commit(game)
    return game


# --- the draw ---------------------------------------------------------------------------------------------


def start_draw(*, game: NetworkGame, actor: Actor) -> NetworkGame:
    with transaction.atomic():
        game = lock_network_game(game.pk)
        _require(game, NetworkGameState.SALES_CLOSED, _("start its draw"))
        if game.cards_sold == 0:
            raise Conflict(_("No card of this game was sold in any hall."), code="nothing_sold")
        game.state = NetworkGameState.DRAWING
        game.draw_started_at = timezone.now()
        game.save(update_fields=["state", "draw_started_at"])
        _audit(game, actor, "simultaneous.draw_started", {}, _member_ids(game))
        _tell(game)
        _schedule_ball(game, first=True)
    return game


def _schedule_ball(game: NetworkGame, *, first: bool = False) -> None:
    if game.state != NetworkGameState.DRAWING or game.balls_drawn >= LAST_ORDINAL:
        return
    if game.claims_pending_since is not None or _enqueue_ball is None:
        return
    enqueue, game_id, ordinal = _enqueue_ball, game.pk, game.balls_drawn + 1
    countdown = 1.0 if first else float(game.pace_seconds)
    transaction.on_commit(lambda: enqueue(game_id, ordinal, countdown))


def draw_ball(*, game_id: int, ordinal: int) -> NetworkBall | None:
    """Draw ball `ordinal` (the committed seed's, else the CSPRNG's) and stream it to every hall; a no-op
    when that step is done, the draw is not on or a claim waits for its decision (a retried or duplicated
    task writes nothing)."""
    with transaction.atomic():
        game = lock_network_game(game_id)
        if game.state != NetworkGameState.DRAWING or game.balls_drawn + 1 != ordinal:
            return None
        if game.claims_pending_since is not None or ordinal > LAST_ORDINAL:
            return None
        drawn = set(NetworkBall.objects.filter(game=game).values_list("number", flat=True))
        # A committed draw: the ball its seed gives (unless a test scripted `_pick`).
        number = commitments.ball(game, ordinal) if _pick is secrets.choice else None
        if number is None:
            number = _pick([n for n in range(1, LAST_ORDINAL + 1) if n not in drawn])
        elif number in drawn:
            raise ValueError(f"ball {number} due at {ordinal} of {game.code} was drawn already")
        now = timezone.now()
        ball = NetworkBall.objects.create(game=game, ordinal=ordinal, number=number, drawn_at=now)
        game.balls_drawn, game.last_ball_at = ordinal, now
        game.save(update_fields=["balls_drawn", "last_ball_at"])
        _append(game, LinkKind.SB_BALL, {"ordinal": ordinal, "number": number})
        feed.ball(game, ordinal, number, now)  # the authority's feed: the ball, with its fact
        _tell(game)
        _schedule_ball(game)
        if ordinal == LAST_ORDINAL:
            _schedule_end_check(game, float(settings.HALL_SIMULTANEOUS_CLAIM_SECONDS))
    return ball


# --- claims and prizes ------------------------------------------------------------------------------------


def _decided(game: NetworkGame) -> set[tuple[str, str]]:
    return set(NetworkPrize.objects.filter(game=game).values_list("kind", "scope"))


def _sold_at_central(game: NetworkGame, venue_id: int, serial: int) -> bool:
    covering = ReportedSale.objects.filter(
        game=game, venue_id=venue_id, first_serial__lte=serial, last_serial__gte=serial
    )
    sold = covering.filter(returned=False).count() - covering.filter(returned=True).count()
    return sold > 0


def record_claim(message: registry.VenueMessage) -> dict[str, Any]:
    """A claim a hall verified against the master card and reported: the central checks it against its own
    master card and balls and keeps it for the decision (the draw waits meanwhile)."""
    payload = message.payload
    game = lock_network_game(_game_by_code(payload.get("game")).pk)
    reference = int(payload["claim"])
    earlier = NetworkClaim.objects.filter(game=game, venue_id=message.venue_id, claim=reference).first()
    if earlier is not None:  # the same claim reported again: counted once
        return {"claim": reference, "status": earlier.status}
    if game.state != NetworkGameState.DRAWING:
        raise Conflict(
            _("Network game %(code)s is not drawing: no claim is taken.") % {"code": game.code},
            code="not_drawing",
        )
    kind, serial, ordinal = str(payload["kind"]), int(payload["serial"]), int(payload["ordinal"])
    if kind not in (PrizeKind.LINE, PrizeKind.BINGO):
        raise InvalidInput(_("A claim is for a line or a bingo."), code="bad_claim_kind")
    allocation = _allocation(game, message.venue_id)
    if not allocation.first_serial <= serial <= allocation.last_serial:
        raise Conflict(
            _("Card %(serial)s was never allocated to this hall.") % {"serial": serial},
            code="card_not_allocated",
            serial=serial,
        )
    if not _sold_at_central(game, message.venue_id, serial):
        raise Conflict(
            _("Card %(serial)s is not in the network game: its sale was not counted.") % {"serial": serial},
            code="card_not_in_game",
            serial=serial,
        )
    if not 1 <= ordinal <= game.balls_drawn:
        raise InvalidInput(_("The claim names a ball not drawn yet."), code="bad_ordinal")
    decided = _decided(game)
    hall = Venue.objects.values_list("licence_number", flat=True).get(pk=message.venue_id)
    still_open = (
        ((PrizeKind.LINE, "network"),)
        if kind == PrizeKind.LINE
        else ((PrizeKind.BINGO, "network"), (PrizeKind.HALL, hall))
    )
    if all(prize in decided for prize in still_open):
        raise Conflict(_("That prize has already been decided."), code="prize_decided")
    balls = list(
        NetworkBall.objects.filter(game=game, ordinal__lte=ordinal)
        .order_by("ordinal")
        .values_list("number", flat=True)
    )
    verdict = claim_rules.judge_claim(
        kind=claim_rules.ClaimKind(kind),
        card=master_card(game, serial),
        balls=balls,
        line_confirmed_at=None,
        game_closed=False,
        serial=serial,
    )
    if not verdict.valid:
        raise Conflict(
            verdict_text(verdict.code, verdict.facts),
            code="claim_not_valid",
            refusal=str(verdict.refusal),
            verdict=verdict.code.value,
            facts=dict(verdict.facts),
        )
    if NetworkClaim.objects.filter(game=game, kind=kind, serial=serial).exists():
        raise Conflict(
            _("Card %(serial)s already claimed this prize.") % {"serial": serial}, code="already_claimed"
        )
    now = timezone.now()
    NetworkClaim.objects.create(
        game=game,
        venue_id=message.venue_id,
        claim=reference,
        kind=kind,
        serial=serial,
        ordinal=ordinal,
        received_at=now,
    )
    if game.claims_pending_since is None:
        game.claims_pending_since = now
        game.save(update_fields=["claims_pending_since"])
        if _enqueue_decision is not None:
            enqueue, game_id = _enqueue_decision, game.pk
            window = float(settings.HALL_SIMULTANEOUS_CLAIM_SECONDS)
            transaction.on_commit(lambda: enqueue(game_id, window))
    return {"claim": reference, "status": ClaimStatus.PENDING.value}


def _answered_by_all(game: NetworkGame) -> bool:
    """Every hall with cards in play and still something to win answered "any more?" for the last ball drawn
    (TB-44 in every hall). A hall whose own Bingo is decided has closed its game (nothing is left to win
    there): it is not waited for."""
    decided = _decided(game)
    in_play = [
        a.venue.licence_number
        for a in game.allocations.select_related("venue").order_by("venue_id")
        if _hall_totals(game, a.venue_id)[0] > 0 and (PrizeKind.HALL, a.venue.licence_number) not in decided
    ]
    answered = game.no_more_claims or {}
    return bool(in_play) and all(int(answered.get(hall, 0)) >= game.balls_drawn for hall in in_play)


def record_no_more_claims(message: registry.VenueMessage) -> dict[str, Any]:
    """A hall's answer to "¿alguna línea más? ¿algún bingo más?" after ball `ordinal`: none. Once every hall
    with cards in play answered for the last ball and a claim waits, the claim window closes (the decision
    is taken now, not at the end of the time window). A repeated or stale answer changes nothing."""
    payload = message.payload
    game = lock_network_game(_game_by_code(payload.get("game")).pk)
    ordinal = payload.get("ordinal")
    if not isinstance(ordinal, int) or isinstance(ordinal, bool) or not 0 <= ordinal <= LAST_ORDINAL:
        raise InvalidInput(_("The answer names no ball."), code="bad_ordinal")
    if game.state != NetworkGameState.DRAWING:
        return {"decided": False, "state": game.state}
    hall = Venue.objects.values_list("licence_number", flat=True).get(pk=message.venue_id)
    _allocation(game, message.venue_id)
    answered = dict(game.no_more_claims or {})
    if ordinal > int(answered.get(hall, 0)):
        answered[hall] = min(ordinal, game.balls_drawn)
        game.no_more_claims = answered
        game.save(update_fields=["no_more_claims"])
    at_the_end = game.balls_drawn >= LAST_ORDINAL  # the last window: the game closes once all answered
    if (game.claims_pending_since is None and not at_the_end) or not _answered_by_all(game):
        return {"decided": False, "state": game.state}
    decide(game=game, actor="network")  # every hall answered: the window closes now
    return {"decided": True, "state": NetworkGame.objects.values_list("state", flat=True).get(pk=game.pk)}


def record_reconciliation(message: registry.VenueMessage) -> dict[str, Any]:
    """A hall's count of its cards in play as it starts to play, against the central's count for it: the
    two and what the hall refunded (sales the central never counted) recorded once; a difference is
    recorded as such (``agrees`` false, both counts kept) and audited, never absorbed."""
    payload = message.payload
    game = lock_network_game(_game_by_code(payload.get("game")).pk)
    _allocation(game, message.venue_id)
    earlier = Reconciliation.objects.filter(game=game, venue_id=message.venue_id).first()
    if earlier is not None:
        return {"agrees": earlier.agrees, "central_cards": earlier.central_cards}
    if game.state in (NetworkGameState.SETUP, NetworkGameState.ON_SALE):
        raise Conflict(
            _("The sales of network game %(code)s are not closed yet.") % {"code": game.code},
            code="sales_not_closed",
        )
    cards, amount = payload.get("cards"), payload.get("amount")
    refunded = payload.get("refunded", [])
    if not isinstance(cards, int) or isinstance(cards, bool) or cards < 0 or not isinstance(amount, str):
        raise InvalidInput(_("The hall's count is missing or wrong."), code="bad_reconciliation")
    if not isinstance(refunded, list):
        raise InvalidInput(_("The hall's count is missing or wrong."), code="bad_reconciliation")
    central_cards, central_amount = _hall_totals(game, message.venue_id)
    hall_amount = Decimal(amount)
    agrees = cards == central_cards and hall_amount == central_amount
    row = Reconciliation.objects.create(
        game=game,
        venue_id=message.venue_id,
        hall_cards=cards,
        hall_amount=hall_amount,
        central_cards=central_cards,
        central_amount=central_amount,
        refunded=refunded,
        agrees=agrees,
        received_at=timezone.now(),
    )
    data = {
        "hall_cards": cards,
        "hall_amount": money.text(hall_amount),
        "central_cards": central_cards,
        "central_amount": money.text(central_amount),
        "refunded": refunded,
        "agrees": agrees,
    }
    _audit(game, "link", "simultaneous.reconciled", data, [message.venue_id])
    return {
        "agrees": row.agrees,
        "central_cards": central_cards,
        "central_amount": money.text(central_amount),
    }


@dataclass(frozen=True)
class Decided:
    kind: str
    scope: str
    winners: list[NetworkClaim]


def decide(*, game: NetworkGame, actor: Actor) -> list[NetworkPrize]:
    """End the claim window: each prize still open goes to its claims at the lowest ball (the network Line
    and Bingo network-wide, each hall's prize within the hall), shared equally to the cent; the decisions
    go to the halls, which pay their winners. The draw then goes on, or the game closes once the network
    Bingo and every hall's prize with cards in play are decided."""
    with transaction.atomic():
        game = lock_network_game(game.pk)
        _require(game, NetworkGameState.DRAWING, _("decide its claims"))
        pending = list(game.claims.filter(status=ClaimStatus.PENDING).select_related("venue"))
        decided = _decided(game)
        outcomes: list[Decided] = []
        for kind in (PrizeKind.LINE, PrizeKind.BINGO):
            if (kind, "network") not in decided:
                outcomes.append(Decided(kind, "network", _first(pending, kind)))
        by_hall: dict[str, list[NetworkClaim]] = {}
        for claim in pending:
            if claim.kind == PrizeKind.BINGO:
                by_hall.setdefault(claim.venue.licence_number, []).append(claim)
        for hall, claims in sorted(by_hall.items()):
            if (PrizeKind.HALL, hall) not in decided:
                outcomes.append(Decided(PrizeKind.HALL, hall, _first(claims, PrizeKind.BINGO)))
        awarded = [_award(game, outcome, actor) for outcome in outcomes if outcome.winners]
        prizes = [prize for prize, _decision in awarded]
        winners = {c.pk for outcome in outcomes for c in outcome.winners}
        for claim in pending:
            claim.status = ClaimStatus.WON if claim.pk in winners else ClaimStatus.LOST
            claim.save(update_fields=["status"])
        game.claims_pending_since = None
        finished = _finished(game)
        wait = _end_window_left(game) if not finished and game.balls_drawn >= LAST_ORDINAL else None
        if wait is not None and wait <= 0:
            finished = True  # after the last ball, every hall answered or the window is over
        if finished:
            game.state = NetworkGameState.CLOSED
            _audit(game, actor, "simultaneous.closed", {"balls": game.balls_drawn}, _member_ids(game))
        # The stream entries after every audit entry (halls.locks: AUDIT_HEAD before STREAM).
        for _prize, decision in awarded:
            _append(game, LinkKind.SB_DECIDED, decision)
        # The authority's feed: each prize with the halls and cards that won it, then the game's end.
        for outcome, (prize, _decision) in zip([o for o in outcomes if o.winners], awarded, strict=True):
            feed.prize(game, prize, outcome.winners)
        if finished:
            _append(game, LinkKind.SB_GAME_CLOSED, {})
            feed.ended(game)
            commitments.reveal_after_commit(game)  # a worker reveals the draw's seed once this commits
        game.save(update_fields=["claims_pending_since", "state"])
        _tell(game)
        _schedule_ball(game)
        if not finished and wait is not None:
            _schedule_end_check(game, wait)
    return prizes


def _first(claims: list[NetworkClaim], kind: str) -> list[NetworkClaim]:
    candidates = [
        rules.Candidate(c.venue.licence_number, c.claim, c.ordinal) for c in claims if c.kind == kind
    ]
    chosen = {(c.hall, c.claim) for c in rules.first_ordinal(candidates)}
    return sorted(
        (c for c in claims if c.kind == kind and (c.venue.licence_number, c.claim) in chosen),
        key=lambda c: (c.venue.licence_number, c.claim),
    )


def _award(game: NetworkGame, outcome: Decided, actor: Actor) -> tuple[NetworkPrize, dict[str, Any]]:
    base = {
        PrizeKind.LINE: game.line_prize,
        PrizeKind.BINGO: game.bingo_prize,
        PrizeKind.HALL: game.hall_prize,
    }
    amount = base[PrizeKind(outcome.kind)] or Decimal("0")
    split = split_equally(amount, [c.pk for c in outcome.winners])
    prize = NetworkPrize.objects.create(
        game=game,
        kind=outcome.kind,
        scope=outcome.scope,
        ordinal=outcome.winners[0].ordinal,
        amount=amount,
        winners=len(outcome.winners),
        share=split.share,
        remainder=split.remainder,
        remainder_to=REMAINDER_TO,
        decided_at=timezone.now(),
    )
    winners = [
        {
            "hall": c.venue.licence_number,
            "hall_name": c.venue.name,  # where it was won, as the halls' screens say it
            "claim": c.claim,
            "serial": c.serial,
            "amount": money.text(split.share),
        }
        for c in outcome.winners
    ]
    decision = {
        "prize": outcome.kind,
        "scope": outcome.scope,
        "ordinal": prize.ordinal,
        "amount": money.text(amount),
        "share": money.text(split.share),
        "remainder": money.text(split.remainder),
        "winners": winners,
    }
    _audit(game, actor, "simultaneous.decided", decision, sorted({c.venue_id for c in outcome.winners}))
    return prize, decision


def _finished(game: NetworkGame) -> bool:
    """The network Bingo is decided and so is the prize of every hall that has cards in play. (After the
    last ball, a prize still open waits for the end window: `_end_window_left`.)"""
    decided = _decided(game)
    if (PrizeKind.BINGO, "network") not in decided:
        return False
    for allocation in game.allocations.select_related("venue"):
        cards, _amount = _hall_totals(game, allocation.venue_id)
        if cards and (PrizeKind.HALL, allocation.venue.licence_number) not in decided:
            return False
    return True


def _end_window_left(game: NetworkGame, now: datetime | None = None) -> float:
    """After the last ball, the seconds the game stays open for claims: none once every hall with something
    to win answered "no more" for the last ball, else what is left of the claim window counted from the
    last ball or the last claim received (a hall running balls behind the central still has its Hall Bingo
    claim decided, not refused as "not drawing")."""
    if _answered_by_all(game):
        return 0.0
    last_claim: datetime | None = NetworkClaim.objects.filter(game=game).aggregate(m=Max("received_at"))["m"]
    marks = [m for m in (game.last_ball_at, last_claim) if m is not None]
    since = max(marks) if marks else None
    if since is None:
        return 0.0
    window = timedelta(seconds=float(settings.HALL_SIMULTANEOUS_CLAIM_SECONDS))
    return max(0.0, (since + window - (now or timezone.now())).total_seconds())


def _schedule_end_check(game: NetworkGame, countdown: float) -> None:
    """After the last ball: decide (and close, if nothing more can come) when the end window is over."""
    if _enqueue_decision is not None:
        enqueue, game_id = _enqueue_decision, game.pk
        transaction.on_commit(lambda: enqueue(game_id, countdown))


def end_claim_window(*, game_id: int, actor: Actor) -> bool:
    """The end window's step after the last ball (task, beat): decide what waits and close the game if every
    hall answered or the window is over; a no-op for a game not at its last ball. True if it closed."""
    game = NetworkGame.objects.filter(pk=game_id, state=NetworkGameState.DRAWING).first()
    if game is None or (game.balls_drawn < LAST_ORDINAL and game.claims_pending_since is None):
        return False
    decide(game=game, actor=actor)
    return NetworkGame.objects.filter(pk=game_id, state=NetworkGameState.CLOSED).exists()


def reveal_draw(*, game_id: int) -> bool:
    """Reveal the finished game's draw (the worker's task): audited in each member hall's chain, streamed."""
    return commitments.reveal(game_id, _member_ids)


def reveal_due_draws() -> list[int]:
    """The beat: the finished games whose reveal was lost, revealed."""
    return commitments.reveal_due(_member_ids)


# --- resuming ---------------------------------------------------------------------------------------------


def reap_stalled(now: datetime | None = None) -> list[tuple[int, str]]:
    """Draws whose next step was lost (a worker killed, the broker away when it was enqueued): a draw with
    no ball for longer than its pace plus the grace gets its next ball enqueued again, a claim window open
    for longer than its length plus the grace gets its decision enqueued again (each step is a no-op if it
    was done meanwhile). Beat runs this; returns (game id, "ball" | "decision")."""
    now = now or timezone.now()
    grace = timedelta(seconds=settings.HALL_DRAW_STALL_GRACE_SECONDS)
    window = timedelta(seconds=settings.HALL_SIMULTANEOUS_CLAIM_SECONDS)
    reaped: list[tuple[int, str]] = []
    for game in NetworkGame.objects.filter(state=NetworkGameState.DRAWING):
        if game.claims_pending_since is not None:
            if now - game.claims_pending_since > window + grace and _enqueue_decision is not None:
                _enqueue_decision(game.pk, 0.0)
                reaped.append((game.pk, "decision"))
            continue
        if game.balls_drawn >= LAST_ORDINAL:  # the end window after the last ball
            late = _end_window_left(game, now - grace) <= 0
            if late and _enqueue_decision is not None:
                _enqueue_decision(game.pk, 0.0)
                reaped.append((game.pk, "decision"))
            continue
        since = game.last_ball_at or game.draw_started_at
        pace = timedelta(seconds=float(game.pace_seconds))
        if since is not None and now - since > pace + grace and _enqueue_ball is not None:
            _enqueue_ball(game.pk, game.balls_drawn + 1, 0.0)
            reaped.append((game.pk, "ball"))
    return reaped
