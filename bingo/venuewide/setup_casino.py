"""The casino part of the setup page (/setup/, bingo.venuewide.setup_views): tables, closed for a while and
opened
again, and the carrusels they play into: created over chosen tables, their members and meter, a table
added or taken out where the rules allow (spec §6.2, §6.5, §6.12, §6.15).

Each action calls ONE service of jackpots.tables; a refusal (the carrusel of all the póquer sin descarte
tables naming the missing ones, a hand open...) is shown above the page by bingo.venuewide.setup_views.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest
from django.utils.translation import gettext as _

from bingo.venuewide import setup_fields as fields
from halls.errors import InvalidInput
from halls.models import Venue
from halls.services import proposals
from jackpots.models import Pool
from jackpots.rulepacks import PACKS, packs_for
from jackpots.services.readmodels.meters import pool_meters
from jackpots.tables.models import CasinoTable, TableGame, TableState
from jackpots.tables.services import proposal_kinds
from jackpots.tables.services import tables as table_services


def context(venues: list[Venue]) -> dict[str, Any]:
    """The tables of the operator's venues, and each carrusel with its meter, members and the tables that
    may join it (same venue and rule pack, in no pool)."""
    ids = [v.pk for v in venues]
    tables = list(
        CasinoTable.objects.filter(venue_id__in=ids)
        .select_related("venue", "pool")
        .order_by("venue_id", "number")
    )
    for table in tables:  # the rule pack by its title, as the form's list names it (its code is data)
        pack = PACKS.get(table.rule_pack)
        table.rule_pack_title = pack.title if pack else table.rule_pack  # type: ignore[attr-defined]
    pools = list(Pool.objects.filter(venue_id__in=ids, active=True).exclude(rule_pack="").order_by("code"))
    meters = pool_meters(p.pk for p in pools)
    carrusels = []
    for pool in pools:
        meter = meters.get(pool.pk)
        pack = PACKS.get(pool.rule_pack)
        carrusels.append(
            {
                "pool": pool,
                "title": pack.title if pack else pool.rule_pack,
                "all_tables": bool(pack and pack.all_tables),
                "amount": meter.levels[0].amount if meter and meter.levels else None,
                "members": [t for t in tables if t.pool_id == pool.pk],
                "free": [
                    t
                    for t in tables
                    if t.pool_id is None and t.venue_id == pool.venue_id and t.rule_pack == pool.rule_pack
                ],
            }
        )
    return {
        "tables": tables,
        "table_games": TableGame.choices,
        "rule_packs": sorted({(p.code, p.title) for v in venues for p in packs_for(v.jurisdiction)}),
        "carrusels": carrusels,
        "free_tables": [t for t in tables if t.pool_id is None],
        # Tables joining or leaving a carrusel wait for a second operator (four eyes, /proposals/).
        "carrusel_proposals": [
            p for p in proposals.pending(ids) if p.kind in (proposal_kinds.CARRUSEL, proposal_kinds.LEAVE)
        ],
    }


def _tables(request: HttpRequest, venues: list[Venue]) -> list[CasinoTable]:
    ids = [int(v) for v in request.POST.getlist("tables") if v.isdigit()]
    return list(CasinoTable.objects.filter(pk__in=ids, venue_id__in=[v.pk for v in venues]))


def _table(request: HttpRequest, venues: list[Venue]) -> CasinoTable:
    return fields.one(venues, request, CasinoTable, "table", _("table"), "venue_id")  # type: ignore[no-any-return]


def _pool(request: HttpRequest, venues: list[Venue]) -> Pool:
    return fields.one(venues, request, Pool, "pool", _("carrusel"), "venue_id")  # type: ignore[no-any-return]


# --- actions (one service each) -------------------------------------------------------------------------


def _table_create(request: HttpRequest, venues: list[Venue]) -> None:
    table_services.create_table(
        venue=fields.venue(request, venues),
        number=fields.whole(request, "number", _("The table number")),
        name=fields.text(request, "name"),
        game=fields.text(request, "game"),
        table_minimum=fields.amount(request, "table_minimum", _("The table minimum")),
        rule_pack=fields.text(request, "rule_pack"),
        actor=fields.user(request),
    )


def _table_state(request: HttpRequest, venues: list[Venue]) -> None:
    """Close the table for a while (with the reason) or open it again."""
    table_services.set_table_state(
        table=_table(request, venues),
        state=fields.text(request, "state") or TableState.CLOSED,
        reason=fields.text(request, "reason"),
        actor=fields.user(request),
    )


def _carrusel_create(request: HttpRequest, venues: list[Venue]) -> None:
    bet = fields.text(request, "carousel_bet")
    table_services.create_carrusel(
        venue=fields.venue(request, venues),
        name=fields.text(request, "name"),
        code=fields.text(request, "code"),
        rule_pack=fields.text(request, "rule_pack"),
        authorisation_ref=fields.text(request, "authorisation_ref"),
        seed=fields.amount(request, "seed", _("The initial amount")),
        contribution_rate=fields.rate(request, "contribution_percent", _("The contribution")),
        carousel_bet=fields.amount(request, "carousel_bet", _("The carrusel bet")) if bet else None,
        tables=_tables(request, venues),
        actor=fields.user(request),
    )


def _carrusel_add(request: HttpRequest, venues: list[Venue]) -> None:
    """Proposed (four eyes): the tables join once a second operator approves on /proposals/."""
    pool = _pool(request, venues)
    chosen = _tables(request, venues)
    if not chosen:
        raise InvalidInput(_("Name the tables that form the carrusel."), code="no_tables")
    proposals.propose(
        venue=chosen[0].venue,
        kind=proposal_kinds.CARRUSEL,
        target=f"pool:{pool.pk}",
        params={"pool": pool.pk, "tables": [t.pk for t in chosen]},
        actor=fields.user(request),
    )


def _carrusel_remove(request: HttpRequest, venues: list[Venue]) -> None:
    """Proposed (four eyes): the table leaves once a second operator approves on /proposals/."""
    table = _table(request, venues)
    proposals.propose(
        venue=table.venue,
        kind=proposal_kinds.LEAVE,
        target=f"table:{table.pk}",
        params={"table": table.pk},
        actor=fields.user(request),
    )


ACTIONS: dict[str, Callable[[HttpRequest, list[Venue]], None]] = {
    "table_create": _table_create,
    "table_state": _table_state,
    "carrusel_create": _carrusel_create,
    "carrusel_add": _carrusel_add,
    "carrusel_remove": _carrusel_remove,
}
