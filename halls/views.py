"""Screen pages: a public display by token, and the snapshot it loads before applying WebSocket deltas."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from halls import events, hooks
from halls.models import Screen


def _screen(token: str) -> Screen:
    screen = Screen.objects.filter(token=token, active=True).select_related("room", "venue").first()
    if screen is None:
        raise Http404("No such screen.")
    return screen


def screen_page(request: HttpRequest, token: str) -> HttpResponse:
    screen = _screen(token)
    return render(
        request,
        "halls/screen.html",
        {"screen": screen, "sections": hooks.screen_sections(), "token": token},
    )


@never_cache
def screen_snapshot(request: HttpRequest, token: str) -> JsonResponse:
    """State of every section plus the stream's sequence number, read first so no delta is missed."""
    screen = _screen(token)
    stream = screen.room.stream
    seq = events.current_seq(stream)
    sections = {section.name: section.snapshot(screen.room) for section in hooks.screen_sections()}
    return JsonResponse(
        {
            "stream": stream,
            "seq": seq,
            "venue": screen.venue.name,
            "currency": screen.venue.currency,
            "screen": screen.name,
            "sections": sections,
        }
    )
