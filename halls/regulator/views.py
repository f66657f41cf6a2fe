"""The authority's portal on the regulator's node: thin doors (DESIGN §3), each one read service (or one
write: clear an alarm, verify the anchors now) and a page.

Each page's changing part is a fragment of its own (``?fragment=1`` answers it alone): the page's script
(regulator/portal.js) reloads it when the node accepts a message (the portal's socket,
halls.regulator.consumers) and every few seconds besides, so nothing depends on an event arriving.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from halls.errors import DomainError
from halls.regulator.authority import authority_page
from halls.regulator.models import Installation
from halls.regulator.services import clear as alarm_services
from halls.regulator.services import portal, verify

# How often a page reloads its fragment without being told (seconds).
POLL_SECONDS = 10


def _page(request: HttpRequest, name: str, status: int = 200, **context: Any) -> HttpResponse:
    """The page `name` (regulator/<name>.html), or only its fragment (regulator/_<name>.html)."""
    open_alarms = portal.open_alarm_count()
    context = {
        "now": timezone.now(),
        "open_alarms": open_alarms,
        "poll_seconds": POLL_SECONDS,
        "section": name,
        **context,
    }
    template = f"regulator/_{name}.html" if request.GET.get("fragment") else f"regulator/{name}.html"
    response = render(request, template, context, status=status)
    response["X-Open-Alarms"] = str(open_alarms)  # the page's menu shows the count (regulator/portal.js)
    return response


@authority_page
def map_page(request: HttpRequest) -> HttpResponse:
    places = portal.installations()
    counts = {state: sum(1 for p in places if p.state == state) for state in ("live", "silent", "never")}
    return _page(
        request,
        "map",
        places=places,
        counts=counts,
        shapes=portal.map_shapes(),
        default_window=settings.HALL_REGULATOR_SILENCE_SECONDS,
    )


@authority_page
def live_page(request: HttpRequest) -> HttpResponse:
    uid = request.GET.get("installation", "")
    installation = get_object_or_404(Installation, uid=uid) if uid else None
    return _page(
        request,
        "live",
        live=portal.live(installation=installation),
        installation=installation,
        installations=Installation.objects.order_by("name"),
    )


@authority_page
def pools_page(request: HttpRequest) -> HttpResponse:
    return _page(request, "pools", pools=portal.pools())


@authority_page
def pool_page(request: HttpRequest, uid: str, pool: str) -> HttpResponse:
    installation = get_object_or_404(Installation, uid=uid)
    history = portal.pool_history(installation=installation, pool=pool)
    if history is None:
        raise Http404(_("This installation never reported that pool."))
    return _page(request, "pool", history=history)


@authority_page
@require_http_methods(["GET", "HEAD", "POST"])
def anchors_page(request: HttpRequest) -> HttpResponse:
    verdicts = None
    if request.method == "POST":
        chosen = request.POST.get("installation", "")
        installation_id = None
        if chosen:
            installation_id = get_object_or_404(Installation, uid=chosen).pk
        verdicts = verify.verify_now(installation_id=installation_id, actor=request.user.get_username())
    return _page(request, "anchors", heads=portal.chain_heads(), verdicts=verdicts)


@authority_page
def alarms_page(request: HttpRequest) -> HttpResponse:
    open_, cleared = portal.alarms()
    return _page(request, "alarms", alarms_open=open_, alarms_cleared=cleared)


@authority_page
@require_POST
def clear_alarm(request: HttpRequest, alarm_id: int) -> HttpResponse:
    try:
        alarm_services.clear_alarm(alarm_id=alarm_id, actor=request.user)  # type: ignore[arg-type]
    except DomainError as exc:
        open_, cleared = portal.alarms()
        return _page(
            request, "alarms", status=exc.status, alarms_open=open_, alarms_cleared=cleared, error=str(exc)
        )
    messages.success(request, _("Alarm %(id)s cleared.") % {"id": alarm_id})
    return redirect("regulator:alarms")


@authority_page
def refusals_page(request: HttpRequest) -> HttpResponse:
    return _page(request, "refusals", refusals=portal.refusals())


@authority_page
def taxes_page(request: HttpRequest) -> HttpResponse:
    return _page(request, "taxes", returns=portal.tax_returns())


@authority_page
def reconciliations_page(request: HttpRequest) -> HttpResponse:
    side, pool, venue = portal.reconciliation_filters(request.GET)
    found = portal.reconciliations(side=side, pool=pool, venue=venue)
    by_pool: dict[str, list[portal.Reconciliation]] = {}
    for item in found:
        by_pool.setdefault(item.pool, []).append(item)
    pools, venues = portal.reconciliation_choices()
    return _page(
        request,
        "reconciliations",
        side=side,
        sides=list(portal.SIDES.items()),
        pool=pool,
        venue=venue,
        pools=pools,
        venues=venues,
        by_pool=sorted(by_pool.items()),
        listed=len(found),
        limit=portal.RECONCILIATIONS_SHOWN,
    )
