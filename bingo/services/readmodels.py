"""Read models: what a hall screen shows for a room, the caller's view of a game, and the game recall."""

from __future__ import annotations

from typing import Any

from bingo.models import Ball, Claim, Game, GameState, PrizeResult, SaleOperation
from bingo.services.claims import unclaimed_winners
from bingo.services.programs.views import game_programs, screen_programs
from bingo.services.sales import sales_totals
from halls.models import Room


def _balls(game: Game) -> list[dict[str, Any]]:
    colour_of = game.ball_set.colour_of if game.ball_set else (lambda _n: "")
    return [
        {"ordinal": b.ordinal, "ball": b.number, "colour": colour_of(b.number), "drawn_at": b.drawn_at}
        for b in Ball.objects.filter(game=game).order_by("ordinal")
    ]


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


def game_summary(game: Game) -> dict[str, Any]:
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
        "line_prize": game.line_prize,
        "bingo_prize": game.bingo_prize,
        "announcement": game.announcement,
        "claim_window": game.claim_window,
        "line_won_at": game.line_won_at,
        "balls": _balls(game),
        "prizes": _winners(game),
        # The accumulated prizes in play: amounts and max balls before the first ball, then the awards.
        "programs": game_programs(game),
        "void_reason": game.void_reason,
    }


def current_game(room: Room) -> Game | None:
    """The room's game in play, else its most recent one (so a screen keeps the result up)."""
    games = Game.objects.filter(room=room).select_related("ball_set", "room")
    live = games.exclude(state__in=[GameState.CLOSED, GameState.VOID]).order_by("-pk").first()
    return live or games.order_by("-pk").first()


def screen_snapshot(room: Room) -> dict[str, Any]:
    """The bingo section of a hall screen's snapshot."""
    game = current_game(room)
    return {
        "room": room.name,
        "game": game_summary(game) if game else None,
        "programs": screen_programs(room),
    }


def caller_view(game: Game) -> dict[str, Any]:
    """Everything the caller console shows, including winning cards nobody has claimed."""
    claims = Claim.objects.filter(game=game).select_related("series").order_by("pk")
    return {
        **game_summary(game),
        "claims": [_claim(c) for c in claims],
        "unclaimed": unclaimed_winners(game),
    }


def _claim(c: Claim) -> dict[str, Any]:
    return {
        "id": c.pk,
        "kind": c.kind,
        "series": c.series.code,
        "serial": c.serial,
        "bound_ordinal": c.bound_ordinal,
        "valid": c.valid,
        "refusal": c.refusal,
        "reason": c.reason,
        "winning_row": c.winning_row,
        "completed_at": c.completed_at,
        "claimed_by": c.claimed_by.get_username(),
        "created_at": c.created_at,
    }


def game_recall(game: Game) -> dict[str, Any]:
    """The full record of a game: sales, prizes, balls in order with their times, claims and awards."""
    sales = SaleOperation.objects.filter(game=game).select_related("series", "cashier").order_by("pk")
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
        "claims": [_claim(c) for c in Claim.objects.filter(game=game).select_related("series", "claimed_by")],
    }
