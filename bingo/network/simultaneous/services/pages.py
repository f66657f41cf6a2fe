"""What a member hall's page of a simultaneous game shows (read-only): its allocated run of the network
series, what it sold and took back, the central's count for it and the network's figures once the sales
closed, the central's balls as the hall has them, its claims with their verdicts and the prizes the
central decided for them."""

from __future__ import annotations

from collections.abc import Collection
from decimal import Decimal
from typing import Any

from django.urls import reverse
from django.utils.translation import gettext as _

from bingo.network.simultaneous.models import HallAward, HallGame, HallGameState, PrizeKind
from bingo.network.simultaneous.services import venue
from bingo.traditional.models import Claim, SaleKind, SaleOperation
from bingo.traditional.services.claims import card_label


def hall_game_view(hall_game: HallGame) -> dict[str, Any]:
    operations = (
        list(SaleOperation.objects.filter(game_id=hall_game.game_id).order_by("created_at", "pk"))
        if hall_game.game_id
        else []
    )
    sold = sum(o.cards for o in operations if o.kind == SaleKind.SELL)
    back = sum(o.cards for o in operations if o.kind == SaleKind.RETURN)
    amount = sum((o.amount for o in operations if o.kind == SaleKind.SELL), Decimal(0)) - sum(
        (o.amount for o in operations if o.kind == SaleKind.RETURN), Decimal(0)
    )
    awards: dict[int, list[HallAward]] = {}
    for award in HallAward.objects.filter(hall_game=hall_game).order_by("pk"):
        awards.setdefault(award.claim_id, []).append(award)
    claims = (
        list(Claim.objects.filter(game_id=hall_game.game_id).select_related("series").order_by("pk"))
        if hall_game.game_id
        else []
    )
    # The central's figures as Decimals (the page formats them in the venue's way), counts as they are.
    figures = {
        k: Decimal(str(v)) if k.endswith(("_prize", "_amount", "_total")) else v
        for k, v in (hall_game.announcement or {}).items()
        if k != "draw"
    }
    drawn = set(hall_game.balls)
    last = hall_game.balls[-1] if hall_game.balls else None
    return {
        "hall_game": hall_game,
        "state_label": HallGameState(hall_game.state).label,
        "run": {
            "first": hall_game.first_serial,
            "last": hall_game.last_serial,
            "cards": hall_game.last_serial - hall_game.first_serial + 1,
        },
        "operations": [
            {
                "at": o.created_at,
                "kind": o.kind,
                "kind_label": _("Sale") if o.kind == SaleKind.SELL else _("Return"),
                "first": o.first_serial,
                "last": o.last_serial,
                "cards": o.cards,
                "amount": o.amount,
            }
            for o in operations
        ],
        "sold": {"cards": sold - back, "amount": amount},
        "closed": "cards_sold" in figures,
        "figures": figures,
        "unconfirmed": venue.unconfirmed_serials(hall_game)
        if hall_game.state == HallGameState.RECONCILING
        else [],
        "balls": list(hall_game.balls),
        "draw": (hall_game.announcement or {}).get("draw"),  # the central's commitment, digest, seed, check
        "board": [{"n": n, "on": n in drawn, "last": n == last} for n in range(1, 91)],
        "last_ball": last,
        "claims": [
            {
                "at": c.created_at,
                "kind": c.get_kind_display(),
                "card": card_label(c.series.code, c.serial),
                "ordinal": c.bound_ordinal,
                "valid": c.valid,
                "reason": c.reason,
                "awards": [
                    {"kind": a.kind, "label": PrizeKind(a.kind).label, "amount": a.amount}
                    for a in awards.get(c.pk, [])
                ],
            }
            for c in claims
        ],
        "live": hall_game.state != HallGameState.CLOSED,
    }


def console_links(room_ids: Collection[int]) -> dict[int, list[tuple[str, str]]]:
    """The rooms' network games not closed yet (bingo's console shows a link to each one's hall page)."""
    found: dict[int, list[tuple[str, str]]] = {}
    rows = HallGame.objects.filter(game__room_id__in=room_ids).exclude(state=HallGameState.CLOSED)
    for hall_game in rows.select_related("game").order_by("pk"):
        assert hall_game.game is not None
        label = _("Network game %(code)s") % {"code": hall_game.code}
        url = reverse("bingo_simultaneous:hall-game", args=[hall_game.pk])
        found.setdefault(hall_game.game.room_id, []).append((label, url))
    return found
