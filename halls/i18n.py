"""Languages: a public screen speaks its venue's language; staff pages and the API the person's."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import translation

from halls import money


def render_in_venue_language(
    request: HttpRequest, language: str, template: str, context: dict[str, Any]
) -> HttpResponse:
    """Render a public page in its venue's language, whatever the browser in front of it asks for."""
    with translation.override(language):
        response = render(request, template, context)
    response.headers["Content-Language"] = language  # LocaleMiddleware keeps a header already set
    return response


def amount(value: Decimal | None, currency: str = "EUR", *, missing: str = "—", exact: bool = False) -> str:
    """An amount in the active language (halls.money.for_person: "1.234,56 €" / "€1,234.56"): the one
    formatter of the server's pages, slips and PDFs; `missing` for None; `exact`: a residue kept beyond
    the cent, shown whole ("0,002 €")."""
    if value is None:
        return missing
    language = translation.get_language() or settings.LANGUAGE_CODE
    return money.for_person(value, language, currency, exact=exact)
