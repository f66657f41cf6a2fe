"""Languages: a public screen speaks its venue's language; staff pages and the API the person's."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import translation


def render_in_venue_language(
    request: HttpRequest, language: str, template: str, context: dict[str, Any]
) -> HttpResponse:
    """Render a public page in its venue's language, whatever the browser in front of it asks for."""
    with translation.override(language):
        response = render(request, template, context)
    response.headers["Content-Language"] = language  # LocaleMiddleware keeps a header already set
    return response
