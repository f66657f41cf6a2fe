"""The public page of a verifiable draw (no login): /draws/<room>/<game>/ and its sales file."""

from __future__ import annotations

import json

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from bingo.draws import publish


@require_safe
@never_cache
def draw_page(request: HttpRequest, room: str, game_ref: str) -> HttpResponse:
    found = publish.page(room, game_ref)
    if found is None:
        raise Http404(_("No verifiable draw for this game."))
    return render(request, "draws/draw.html", {"p": found, "r": found.record})


@require_safe
@never_cache
def draw_sales(request: HttpRequest, room: str, game_ref: str) -> HttpResponse:
    """The game's final sales in the verifier's JSON (bingo-sales/v1), once its sales are closed."""
    data = publish.sales_json(room, game_ref)
    if data is None:
        raise Http404(_("The sales of this game are not closed."))
    response = HttpResponse(json.dumps(data, separators=(",", ":")), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{publish.sales_file_name(room, game_ref)}"'
    return response
