"""Screen pages: a public display by token, and the snapshot it loads before applying WebSocket deltas."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.cache import cache_control, cache_page, never_cache
from django.views.decorators.http import require_safe
from django.views.i18n import JavaScriptCatalog
from rest_framework import exceptions

from halls import events, hooks, throttling
from halls.i18n import render_in_venue_language
from halls.models import Screen
from halls.services import anchor_key as anchor_keys
from halls.services import screen_snapshots


def _screen(request: HttpRequest, token: str) -> Screen:
    """The active screen of this token. An address that asked for too many unknown tokens is refused
    before the lookup (429); only unknown tokens count."""
    throttling.check_failures(request, "screen_failures")
    screen = Screen.objects.filter(token=token, active=True).select_related("room", "venue").first()
    if screen is None:
        throttling.count_failure(request, "screen_failures")
        raise Http404(_("No such screen."))
    return screen


def _throttled(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapper(request: HttpRequest, token: str) -> HttpResponse:
        try:
            return view(request, token)
        except exceptions.Throttled as exc:
            return throttling.too_many_response(request, getattr(exc, "wait", None))

    return wrapper


# A screen page that cannot show its room tries again this often (seconds): it hangs on a wall, so it must
# come back by itself once its address is put right (or the refusal's wait is over).
SCREEN_RETRY_SECONDS = 30


def _screen_unavailable(
    request: HttpRequest, token: str, *, status: int, wait: float | None = None
) -> HttpResponse:
    """The page a hall screen shows when its address shows no room: styled as the screen, in its venue's
    language when the token names a screen switched off (else the hall's default, Spanish), reloading itself
    every SCREEN_RETRY_SECONDS (longer when refused for too many attempts: the refusal's wait)."""
    known = Screen.objects.filter(token=token).select_related("venue").first()
    language = known.venue.language if known is not None else settings.LANGUAGE_CODE
    retry = max(SCREEN_RETRY_SECONDS, int(wait or 0) + 1)
    response = render_in_venue_language(
        request,
        language,
        "halls/screen_unavailable.html",
        {"retry_seconds": retry, "switched_off": known is not None, "throttled": status == 429},
    )
    response.status_code = status
    response["Retry-After"] = str(retry)
    return response


@never_cache
def screen_page(request: HttpRequest, token: str) -> HttpResponse:
    try:
        screen = _screen(request, token)
    except Http404:
        return _screen_unavailable(request, token, status=404)
    except exceptions.Throttled as exc:
        return _screen_unavailable(request, token, status=429, wait=getattr(exc, "wait", None))
    return render_in_venue_language(
        request,
        screen.venue.language,
        "halls/screen.html",
        {"screen": screen, "sections": hooks.screen_sections(), "token": token},
    )


@never_cache
@_throttled
def screen_snapshot(request: HttpRequest, token: str) -> HttpResponse:
    """State of every section plus the stream's sequence number, read first so no delta is missed: the
    room's part from the process's cache at or past the stream's cursor (halls.services.screen_snapshots),
    the screen's own fields around it."""
    screen = _screen(request, token)
    part = screen_snapshots.room_part(screen.room_id, events.current_seq(screen.room.stream))
    return HttpResponse(screen_snapshots.text(part, screen.pk, screen.name), content_type="application/json")


class JavaScriptCatalogue(JavaScriptCatalog):
    """The djangojs catalogue of the language named in the URL: a public screen speaks its venue's language,
    not its browser's. `django.get_format("LANGUAGE_CODE")` tells halls/format.js which one it is."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        language = kwargs.pop("language")
        if language not in dict(settings.LANGUAGES):
            raise Http404  # a language this system does not speak
        with translation.override(language):
            return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        context["formats"]["LANGUAGE_CODE"] = translation.get_language()
        return context


# Cached a day: the page asks for it with ?v=<catalogue version> (halls/templatetags/hall_js.py), so a new
# catalogue is a new URL for the browser and for this cache.
javascript_catalogue = cache_page(24 * 3600)(JavaScriptCatalogue.as_view())


@require_safe
@cache_control(public=True, max_age=300)
def anchor_public_key(request: HttpRequest) -> JsonResponse:
    """The installation's public anchor key (halls.anchor_lines.key_document): public, no login, so that
    anyone can verify the anchors with scripts/verify_anchors.py."""
    return JsonResponse(anchor_keys.document())
