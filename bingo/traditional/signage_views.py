"""The public page of a prize program's terms: what the QR code of a posted prize table opens (no login).

Keyed by the digest printed on the sheet: it shows the terms with that digest (the program versions that
put them in force, else the proposal still waiting for its second person), their canonical text and the
digest recomputed from it, so anyone can check the sheet on the wall. ?format=json answers the terms.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache

from bingo.traditional.programs import terms as program_terms
from bingo.traditional.programs.regulation import ProgramType
from bingo.traditional.programs.rules import PROGRAM_TYPES
from bingo.traditional.services.programs import signage
from bingo.traditional.signage import shown_params


@never_cache
def program_terms_page(request: HttpRequest, digest: str) -> HttpResponse:
    """Public (no login): the terms whose digest the posted prize table prints."""
    value = program_terms.typed(digest)
    found = signage.terms_by_digest(value) if value else None
    if found is None:
        message = _("No prize program has these terms.")
        if request.GET.get("format") == "json":
            return JsonResponse({"error": {"code": "unknown_terms", "message": message}}, status=404)
        raise Http404(message)
    data: dict[str, Any] = {
        "digest": found.digest,
        "terms": found.terms,
        "status": found.status,
        "versions": found.versions,
    }
    if request.GET.get("format") == "json":
        return JsonResponse(data)
    info = PROGRAM_TYPES[ProgramType(found.terms["program_type"])]
    params = shown_params(found.terms["params"], found.currency)
    return render(
        request,
        "bingo/program_terms.html",
        {
            **data,
            "info": info,
            "params": params,
            "venue": found.venue,
            "room": found.room,
            "canonical": program_terms.canonical(found.terms).decode(),
            "recomputed": program_terms.digest(found.terms),
            "grouped": program_terms.grouped(found.digest),
            "short": program_terms.short(found.digest),
        },
    )
