"""Read models: what a hall screen shows for a room, the caller's view of a game, and the game recall.

Answers stay small whatever the hall's size: the caller's view never lists the sold cards (the sales
announcement summarises them as ranges; ``sold_cards_page`` pages through them), and the lists that grow
with the cards sold (unclaimed winners, claims) are cut to their first or latest rows, with their counts.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db.models import Q

from bingo.models import (
    Award,
    Ball,
    BallCorrection,
    BallSetEvent,
    Claim,
    DeviceSwitch,
    Game,
    GameProgram,
    GameState,
    PrizeResult,
    ProgramAward,
    SaleOperation,
    SoldCard,
)
from bingo.services import ballsets, devices
from bingo.services import claims as claim_services
from bingo.services.programs.readmodels import game_programs, screen_programs
from bingo.services.sales import sales_totals
from bingo.services.verdicts import claim_verdict
from halls.cashier.services import payables
from halls.models import Room
from jackpots.models import Award as PoolAward


def _balls(game: Game) -> list[dict[str, Any]]:
    colour_of = game.ball_set.colour_of if game.ball_set else (lambda _n: "")
    # A corrected ball carries the number it was first entered as (only games with a correction ask).
    first_entered = (
        dict(BallCorrection.objects.filter(game=game).order_by("-pk").values_list("ordinal", "old_number"))
        if game.balls_corrected
        else {}
    )
    return [
        {
            "ordinal": b.ordinal,
            "ball": b.number,
            "colour": colour_of(b.number),
            "drawn_at": b.drawn_at,
            "corrected_from": first_entered.get(b.ordinal),
        }
        for b in Ball.objects.filter(game=game).order_by("ordinal")
    ]


def _corrections(game: Game) -> list[dict[str, Any]]:
    """Every correction of the game's balls, in order: the ball, its old and new number, who, when, why."""
    rows = BallCorrection.objects.filter(game=game).select_related("corrected_by").order_by("pk")
    return [correction_view(c) for c in rows]


def correction_view(c: BallCorrection) -> dict[str, Any]:
    """One correction as the recall and the correction's own answer show it."""
    return {
        "ordinal": c.ordinal,
        "old": c.old_number,
        "new": c.new_number,
        "reason": c.reason,
        "corrected_by": c.corrected_by.get_username(),
        "corrected_at": c.corrected_at,
    }


def _winners(game: Game) -> list[dict[str, Any]]:
    return [
        {
            "kind": r.kind,
            "ordinal": r.ordinal,
            "amount": r.amount,
            "share": r.share,
            "remainder": r.remainder,
            "winners": [
                {"series": a.claim.series.code, "serial": a.claim.serial, "amount": a.amount}
                for a in r.awards.select_related("claim__series").order_by("claim__serial")
            ],
        }
        for r in PrizeResult.objects.filter(game=game).order_by("pk")
    ]


def game_summary(game: Game, *, public: bool = False) -> dict[str, Any]:
    """The game as staff see it; `public` (the hall screens): without the internal void reason."""
    # Fixed at the close of sales; while on sale, the running totals (as the sales.* events carry them).
    totals = sales_totals(game) if game.state == GameState.ON_SALE else None
    return {
        "id": game.pk,
        "number": game.number,
        "state": game.state,
        "state_label": GameState(game.state).label,
        "draw_source": game.draw_source,
        "cards_sold": totals["cards_sold"] if totals else game.cards_sold,
        "sales_total": totals["sales_total"] if totals else game.sales_total,
        # A simultaneous game's hall game pays no Line or Bingo of its own: the screens show the network's.
        "line_prize": _announced(game, "line_prize") if game.line_prize is None else game.line_prize,
        "bingo_prize": _announced(game, "bingo_prize") if game.bingo_prize is None else game.bingo_prize,
        "announcement": game.announcement,
        "claim_window": game.claim_window,
        "line_won_at": game.line_won_at,
        "balls": _balls(game),
        "prizes": _winners(game),
        # The accumulated prizes in play: amounts and max balls before the first ball, then the awards.
        "programs": game_programs(game),
        "void_message": game.void_message,
        **({} if public else {"void_reason": game.void_reason, **_equipment(game)}),
    }


def _announced(game: Game, prize: str) -> Decimal | None:
    """A prize's amount as the close of sales announced it (a network game's, S6), if it did."""
    amount = (game.announcement or {}).get(prize)
    return None if amount in (None, "") else Decimal(str(amount))


def _equipment(game: Game) -> dict[str, Any]:
    """The ball set (its count against the manufacturer's limit, R-06) and the drawing device (TB-30)."""
    device = game.draw_device
    return {
        "ball_set": ballsets.usage(game.ball_set),
        "draw_device": None
        if device is None
        else {"id": device.pk, "name": device.name, "kind": device.kind},
    }


def _switches(game: Game) -> list[dict[str, Any]]:
    rows = DeviceSwitch.objects.filter(game=game).select_related("from_device", "to_device", "switched_by")
    return [devices.switch_view(s) for s in rows.order_by("pk")]


def _ball_set_events(game: Game) -> list[dict[str, Any]]:
    """What happened to the game's ball set while the game was on: its incidents, balls replaced."""
    if game.ball_set_id is None:
        return []
    rows = BallSetEvent.objects.filter(ball_set_id=game.ball_set_id).select_related("recorded_by")
    start, end = game.created_at, game.closed_at
    rows = rows.filter(Q(game=game) | Q(recorded_at__gte=start, **({"recorded_at__lte": end} if end else {})))
    return [ball_set_event_view(e) for e in rows.order_by("pk")]


def ball_set_event_view(event: BallSetEvent) -> dict[str, Any]:
    return {
        "kind": event.kind,
        "balls": event.balls,
        "note": event.note,
        "game": event.game_id,
        "replacement": event.replacement_id,
        "games_played": event.games_played,
        "recorded_by": event.recorded_by.get_username(),
        "recorded_at": event.recorded_at,
    }


def current_game(room: Room) -> Game | None:
    """The room's game in play, else its most recent one (so a screen keeps the result up)."""
    games = Game.objects.filter(room=room).select_related("ball_set", "room", "draw_device")
    live = games.exclude(state__in=[GameState.CLOSED, GameState.VOID]).order_by("-pk").first()
    return live or games.order_by("-pk").first()


def screen_snapshot(room: Room) -> dict[str, Any]:
    """The bingo section of a hall screen's snapshot."""
    game = current_game(room)
    return {
        "room": room.name,
        "game": game_summary(game, public=True) if game else None,
        "programs": screen_programs(room),
    }


# At most this many unclaimed winning cards of each kind in a view or an event (the caller reads them out;
# past a few dozen the count says enough), and the caller's view shows this many latest claims.
UNCLAIMED_SHOWN = 50
CLAIMS_SHOWN = 100


def unclaimed_view(game: Game, *, current: bool = False) -> dict[str, Any]:
    """The winning cards nobody has claimed: the first ``UNCLAIMED_SHOWN`` of each kind, and the counts.

    The one place the console's read model asks the claims service (``unclaimed``), so the view is as
    fast as that answer. ``ordinal`` is the ball the list is computed at. ``current``: see ``unclaimed``.
    """
    found = claim_services.unclaimed(game, limit=UNCLAIMED_SHOWN, current=current)
    return {"ordinal": game.balls_drawn, **found}


def caller_view(game: Game) -> dict[str, Any]:
    """Everything the caller console shows: the summary, the latest claims and the unclaimed winners.

    `game` is as read for this answer (its balls are listed as its `balls_drawn` says)."""
    claims = Claim.objects.filter(game=game).select_related("series", "claimed_by", "card")
    latest = list(claims.order_by("-pk")[:CLAIMS_SHOWN])
    balls = _ball_numbers(game)
    return {
        **game_summary(game),
        "claims": [_claim(c, game, balls) for c in reversed(latest)],
        "claims_count": len(latest) if len(latest) < CLAIMS_SHOWN else claims.count(),
        "unclaimed": unclaimed_view(game, current=True),
    }


def sold_cards_page(game: Game, *, after: tuple[str, int] | None, limit: int) -> dict[str, Any]:
    """One page of the game's sold cards in (series, serial) order, from just after ``after``."""
    sold = SoldCard.objects.filter(game=game)
    rows = sold.order_by("card__series__code", "card__serial")
    if after is not None:
        code, serial = after
        rows = rows.filter(
            Q(card__series__code__gt=code) | Q(card__series__code=code, card__serial__gt=serial)
        )
    page = list(rows.values_list("card__series__code", "card__serial")[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return {
        "count": sold.count(),
        "next": f"{page[-1][0]}:{page[-1][1]}" if more else None,
        "results": [{"series": code, "serial": serial} for code, serial in page],
    }


def _ball_numbers(game: Game) -> list[int]:
    return list(Ball.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True))


def _claim(c: Claim, game: Game, balls: list[int]) -> dict[str, Any]:
    code, facts = claim_verdict(c, line_won_at=game.line_won_at, balls=balls)
    return {
        "id": c.pk,
        "kind": c.kind,
        "series": c.series.code,
        "serial": c.serial,
        "bound_ordinal": c.bound_ordinal,
        "valid": c.valid,
        "refusal": c.refusal,
        "reason": c.reason,  # in English (the audit's); the verdict as data: its code and facts
        "code": code,
        "facts": facts,
        "winning_row": c.winning_row,
        "completed_at": c.completed_at,
        "claimed_by": c.claimed_by.get_username(),
        "created_at": c.created_at,
    }


def game_recall(game: Game) -> dict[str, Any]:
    """The full record of a game: sales, prizes, balls in order with their times, claims and awards."""
    sales = SaleOperation.objects.filter(game=game).select_related("series", "cashier").order_by("pk")
    balls = _ball_numbers(game)
    return {
        **game_summary(game),
        "room": game.room.name,
        "venue": game.room.venue.name,
        "session": game.session_id,
        "created_at": game.created_at,
        "sales_closed_at": game.sales_closed_at,
        "draw_started_at": game.draw_started_at,
        "closed_at": game.closed_at,
        "prize_rounding_residue": game.prize_rounding_residue,
        "sale_operations": [
            {
                "kind": s.kind,
                "series": s.series.code,
                "first": s.first_serial,
                "last": s.last_serial,
                "cards": s.cards,
                "amount": s.amount,
                "cashier": s.cashier.get_username(),
                "at": s.created_at,
            }
            for s in sales
        ],
        "claims": [
            _claim(c, game, balls)
            for c in Claim.objects.filter(game=game).select_related("series", "claimed_by", "card")
        ],
        "ball_corrections": _corrections(game),
        "device_switches": _switches(game),
        "ball_set_events": _ball_set_events(game),
        "payouts": _payouts(game),
    }


def _payouts(game: Game) -> list[dict[str, Any]]:
    """Every winner's share (Line, Bingo, each program won) and its payment at the cashier: the payable's
    state, when it was paid, by whom, how, the receipt (None: no payable, e.g. a share of 0)."""
    rows: list[tuple[str, str, Any, int, Any, str]] = []
    for a in (
        Award.objects.filter(result__game=game)
        .select_related("result", "claim__series")
        .order_by("result_id", "claim__serial")
    ):
        source = payables.bingo_award_source(a.pk)
        rows.append((a.result.kind, "", a.claim.series.code, a.claim.serial, a.amount, source))
    won = GameProgram.objects.filter(game=game, won=True, settlement__isnull=False)
    settlements = dict(won.values_list("pk", "settlement_id"))
    pool_awards = dict(
        PoolAward.objects.filter(settlement_id__in=settlements.values(), order=0).values_list(
            "settlement_id", "pk"
        )
    )
    for p in (
        ProgramAward.objects.filter(game_program__in=list(settlements))
        .select_related("game_program__program", "claim__series")
        .order_by("game_program_id", "claim__serial")
    ):
        award_id = pool_awards.get(settlements[p.game_program_id])
        source = "" if award_id is None else payables.pool_award_source(award_id, p.claim_id)
        program = p.game_program.program.code
        rows.append(("program", program, p.claim.series.code, p.claim.serial, p.amount, source))
    paid = payables.payouts([source for *_, source in rows if source], venue_id=game.room.venue_id)
    return [
        {
            "prize": prize,
            "program": program,
            "series": series,
            "serial": serial,
            "amount": amount,
            "payout": paid.get(source),
        }
        for prize, program, series, serial, amount, source in rows
    ]
