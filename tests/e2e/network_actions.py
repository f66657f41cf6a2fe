"""What tests/e2e/test_network_venues.py does inside the central and each venue installation: called by a
`link_support.Driver` (one long-lived `manage.py shell` of that installation) against its own database,
through the services the installation's doors call (the operator's and the cashier's API, the caller's
console). Every function answers plain JSON (amounts as strings)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Count, Sum
from django.utils import timezone

from bingo.cards import CardGrid
from bingo.network.interconnected.models import (
    KnownRound,
    NetworkPrize,
    PrizeRound,
    RoomMembership,
    RoundContribution,
    RoundGame,
    RoundResult,
    RoundShare,
)
from bingo.network.interconnected.services import prizes
from bingo.network.interconnected.services import readmodels as network_readmodels
from bingo.network.interconnected.services import venue as ib_venue
from bingo.network.simultaneous import models as sb
from bingo.network.simultaneous.services import central as sb_central
from bingo.network.simultaneous.services import venue as sb_venue
from bingo.traditional.models import Ball, Card, CardSeries, Claim, Game, SaleOperation
from bingo.traditional.services import claims, draw, games, sales
from bingo.traditional.services import series as series_services
from halls.cashier.models import Payable, Till
from halls.errors import DomainError
from halls.link.models import InboxMessage, OutboxMessage, VenueLink
from halls.link.services import credentials, outbox, presence
from halls.models import HallCategory, Jurisdiction, Network, Role, Room, StaffRole, Venue
from halls.services import sessions
from jackpots.models import Contribution
from jackpots.services import reports
from tests.cashier_support import on_shift

NETWORK = "MLNET"
PRIZE = "IB1"
ALL_BALLS = list(range(1, 91))
SERIES_SEED = "0f" * 32


def licence(n: int) -> str:
    return f"ML-B-{n:04d}"


def _user(username: str, venue: Venue | None = None, role: str | None = None) -> User:
    user = User.objects.create(username=username)  # nobody logs in: no password hashing
    if venue is not None and role is not None:
        StaffRole.objects.create(user=user, venue=venue, role=role)
    return user


def _venue_row(n: int) -> Venue:
    return Venue.objects.create(
        name=f"Bingo {n}",
        licence_number=licence(n),
        jurisdiction=Jurisdiction.ML,
        hall_category=HallCategory.FIRST,
        time_zone="Africa/Ceuta",
        line_percent=Decimal("10"),
        bingo_percent=Decimal("50"),
    )


def _network() -> Network:
    return Network.objects.get(code=NETWORK)


# --- the central -------------------------------------------------------------------------------------------


def setup_central(halls: list[int]) -> dict[str, Any]:
    """The member venues, the network, a credential per venue (its secret shown once), the central's
    operator, and the interconnected prize IB1 (10 % of the round games' sales, seeded 100.01, max ball 40)
    with every venue a member hall."""
    venues = [_venue_row(n) for n in halls]
    network = Network.objects.create(name="Red Melilla", code=NETWORK, jurisdiction=Jurisdiction.ML)
    network.venues.set(venues)
    _user("central")
    issued = {v.licence_number: credentials.issue(venue=v, actor="e2e") for v in venues}
    prizes.create_prize(
        network=network,
        code=PRIZE,
        name="Interconexionado Melilla",
        percent=Decimal("10"),
        max_ball=40,
        seed=Decimal("100.01"),
        wait_seconds=600,
        authorisation_ref="ML-IB-2026/1",
        halls=venues,
        actor="central-operator",
    )
    return {hall: {"key": i.key, "secret": i.secret} for hall, i in issued.items()}


def open_round(wait_seconds: int) -> int:
    prize = NetworkPrize.objects.get(code=PRIZE)
    return prizes.open_round(prize=prize, actor="central-operator", wait_seconds=wait_seconds).number


def link_states() -> dict[str, dict[str, Any]]:
    """The central's network map: each venue's link state."""
    return {
        s.licence_number: {"state": s.state, "socket": s.socket_open, "applied": s.applied_sequence}
        for s in presence.network_map()
    }


def link_seen() -> dict[str, Any]:
    """When the central last heard from each venue and when its socket closed (to wait on)."""
    return {
        link.venue.licence_number: {
            "last_seen": link.last_seen_at,
            "disconnected": link.disconnected_at,
            "connected": link.connected_at,
        }
        for link in VenueLink.objects.select_related("venue")
    }


def inbox_state() -> dict[str, Any]:
    """Per venue: the messages applied (each once: unique by venue and sequence), their sequences, and
    the answers that refused one."""
    out: dict[str, Any] = {}
    for venue in Venue.objects.order_by("licence_number"):
        rows = list(InboxMessage.objects.filter(venue=venue).order_by("sequence"))
        out[venue.licence_number] = {
            "sequences": [m.sequence for m in rows],
            "refused": [
                [m.sequence, m.kind, m.answer["refused"]["code"]] for m in rows if "refused" in m.answer
            ],
            "applied": VenueLink.objects.filter(venue=venue)
            .values_list("applied_sequence", flat=True)
            .first(),
        }
    return out


def round_state(number: int) -> dict[str, Any]:
    """A round at the central and its prize's pool: contributions by venue (the round's rows and the pool
    ledger's), results, shares, and the pool's balancing report."""
    prize = NetworkPrize.objects.select_related("pool").get(code=PRIZE)
    rnd = PrizeRound.objects.get(prize=prize, number=number)
    ledger = Contribution.objects.filter(pool=prize.pool)
    report = reports.balance(prize.pool)
    return {
        "state": rnd.state,
        "rule": rnd.rule,
        "ordinal": rnd.ordinal,
        "missing": rnd.missing,
        "pool_amount": rnd.pool_amount,
        "share": rnd.share,
        "remainder": rnd.remainder,
        "contributions": {
            c.venue.licence_number: {"sales": c.sales, "to_meter": c.to_meter, "game": c.game}
            for c in RoundContribution.objects.filter(round=rnd).select_related("venue")
        },
        "results": {
            r.venue.licence_number: {"ordinal": r.ordinal, "cards": r.cards, "late": r.late}
            for r in RoundResult.objects.filter(round=rnd).select_related("venue")
        },
        "shares": sorted(
            [s.pk, s.venue.licence_number, s.card, str(s.amount)]
            for s in RoundShare.objects.filter(round=rnd).select_related("venue")
        ),
        "ledger_by_source": {
            row["source"]: [row["n"], str(row["to_meter"])]
            for row in ledger.values("source").annotate(n=Count("id"), to_meter=Sum("to_meter"))
        },
        "ledger_count": ledger.count(),
        "ledger_to_meter": ledger.aggregate(s=Sum("to_meter"))["s"],
        "pool_contributions": report.levels[0].contributions,
        "pool_seeds": report.levels[0].seeds,
        "pool_awards": report.levels[0].awards,
        "pool_closing": report.levels[0].closing,
        "balance_holds": report.holds,
        "live_meter": network_readmodels.live_meter(prize),
    }


def sb_create(code: str, strips: list[int], deadline_seconds: float, pace: str) -> dict[str, Any]:
    """The operator's new network game (1.00 a card; Line 10 %, Bingo 40 %, every hall's Bingo 10 % of the
    network's sales), its cards allocated (strips per hall, in licence order), its sales opened."""
    network = _network()
    boss = User.objects.get(username="central")
    game = sb_central.create_game(
        network=network,
        code=code,
        card_price=Decimal("1.00"),
        line_percent=Decimal("10"),
        bingo_percent=Decimal("40"),
        hall_percent=Decimal("10"),
        sales_deadline=timezone.now() + timedelta(seconds=deadline_seconds),
        actor=boss,
        operation_id=f"op-{code}",
        pace_seconds=Decimal(pace),
    )
    halls = sorted(network.venues.values_list("licence_number", flat=True))
    sb_central.allocate(game=game, strips=list(zip(halls, strips, strict=True)), actor=boss)
    sb_central.open_sales(game=game, actor=boss)
    return {"deadline": game.sales_deadline}


def sb_close_and_draw(code: str) -> dict[str, Any]:
    """The operator closes the sales network-wide (when the beat has not already) and starts the draw."""
    boss = User.objects.get(username="central")
    game = sb.NetworkGame.objects.get(code=code)
    if game.state == sb.NetworkGameState.ON_SALE:
        game = sb_central.close_sales(game=game, actor=boss)
    sb_central.start_draw(game=game, actor=boss)
    return sb_state(code)


def sb_state(code: str) -> dict[str, Any]:
    game = sb.NetworkGame.objects.get(code=code)
    by_hall: dict[str, Any] = {}
    for allocation in game.allocations.select_related("venue"):
        sold = ReportedSaleSums.of(game, allocation.venue_id)
        by_hall[allocation.venue.licence_number] = {
            "first": allocation.first_serial,
            "last": allocation.last_serial,
            **sold,
        }
    return {
        "state": game.state,
        "balls": game.balls_drawn,
        "cards_sold": game.cards_sold,
        "sales_total": game.sales_total,
        "line_prize": game.line_prize,
        "bingo_prize": game.bingo_prize,
        "hall_prize": game.hall_prize,
        "halls": by_hall,
        "prizes": [
            {
                "kind": p.kind,
                "scope": p.scope,
                "ordinal": p.ordinal,
                "amount": p.amount,
                "share": p.share,
                "remainder": p.remainder,
                "winners": p.winners,
            }
            for p in game.prizes.order_by("pk")
        ],
        "claims": sorted(
            [c.venue.licence_number, c.claim, c.kind, c.serial, c.ordinal, c.status]
            for c in game.claims.select_related("venue")
        ),
    }


class ReportedSaleSums:
    @staticmethod
    def of(game: sb.NetworkGame, venue_id: int) -> dict[str, Any]:
        rows = sb.ReportedSale.objects.filter(game=game, venue_id=venue_id)
        sold = rows.filter(returned=False).aggregate(c=Sum("cards"), a=Sum("amount"))
        back = rows.filter(returned=True).aggregate(c=Sum("cards"), a=Sum("amount"))
        return {
            "reports": sorted(rows.values_list("operation", flat=True)),
            "cards": (sold["c"] or 0) - (back["c"] or 0),
            "amount": (sold["a"] or Decimal(0)) - (back["a"] or Decimal(0)),
        }


# --- a venue -----------------------------------------------------------------------------------------------


def setup_venue(n: int) -> dict[str, Any]:
    """This installation's own venue row (the licence number the central knows it by), its staff, a
    cashier on shift at a till, two rooms with an open session each ("Sala 1" plays the interconnected
    prize, "Sala 2" the network's simultaneous games), a series of cards, and the network it belongs to."""
    venue = _venue_row(n)
    caller = _user(f"caller{n}", venue, Role.CALLER)
    cashier = _user(f"cashier{n}", venue, Role.CASHIER)
    operator = _user(f"operator{n}", venue, Role.OPERATOR)
    on_shift(cashier, venue, float=Decimal("100.00"), till=Till.objects.create(venue=venue, name="Caja 1"))
    rooms = []
    for name in ("Sala 1", "Sala 2"):
        room = Room.objects.create(venue=venue, name=name, ball_pace_seconds=Decimal("0.5"))
        sessions.open_session(
            room=room,
            actor=caller,
            blower_ok=True,
            reserve_ok=True,
            reader_ok=True,
            inspection_balls=ALL_BALLS,
        )
        rooms.append(room)
    series_services.create_series(
        venue=venue, code="A", face_value=Decimal("2.00"), strips=10, actor=operator, seed=SERIES_SEED
    )
    network = Network.objects.create(name="Red Melilla", code=NETWORK, jurisdiction=Jurisdiction.ML)
    network.venues.add(venue)
    ib_venue.join_room(room=rooms[0], network=network, prize_code=PRIZE, actor=operator)
    return {"venue_id": venue.pk}


def _venue() -> Venue:
    return Venue.objects.get()  # a venue installation holds its own venue only


def _staff(role: str) -> User:
    return User.objects.get(hall_roles__venue=_venue(), hall_roles__role=role)


def known_rounds() -> list[int]:
    return sorted(KnownRound.objects.filter(prize_code=PRIZE).values_list("number", flat=True))


def ib_sell(cards: int, first: int) -> dict[str, Any]:
    """A game of the prize's room (drawn by hand from the hall's own blower): `cards` cards sold from
    `first`, its sales closed (it joins the open round: its contribution goes to the outbox with the close),
    its draw started."""
    venue = _venue()
    room = Room.objects.get(venue=venue, name="Sala 1")
    caller, cashier = _staff(Role.CALLER), _staff(Role.CASHIER)
    game = games.create_game(room=room, actor=caller, draw_source="manual")
    games.open_sales(game=game, actor=caller)
    series = CardSeries.objects.get(venue=venue, code="A")
    sales.sell_range(game=game, series=series, first=first, last=first + cards - 1, actor=cashier)
    game = games.close_sales(game=game, actor=caller)
    games.start_draw(game=game, actor=caller)
    joined = RoundGame.objects.filter(game=game).select_related("round").first()
    return {
        "game": game.pk,
        "sales": game.sales_total,
        "round": joined.round.number if joined else None,
        "to_meter": joined.to_meter if joined else None,
    }


def ib_bingo(game: int, serial: int, fillers: int) -> int:
    """The caller enters `fillers` numbers not on card `serial`, then its 15; its Bingo is claimed and
    confirmed (the game ends: its result goes to the outbox with the close). The Bingo's ordinal."""
    played = Game.objects.get(pk=game)
    caller = _staff(Role.CALLER)
    series = CardSeries.objects.get(venue=_venue(), code="A")
    numbers = sorted(CardGrid.from_json(Card.objects.get(series=series, serial=serial).grid).numbers)
    others = [n for n in range(1, 91) if n not in numbers][:fillers]
    for number in others + numbers:
        draw.enter_ball(game=played, number=number, actor=caller)
    claim = claims.file_claim(game=played, kind="bingo", series_code="A", serial=serial, actor=caller)
    assert claim.valid, claim.reason
    claims.confirm_claims(game=played, kind="bingo", actor=caller)
    return int(claim.bound_ordinal)


def _hall_game(code: str) -> sb.HallGame | None:
    return sb.HallGame.objects.filter(code=code).first()


def sb_place(code: str) -> str | None:
    """The operator places the network game in "Sala 2" once its allocation has come (None until then)."""
    hall_game = _hall_game(code)
    if hall_game is None:
        return None
    if hall_game.game_id is None:
        room = Room.objects.get(venue=_venue(), name="Sala 2")
        hall_game = sb_venue.place(hall_game=hall_game, room=room, actor=_staff(Role.OPERATOR))
    return str(hall_game.state)


def sb_sell(code: str, offset: int, cards: int) -> dict[str, Any]:
    """The cashier sells `cards` cards of the hall's run from its `offset`-th: the operation, or the
    refusal's code."""
    hall_game = _hall_game(code)
    assert hall_game is not None
    first = hall_game.first_serial + offset
    try:
        operation = sb_venue.sell(
            hall_game=hall_game, first=first, last=first + cards - 1, actor=_staff(Role.CASHIER)
        )
    except DomainError as refused:
        return {"refused": refused.code}
    return {"operation": operation.pk, "amount": operation.amount}


_seen: dict[str, int] = {}  # the balls each network game had at the last look (this shell's)
_grids: dict[int, CardGrid] = {}


def sb_claim_complete(code: str) -> list[Any]:
    """The caller claims, for every sold card of the hall's network game, a Line (while the network Line is
    open) and a Bingo it has with the balls the hall has (each card and kind once): what a player shouts.
    The balls it has, then the claims made: [kind, serial, valid]. Nothing to look at while no new ball
    came."""
    hall_game = _hall_game(code)
    if hall_game is None or hall_game.state != sb.HallGameState.PLAYING or hall_game.game_id is None:
        return []
    balls = set(Ball.objects.filter(game_id=hall_game.game_id).values_list("number", flat=True))
    if _seen.get(code) == len(balls):
        return [len(balls)]
    _seen[code] = len(balls)
    claimed = set(Claim.objects.filter(game_id=hall_game.game_id).values_list("kind", "serial"))
    caller = _staff(Role.CALLER)
    made: list[Any] = [len(balls)]
    for card_id, serial, grid_json in Card.objects.filter(sale__game_id=hall_game.game_id).values_list(
        "pk", "serial", "grid"
    ):
        grid = _grids.setdefault(card_id, CardGrid.from_json(grid_json))
        kinds = []
        if hall_game.line_won_at is None and any(row <= balls for row in grid.row_numbers):
            kinds.append("line")
        if grid.numbers <= balls:
            kinds.append("bingo")
        for kind in kinds:
            if (kind, serial) in claimed:
                continue
            try:
                claim = sb_venue.claim(hall_game=hall_game, kind=kind, serial=serial, actor=caller)
            except DomainError as refused:  # the game closed meanwhile
                made.append([kind, serial, refused.code])
                continue
            made.append([kind, serial, claim.valid])
            hall_game.refresh_from_db()
    return made


def sb_refund_unconfirmed(code: str) -> list[list[int]]:
    """The cashier refunds the cards the central's close did not count (the hall could not report them)."""
    hall_game = _hall_game(code)
    assert hall_game is not None
    refunds = sb_venue.refund_unconfirmed(hall_game=hall_game, actor=_staff(Role.CASHIER))
    return [[r.first_serial, r.last_serial] for r in refunds]


def sb_hall(code: str) -> dict[str, Any] | None:
    """The hall's network game: its state, balls, unconfirmed cards, and its drawer's takings from it."""
    hall_game = _hall_game(code)
    if hall_game is None:
        return None
    taken = Decimal(0)
    if hall_game.game_id is not None:
        for op in SaleOperation.objects.filter(game_id=hall_game.game_id):
            taken += op.amount if op.kind == "sell" else -op.amount
    return {
        "state": hall_game.state,
        "balls": len(hall_game.balls),
        "local_state": hall_game.game.state if hall_game.game else None,
        "unconfirmed": sb_venue.unconfirmed_serials(hall_game),
        "taken": taken,
        "announcement": hall_game.announcement,
        "awards": sorted(
            [a.kind, a.claim_id, str(a.amount)] for a in sb.HallAward.objects.filter(hall_game=hall_game)
        ),
    }


def venue_state() -> dict[str, Any]:
    """The outbox (written, unacknowledged, last sequence), the interconnected round games, and every
    payable of a network prize at this venue's cashier."""
    venue = _venue()
    return {
        "backlog": outbox.backlog(venue_id=venue.pk),
        "written": OutboxMessage.objects.filter(venue=venue).count(),
        "last": outbox.last_sequence(venue_id=venue.pk),
        "round_games": {
            str(g.round.number): {"game": g.game_id, "to_meter": g.to_meter, "reported": g.reported}
            for g in RoundGame.objects.filter(venue=venue).select_related("round")
        },
        "meter": [str(m.meter_amount) for m in RoomMembership.objects.filter(venue=venue, prize_code=PRIZE)],
        "payables": sorted(
            [p.source, p.kind, str(p.amount)]
            for p in Payable.objects.filter(venue=venue)
            if p.source.startswith(("network.share:", "simultaneous:"))
        ),
    }
