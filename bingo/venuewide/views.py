"""Staff pages that span bingo's wings: the home page and the till (the cashier's panels of halls.cashier
composed with traditional bingo's range sales). Thin doors (DESIGN §3): every command and live figure goes
through the REST API from the page's script."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.csrf import ensure_csrf_cookie

from halls.staff_pages import staff_page, staff_venues


@login_required
@ensure_csrf_cookie
def home(request: HttpRequest) -> HttpResponse:
    if getattr(settings, "HALL_ROLE", "venue") == "regulator":
        return redirect("regulator:map")  # the gaming authority's node: its portal is its home
    # At the central, its operators also find the network's pages
    # (bingo.network.interconnected.views_central).
    is_central = getattr(settings, "HALL_ROLE", "venue") == "central"
    return staff_page(request, "bingo/home.html", staff_venues(request), is_central=is_central)


@login_required
@ensure_csrf_cookie
def cashier(request: HttpRequest) -> HttpResponse:
    venues = [v for v in staff_venues(request) if v.can_sell]
    rooms = [
        {
            "id": room.pk,
            "name": room.name,
            "venue": v.venue.pk,
            "venue_name": v.venue.name,
            "currency": v.venue.currency,
        }
        for v in venues
        for room in v.rooms
    ]
    # The till's panels (shift, cards, tickets, prizes) are halls.cashier's templates and scripts, composed
    # here with bingo's range sales; every figure and operation goes through /api/cashier/ and the bingo API.
    till_venues = [{"id": v.venue.pk, "name": v.venue.name, "currency": v.venue.currency} for v in venues]
    return staff_page(request, "bingo/cashier.html", venues, cashier_rooms=rooms, till_venues=till_venues)
