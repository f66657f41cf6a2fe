"""The wide-area reconciliations page (issue 31): each reconciliation of a venue's meters recorded at this
installation, per wide-area pool, newest first, filterable by pool and venue; at the central the central's
records, at a venue its own (jackpots.widearea.services.reconciliations).

A thin door (DESIGN §3): login required; read by the operator and the inspector of the venues concerned
(the inspector's role: the operator holds it too), each reader seeing only their venues' reconciliations.
Only GET: nothing here writes."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from halls.models import Venue
from halls.staff_pages import staff_page, staff_venues
from jackpots.widearea.models import Side
from jackpots.widearea.services import reconciliations


@require_safe
@login_required
@never_cache
def reconciliations_page(request: HttpRequest) -> HttpResponse:
    venue_ids = reconciliations.reader_venue_ids(request.user)
    if not venue_ids:
        raise PermissionDenied(_("The reconciliations are for the venues' operators and inspectors."))
    side, pool, venue_id = reconciliations.filters(request.GET)
    found = reconciliations.listed(venue_ids=venue_ids, side=side, pool=pool, venue_id=venue_id)
    by_pool: dict[str, list[reconciliations.Listed]] = {}
    for item in found:
        by_pool.setdefault(item.row.pool_code, []).append(item)
    return staff_page(
        request,
        "widearea/reconciliations.html",
        staff_venues(request),
        side=side,
        sides=Side.choices,
        pool=pool,
        venue_id=venue_id,
        pools=reconciliations.pools_of(venue_ids, side),
        reader_venues=Venue.objects.filter(pk__in=venue_ids).order_by("name"),
        by_pool=sorted(by_pool.items()),
        listed=len(found),
        limit=reconciliations.LISTED,
    )
