"""What the central's pages show of the network now (read-only, nothing here writes):

- every interconnected prize with its pool's live meter (the engine's read model, `jackpots.services.
  readmodels.meters`), its max ball, members (with region and operator), its open rounds (who reported) and
  its last decisions (ordinal, rule, every winning card's share and hall);
- every simultaneous game with its state, its halls (cards allocated, cards and amount sold as the central
  counted them), balls drawn, claims and prize decisions.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.db.models import Q, Sum

from bingo.network.interconnected.models import NetworkPrize, PrizeRound, RoundState
from bingo.network.simultaneous.models import (
    Allocation,
    ClaimStatus,
    NetworkBall,
    NetworkClaim,
    NetworkGame,
    NetworkGameState,
    PrizeKind,
    ReportedSale,
)
from bingo.network.simultaneous.models import NetworkPrize as GamePrize
from halls.models import Venue
from jackpots.services.readmodels import meters

LAST_DECISIONS = 5
LAST_BALLS = 10
ZERO = Decimal(0)


@dataclass(frozen=True)
class Member:
    name: str
    licence: str
    region: str
    operator: str


@dataclass(frozen=True)
class Winner:
    hall: str  # the venue's name
    licence: str
    card: str
    amount: Decimal


@dataclass(frozen=True)
class OpenRound:
    number: int
    opened_at: datetime
    closes_at: datetime
    expected: list[str]
    contributed: list[str]
    reported: list[str]


@dataclass(frozen=True)
class Decision:
    number: int
    decided_at: datetime | None
    rule: str
    rule_label: str
    ordinal: int | None
    pool_amount: Decimal | None
    share: Decimal | None
    remainder: Decimal | None
    missing: list[str]
    winners: list[Winner]


@dataclass(frozen=True)
class PrizeCard:
    code: str
    name: str
    network: str
    pool_code: str
    currency: str
    amount: Decimal  # the live meter (whole cents down)
    reserve: Decimal
    seed: Decimal
    paid: Decimal
    percent: Decimal
    reserve_percent: Decimal
    max_ball: int
    active: bool
    members: list[Member]
    open_rounds: list[OpenRound]
    decisions: list[Decision]


def _member(venue: Venue) -> Member:
    operator = venue.operator
    return Member(
        name=venue.name,
        licence=venue.licence_number,
        region=venue.region.code if venue.region is not None else "",
        operator=f"{operator.tax_id} · {operator.name}" if operator is not None else "",
    )


def _names() -> dict[str, str]:
    return dict(Venue.objects.values_list("licence_number", "name"))


def _open_round(rnd: PrizeRound) -> OpenRound:
    return OpenRound(
        number=rnd.number,
        opened_at=rnd.opened_at,
        closes_at=rnd.closes_at,
        expected=list(rnd.expected),
        contributed=sorted(rnd.contributions.values_list("venue__licence_number", flat=True)),
        reported=sorted(rnd.results.filter(late=False).values_list("venue__licence_number", flat=True)),
    )


def _decision(rnd: PrizeRound) -> Decision:
    winners = [
        Winner(hall=s.venue.name, licence=s.venue.licence_number, card=s.card, amount=s.amount)
        for s in rnd.shares.select_related("venue").order_by("pk")
    ]
    return Decision(
        number=rnd.number,
        decided_at=rnd.decided_at,
        rule=rnd.rule,
        rule_label=str(rnd.get_rule_display()),
        ordinal=rnd.ordinal,
        pool_amount=rnd.pool_amount,
        share=rnd.share,
        remainder=rnd.remainder,
        missing=list(rnd.missing),
        winners=winners,
    )


def network_prizes() -> list[PrizeCard]:
    """Every interconnected prize, active first, with its pool's live meter."""
    prizes = list(
        NetworkPrize.objects.select_related("network", "pool").order_by("-active", "network__code", "code")
    )
    read = meters.pool_meters(p.pool_id for p in prizes)
    cards = []
    for prize in prizes:
        level = read[prize.pool_id].levels[0]
        halls = prize.halls.select_related("venue__region", "venue__operator").order_by("venue__name")
        rounds = prize.rounds.order_by("-number")
        cards.append(
            PrizeCard(
                code=prize.code,
                name=prize.name,
                network=prize.network.code,
                pool_code=prize.pool.code,
                currency=prize.pool.currency,
                amount=level.amount,
                reserve=level.reserve,
                seed=level.seed,
                paid=level.total_paid,
                percent=prize.percent,
                reserve_percent=prize.reserve_percent,
                max_ball=prize.max_ball,
                active=prize.active,
                members=[_member(h.venue) for h in halls],
                open_rounds=[_open_round(r) for r in rounds.filter(state=RoundState.OPEN)],
                decisions=[_decision(r) for r in rounds.filter(state=RoundState.DECIDED)[:LAST_DECISIONS]],
            )
        )
    return cards


def live_meters() -> dict[str, dict[str, str]]:
    """The live amount of every interconnected prize's meter, by prize code (the pools page polls it)."""
    prizes = list(NetworkPrize.objects.select_related("pool").order_by("code"))
    read = meters.pool_meters(p.pool_id for p in prizes)
    return {
        p.code: {"amount": str(read[p.pool_id].levels[0].amount), "currency": p.pool.currency} for p in prizes
    }


# --- simultaneous games -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameHall:
    name: str
    licence: str
    region: str
    first_serial: int
    last_serial: int
    allocated: int
    sold: int  # cards the central counted (sales minus returns)
    amount: Decimal
    claims: int


@dataclass(frozen=True)
class GameClaim:
    hall: str
    kind: str
    serial: int
    ordinal: int
    status: str
    status_label: str


@dataclass(frozen=True)
class GameDecision:
    kind: str
    kind_label: str
    scope: str  # "network" or the hall's name
    ordinal: int
    amount: Decimal
    winners: int
    share: Decimal
    remainder: Decimal
    decided_at: datetime


@dataclass(frozen=True)
class GameCard:
    code: str
    network: str
    state: str
    state_label: str
    card_price: Decimal
    sales_deadline: datetime
    cards_sold: int
    sales_total: Decimal
    line_prize: Decimal | None
    bingo_prize: Decimal | None
    hall_prize: Decimal | None
    balls_drawn: int
    last_balls: list[int]
    halls: list[GameHall]
    claims: list[GameClaim]
    decisions: list[GameDecision]

    @property
    def in_progress(self) -> bool:
        return self.state != NetworkGameState.CLOSED


def _game_halls(game: NetworkGame) -> list[GameHall]:
    sums = {
        row["venue_id"]: row
        for row in ReportedSale.objects.filter(game=game)
        .values("venue_id")
        .annotate(
            sold=Sum("cards", filter=Q(returned=False), default=0),
            back=Sum("cards", filter=Q(returned=True), default=0),
            paid=Sum("amount", filter=Q(returned=False), default=ZERO),
            refunded=Sum("amount", filter=Q(returned=True), default=ZERO),
        )
    }
    claims: dict[int, int] = defaultdict(int)
    for venue_id in NetworkClaim.objects.filter(game=game).values_list("venue_id", flat=True):
        claims[venue_id] += 1
    halls = []
    allocations = (
        Allocation.objects.filter(game=game).select_related("venue__region").order_by("first_serial")
    )
    for allocation in allocations:
        venue = allocation.venue
        row = sums.get(venue.pk, {"sold": 0, "back": 0, "paid": ZERO, "refunded": ZERO})
        halls.append(
            GameHall(
                name=venue.name,
                licence=venue.licence_number,
                region=venue.region.code if venue.region is not None else "",
                first_serial=allocation.first_serial,
                last_serial=allocation.last_serial,
                allocated=allocation.last_serial - allocation.first_serial + 1,
                sold=int(row["sold"]) - int(row["back"]),
                amount=Decimal(row["paid"]) - Decimal(row["refunded"]),
                claims=claims[venue.pk],
            )
        )
    return halls


def _game_card(game: NetworkGame, names: dict[str, str]) -> GameCard:
    balls = list(
        NetworkBall.objects.filter(game=game)
        .order_by("-ordinal")
        .values_list("number", flat=True)[:LAST_BALLS]
    )
    claims = [
        GameClaim(
            hall=c.venue.name,
            kind=c.kind,
            serial=c.serial,
            ordinal=c.ordinal,
            status=c.status,
            status_label=str(ClaimStatus(c.status).label),
        )
        for c in NetworkClaim.objects.filter(game=game).select_related("venue").order_by("ordinal", "pk")
    ]
    decisions = [
        GameDecision(
            kind=p.kind,
            kind_label=str(PrizeKind(p.kind).label),
            scope=p.scope if p.scope == "network" else names.get(p.scope, p.scope),
            ordinal=p.ordinal,
            amount=p.amount,
            winners=p.winners,
            share=p.share,
            remainder=p.remainder,
            decided_at=p.decided_at,
        )
        for p in GamePrize.objects.filter(game=game).order_by("decided_at", "pk")
    ]
    return GameCard(
        code=game.code,
        network=game.network.code,
        state=game.state,
        state_label=str(NetworkGameState(game.state).label),
        card_price=game.card_price,
        sales_deadline=game.sales_deadline,
        cards_sold=game.cards_sold,
        sales_total=game.sales_total,
        line_prize=game.line_prize,
        bingo_prize=game.bingo_prize,
        hall_prize=game.hall_prize,
        balls_drawn=game.balls_drawn,
        last_balls=list(reversed(balls)),
        halls=_game_halls(game),
        claims=claims,
        decisions=decisions,
    )


def network_games(*, limit: int = 30) -> list[GameCard]:
    """The simultaneous games, those in progress first, then the latest closed ones."""
    names = _names()
    games = NetworkGame.objects.select_related("network")
    running = list(games.exclude(state=NetworkGameState.CLOSED).order_by("sales_deadline", "pk"))
    closed = list(games.filter(state=NetworkGameState.CLOSED).order_by("-pk")[: max(limit - len(running), 0)])
    return [_game_card(g, names) for g in running + closed]
