"""The table-side meter page: one pool's meters, big and live, on a public display.

Reached like a hall screen, by the unguessable token of an active `halls.Screen` of the venue, plus the
pool: ``/screens/<token>/pools/<pool_id>/``. The token is what makes the page public but not open to
anyone (a screen is revoked by making it inactive), and the pool must be one the screen's venue shows:
its own or a network's it belongs to; anything else is 404. A display next to a table is therefore
registered as a Screen of its venue, and the page follows that screen's room stream, which carries the
venue's `pool.meter` and `pool.hit` events (jackpots.services.screen_events); the page keeps only its pool's.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache

from halls import events
from halls.i18n import render_in_venue_language
from halls.models import Screen
from jackpots.models import Pool
from jackpots.services.readmodels import screens


def _screen_and_pool(token: str, pool_id: int) -> tuple[Screen, Pool]:
    screen = Screen.objects.filter(token=token, active=True).select_related("room", "venue").first()
    if screen is None:
        raise Http404(_("No such screen."))
    pool = screens.visible_pool(screen.venue_id, pool_id)
    if pool is None:
        raise Http404(_("No such pool on this screen."))
    return screen, pool


def meter_page(request: HttpRequest, token: str, pool_id: int) -> HttpResponse:
    screen, pool = _screen_and_pool(token, pool_id)
    snapshot_url = reverse("jackpots:meter-snapshot", kwargs={"token": token, "pool_id": pool.pk})
    return render_in_venue_language(
        request,
        screen.venue.language,
        "jackpots/meter_page.html",
        {"screen": screen, "pool": pool, "token": token, "snapshot_url": snapshot_url},
    )


@never_cache
def meter_snapshot(request: HttpRequest, token: str, pool_id: int) -> JsonResponse:
    """The pool's meters and last hit, with the room stream's sequence number read first (halls.views)."""
    screen, pool = _screen_and_pool(token, pool_id)
    stream = screen.room.stream
    seq = events.current_seq(stream)
    with translation.override(screen.venue.language):
        meter = screens.meter_page_snapshot(pool)
    return JsonResponse(
        {
            "stream": stream,
            "seq": seq,
            "venue": screen.venue.name,
            "language": screen.venue.language,
            "currency": pool.currency,
            "screen": screen.name,
            "sections": {"meter": meter},
        }
    )
