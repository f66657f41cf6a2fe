"""The casino tables' changes behind four eyes (halls.foureyes): a table joining a pool, several forming a
carrusel together, a table leaving its pool. Registered by ``register_hooks``; each applier calls the
ordinary service (jackpots.tables.services.tables) with the approver as the actor.

Targets ``table:<id>`` (params: table, pool / table) and ``pool:<id>`` (params: pool, tables).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from halls.errors import Conflict, InvalidInput, NotFound
from halls.foureyes import Kind, param_id, register_kind
from halls.models import Proposal, Role, Venue
from jackpots.models import Pool
from jackpots.services.proposal_kinds import pool_of_venue
from jackpots.tables.models import CasinoTable
from jackpots.tables.services import tables as table_services

JOIN = "table.join_pool"
CARRUSEL = "table.form_carrusel"
LEAVE = "table.leave_pool"


def _table(venue: Venue, table_id: int) -> CasinoTable:
    table = CasinoTable.objects.filter(venue=venue, pk=table_id).first()
    if table is None:
        raise NotFound(
            _("No table %(table_id)s in this venue.") % {"table_id": table_id}, code="unknown_table"
        )
    return table


def _validate_join(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    table = _table(venue, param_id(params, "table"))
    pool = pool_of_venue(venue, param_id(params, "pool"))
    if table.pool_id == pool.pk:
        raise Conflict(_("%(table)s already plays for this pool.") % {"table": table}, code="already_in_pool")
    table_services.check_carrusel_change(pool, [table])
    return {"table": table.pk, "pool": pool.pk}


def _apply_join(proposal: Proposal, approver: User) -> dict[str, Any]:
    table = CasinoTable.objects.get(pk=proposal.params["table"])
    table_services.join_pool(table=table, pool=Pool.objects.get(pk=proposal.params["pool"]), actor=approver)
    return {"table": table.pk}


def _validate_carrusel(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    pool = pool_of_venue(venue, param_id(params, "pool"))
    named = params.get("tables")
    if not isinstance(named, list) or not named:
        raise InvalidInput(_("Name the tables that form the carrusel."), code="no_tables")
    ids = sorted({param_id({"table": t}, "table") for t in named})
    tables = [_table(venue, pk) for pk in ids]
    table_services.check_carrusel_change(pool, tables)
    return {"pool": pool.pk, "tables": [t.pk for t in tables]}


def _apply_carrusel(proposal: Proposal, approver: User) -> dict[str, Any]:
    tables = list(CasinoTable.objects.filter(pk__in=proposal.params["tables"]).order_by("pk"))
    pool = Pool.objects.get(pk=proposal.params["pool"])
    table_services.form_carrusel(pool=pool, tables=tables, actor=approver)
    return {"tables": [t.pk for t in tables]}


def _validate_leave(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    table = _table(venue, param_id(params, "table"))
    if table.pool is None:
        raise Conflict(_("%(table)s plays for no pool.") % {"table": table}, code="no_pool")
    table_services.check_carrusel_change(table.pool, [], leaving=table)
    return {"table": table.pk, "pool": table.pool_id}


def _apply_leave(proposal: Proposal, approver: User) -> dict[str, Any]:
    table = CasinoTable.objects.get(pk=proposal.params["table"])
    if table.pool_id != proposal.params["pool"]:
        raise Conflict(_("%(table)s no longer plays for that pool.") % {"table": table}, code="no_pool")
    table_services.leave_pool(table=table, actor=approver)
    return {"table": table.pk}


def register() -> None:
    operator = (Role.OPERATOR,)
    register_kind(Kind(JOIN, gettext_lazy("A table joins a pool"), operator, _validate_join, _apply_join))
    register_kind(
        Kind(CARRUSEL, gettext_lazy("Tables join a carrusel"), operator, _validate_carrusel, _apply_carrusel)
    )
    register_kind(
        Kind(LEAVE, gettext_lazy("A table leaves its pool"), operator, _validate_leave, _apply_leave)
    )
