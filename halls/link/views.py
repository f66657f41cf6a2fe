"""The central's network page ("Red"): every member venue with its link's state, last contact, backlog and
the sequence applied. A thin door (DESIGN §3): login, the role check, one read service, render; the page
reloads itself every few seconds (a meta refresh: no script needed for a table).

Only at the central (HALL_ROLE=central: 404 at a venue), for the central's operators (an operator role in
any of its venues, or a superuser).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext

from halls import access
from halls.link.services import presence
from halls.models import Role

REFRESH_SECONDS = 5


@login_required
def network(request: HttpRequest) -> HttpResponse:
    if settings.HALL_ROLE != "central":
        raise Http404(gettext("The network page is the central's."))
    user = request.user
    if not any(Role.OPERATOR in held for _, held in access.roles_in_each(user)):  # one query
        raise PermissionDenied(gettext("The network page needs the operator role."))
    venues = presence.network_map()
    counts = {state: sum(1 for v in venues if v.state == state) for state in ("online", "offline", "never")}
    return render(
        request,
        "link/network.html",
        {
            "venues": venues,
            "counts": counts,
            "total": len(venues),
            "backlog": sum(v.backlog for v in venues),
            "now": timezone.now(),
            "refresh_seconds": REFRESH_SECONDS,
            "offline_seconds": int(settings.HALL_LINK_OFFLINE_SECONDS),
        },
    )
