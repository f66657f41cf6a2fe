"""What a terminal is shown of its player card and of its speciality's rules: the card's balance and its
cards in play (with what each still lacks), and the rules summary (the layout, the prize table with its
figures and R-16 information).

Shared by the terminal's messages (services.messages answers an inserted card with ``card_view``) and the
terminal page's read model (services.readmodels.terminal_snapshot carries both), so the read model need not
import the messages (which answer `snapshot` with it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bingo.electronic.layouts import Layout, cells_of
from bingo.electronic.models import (
    EBall,
    ECard,
    EGameState,
    ElectronicGame,
    EWin,
    SpecialityVersion,
    Terminal,
)
from bingo.electronic.prizetable import POOL_TYPES, PrizeSpec, Rules
from bingo.electronic.services.steps import rules_of
from halls import money
from halls.cashier.models import PlayerCard
from halls.cashier.services import player_cards


def _missing(
    layout: Layout, patterns: Mapping[str, tuple[int, ...]], cells: list[int], marked: set[int]
) -> dict[str, int]:
    """Per pattern key, how many cells the card still lacks for its closest mask ("falta N")."""
    hit = 0
    for position, value in enumerate(cells):
        if value == 0 or value in marked:
            hit |= 1 << position
    return {key: min(bin(mask & ~hit).count("1") for mask in masks) for key, masks in patterns.items()}


def _in_play(terminal: Terminal, card: PlayerCard) -> list[dict[str, Any]]:
    """The card's cards in the speciality's selling and drawing games (bought at any of its terminals), with
    what each still lacks and what it has won in a drawing game; a game it has no cards in is left out."""
    games = list(
        ElectronicGame.objects.filter(
            speciality_id=terminal.speciality_id, state__in=(EGameState.SELLING, EGameState.DRAWING)
        )
        .select_related("version")
        .order_by("number")
    )
    out = []
    for game in games:
        rows = list(
            ECard.objects.filter(game=game, purchase__player_card=card)
            .order_by("purchase_id", "position")
            .values_list("pk", "purchase_id", "cells")
        )
        if not rows:
            continue
        rules = rules_of(game.version)
        patterns = rules.patterns()
        marked = set(EBall.objects.filter(game=game).values_list("number", flat=True))
        won: dict[int, list[dict[str, Any]]] = {}
        if game.state == EGameState.DRAWING:
            for win in EWin.objects.filter(prize__game=game, purchase__player_card=card).select_related(
                "prize"
            ):
                won.setdefault(win.card_id, []).append(
                    {"code": win.prize.code, "name": win.prize.name, "amount": money.text(win.amount)}
                )
        shown = []
        for pk, purchase_id, cells in rows:
            values = list(bytes(cells))
            shown.append(
                {
                    "card": pk,
                    "purchase": purchase_id,
                    "cells": values,
                    "missing": _missing(rules.layout, patterns, values, marked),
                    "won": won.get(pk, []),
                }
            )
        out.append({"game": game.pk, "number": game.number, "state": game.state, "cards": shown})
    return out


def card_view(card: PlayerCard, terminal: Terminal) -> dict[str, Any]:
    return {
        "number": card.number,
        "balance": money.text(player_cards.balance(card)),
        "games": _in_play(terminal, card),
    }


def _prize_rule(spec: PrizeSpec, layout: Layout) -> dict[str, Any]:
    return {
        "code": spec.code,
        "name": spec.name,
        "type": str(spec.type),
        "pattern": spec.pattern,
        "figure": [list(cells_of(mask)) for mask in layout.pattern(spec.pattern)] if spec.figure else [],
        "percent": money.text(spec.percent),
        "fixed": money.text(spec.fixed),
        "accumulated": spec.type in POOL_TYPES,
        "network": spec.network,
        "max_ball": spec.max_ball,
        "max_ball_by_sales": [
            {"from_sales": money.text(s.from_sales), "max_ball": s.max_ball} for s in spec.max_ball_by_sales
        ],
        "info": spec.info,  # what players must be told of it
    }


def rules_summary(rules: Rules, version: SpecialityVersion) -> dict[str, Any]:
    layout = rules.layout
    return {
        "version": version.number,
        "family": str(rules.family),
        "layout": {
            "code": layout.code,
            "rows": layout.rows,
            "columns": layout.columns,
            "max_number": layout.max_number,
            "free": list(cells_of(layout.free)),
            "lines": [list(cells_of(mask)) for mask in layout.lines],
        },
        "card_price": money.text(rules.card_price),
        "purchase_sizes": list(rules.purchase_sizes),
        "max_cards": rules.max_cards,
        "extractions": rules.extractions,
        "extra_balls": rules.extra_balls,
        "pace_seconds": money.text(rules.pace_seconds),
        "sale_seconds": rules.sale_seconds,
        "prizes": [_prize_rule(p, layout) for p in rules.prizes],
    }
