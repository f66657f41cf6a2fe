"""The casino tables' figures for the gaming-tax returns (halls.tax.hooks): the table drop of the period's
venue-local days (jackpots.tables.services.drops), all the venue's tables as one game type."""

from __future__ import annotations

from datetime import date

from django.db.models import Sum
from django.utils.translation import gettext_lazy as _

from halls.models import Venue
from halls.tax.compute import Figures
from halls.tax.hooks import Source
from jackpots.tables.models import TableDrop

GAME_TYPES = {"tables": _("Casino tables")}


def figures(venue: Venue, first: date, last: date) -> list[Figures]:
    total = TableDrop.objects.filter(table__venue=venue, day__gte=first, day__lte=last).aggregate(
        total=Sum("amount")
    )["total"]
    return [] if total is None else [Figures("tables", drop=total)]


SOURCE = Source(name="tables", game_types=GAME_TYPES, figures=figures)
