"""The door's reception page (issue 27): `/admission/`, for the door staff and the operator (the inspector
reads it, with the visits and refusals of each of the last days). A thin door: the page's script does every
admission, exit and self-exclusion through the REST API (halls.door.api) and polls the live count of who is
inside and the door's last decisions."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import ensure_csrf_cookie

from halls import access
from halls.door.documents import Kind
from halls.door.services import admission
from halls.models import Role
from halls.services import venueclock
from halls.staff_pages import staff_page, staff_venues

# The kinds the door's form offers, in the order a Spanish door meets them.
KINDS = (
    (Kind.DNI, gettext_lazy("DNI")),
    (Kind.NIE, gettext_lazy("NIE")),
    (Kind.PASSPORT, gettext_lazy("Passport")),
    (Kind.ID_CARD, gettext_lazy("EU identity card")),
)
# How many days the visits-per-day table shows (today included), newest first.
DAYS_SHOWN = 14
# How often the page asks for the live count and the last decisions (milliseconds).
POLL_MS = 3000


@login_required
@ensure_csrf_cookie
@never_cache
def admission_page(request: HttpRequest) -> HttpResponse:
    venues = staff_venues(request)
    doors = [v for v in venues if v.can_admit]
    if not doors:
        raise PermissionDenied(gettext("The admission page is for the door staff and the operator."))
    wanted = request.GET.get("venue", "")
    chosen = next((v for v in doors if str(v.venue.pk) == wanted), doors[0])
    venue = chosen.venue
    kinds = [(kind.value, str(label)) for kind, label in KINDS]
    today = venueclock.today(venue)
    per_day = admission.visits_per_day(venue, today - timedelta(days=DAYS_SHOWN - 1), today)
    return staff_page(
        request,
        "door/admission.html",
        venues,
        door_venue=venue,
        door_venues=doors,
        can_write=access.may_write(request.user, venue.pk, Role.DOOR),
        kinds=kinds,
        today=today,
        per_day=list(reversed(per_day)),
        poll_ms=POLL_MS,
    )
