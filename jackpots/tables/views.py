"""Staff pages of the casino tables: the table list and the croupier's console.

Thin doors (DESIGN §3): login required, read-only queries for what the page lists, then render. Every
command and every live figure goes through the REST API from the page's script (fetch with the CSRF
token), so the pages hold no business rule. Who may run a console: the caller or operator role of the
table's venue (there is no croupier role; see jackpots.tables.api).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from halls import access, errors
from jackpots.tables.api import CROUPIER
from jackpots.tables.models import CasinoTable


@login_required
@ensure_csrf_cookie
def table_index(request: HttpRequest) -> HttpResponse:
    venue_ids = access.venue_ids_with(request.user, CROUPIER)  # one query, however many venues
    tables = (
        CasinoTable.objects.filter(venue_id__in=venue_ids)
        .select_related("venue", "pool")
        .order_by("venue__name", "number")
    )
    return render(request, "tables/index.html", {"tables": tables})


@login_required
@ensure_csrf_cookie
def console(request: HttpRequest, table_id: int) -> HttpResponse:
    try:
        table = access.get_for_user(
            CasinoTable.objects.select_related("venue", "pool"),
            request.user,
            CROUPIER,
            label="table",
            pk=table_id,
        )
    except errors.NotFound as exc:
        raise Http404(exc.message) from exc
    except errors.PermissionDenied as exc:
        raise PermissionDenied(exc.message) from exc
    return render(request, "tables/console.html", {"table": table})
