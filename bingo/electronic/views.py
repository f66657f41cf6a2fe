"""The player terminal's touch page (EB-05.f), and the operator's watch over a speciality's screens and
terminals (issue 28).

The terminal page (EB-05.f): a static shell; everything it shows comes from the terminal API
(/api/electronic/terminal/..., authenticated by the terminal's device token) and its WebSocket.

The page reads the device id and token from its URL fragment (``#<device id>:<token>``, never sent to the
server, so no log holds it) and keeps them in the browser's localStorage. It speaks the hall's language
(settings.LANGUAGE_CODE) whatever the browser asks, as a hall screen speaks its venue's; ``?lang=`` names
another language of the system (a visitor's choice at the terminal).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import ensure_csrf_cookie

from bingo.electronic.models import Speciality
from halls import access, errors
from halls.i18n import render_in_venue_language
from halls.models import Role
from halls.staff_pages import staff_page, staff_venues

# The terminal page's software version (settings.ELECTRONIC_TERMINAL_SOFTWARE names another).
SOFTWARE_VERSION = "TERMINAL-WEB-1.0"


@never_cache
def terminal_page(request: HttpRequest) -> HttpResponse:
    asked = request.GET.get("lang", "")
    language = asked if asked in dict(settings.LANGUAGES) else settings.LANGUAGE_CODE
    context = {"language": language, "software_version": software_version()}
    return render_in_venue_language(request, language, "electronic/terminal.html", context)


def software_version() -> str:
    """The version this page reports in its hello (the verification compares it with the approved ones)."""
    return str(getattr(settings, "ELECTRONIC_TERMINAL_SOFTWARE", SOFTWARE_VERSION))


@login_required
@ensure_csrf_cookie
def watch_page(request: HttpRequest, speciality_id: int) -> HttpResponse:
    """The operator's watch: has every hall screen and terminal shown the current ball? (a static shell; the
    page polls /api/electronic/specialities/<id>/screens/)."""
    try:
        speciality = access.get_for_user(
            Speciality.objects.select_related("room", "venue"),
            request.user,
            Role.OPERATOR,
            label="speciality",
            pk=speciality_id,
        )
    except errors.NotFound as exc:
        raise Http404(exc.message) from exc
    except errors.PermissionDenied as exc:
        raise PermissionDenied(exc.message) from exc
    return staff_page(request, "electronic/watch.html", staff_venues(request), speciality=speciality)
