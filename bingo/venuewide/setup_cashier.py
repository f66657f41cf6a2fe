"""The tickets part of the setup page (/setup/, bingo.venuewide.setup_views): each venue's ticket validity,
its maximum ticket value and the amount above which a ticket is paid only at the cage (a blank figure: the
jurisdiction's default, shown beside it). One action, one service: halls.cashier.services.cashier_settings
(audited); a refusal is shown above the page by bingo.venuewide.setup_views.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.http import HttpRequest
from django.utils.translation import gettext as _

from bingo.venuewide import setup_fields as fields
from halls.cashier.models import CashierSettings
from halls.cashier.services import cashier_settings
from halls.cashier.services.tickets import DEFAULT_VALID_DAYS
from halls.cashier.ticketrules import TicketLimits, resolve
from halls.models import Venue


@dataclass(frozen=True)
class VenueTickets:
    venue: Venue
    valid_days: int
    own_maximum: Decimal | None  # None: the jurisdiction's default
    own_cage_above: Decimal | None
    defaults: TicketLimits
    in_force: TicketLimits


def context(venues: list[Venue]) -> dict[str, Any]:
    rows = {s.venue_id: s for s in CashierSettings.objects.filter(venue_id__in=[v.pk for v in venues])}
    tickets = []
    for venue in venues:
        row = rows.get(venue.pk)
        defaults = cashier_settings.default_limits(venue.jurisdiction)
        own_max = row.ticket_max_amount if row else None
        own_cage = row.ticket_cage_above if row else None
        tickets.append(
            VenueTickets(
                venue=venue,
                valid_days=row.ticket_valid_days if row else DEFAULT_VALID_DAYS,
                own_maximum=own_max,
                own_cage_above=own_cage,
                defaults=defaults,
                in_force=resolve(own_max, own_cage, defaults.maximum, defaults.cage_above),
            )
        )
    return {"venue_tickets": tickets}


def _figure(request: HttpRequest, name: str, label: str) -> Decimal | None:
    """A typed amount, or None when left blank (the jurisdiction's default)."""
    return fields.amount(request, name, label) if fields.text(request, name) else None


def _ticket_settings(request: HttpRequest, venues: list[Venue]) -> None:
    cashier_settings.change_cashier_settings(
        venue_id=fields.venue(request, venues).pk,
        actor=fields.user(request),
        ticket_valid_days=fields.whole(request, "ticket_valid_days", _("Validity (days)")),
        ticket_max_amount=_figure(request, "ticket_max_amount", _("Maximum ticket value")),
        ticket_cage_above=_figure(request, "ticket_cage_above", _("Paid only at the cage above")),
    )


ACTIONS: dict[str, Callable[[HttpRequest, list[Venue]], None]] = {"ticket_settings": _ticket_settings}
