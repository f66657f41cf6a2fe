"""The player terminal's touch page (EB-05.f): a static shell; everything it shows comes from the terminal API
(/api/electronic/terminal/..., authenticated by the terminal's device token) and its WebSocket.

The page reads the device id and token from its URL fragment (``#<device id>:<token>``, never sent to the
server, so no log holds it) and keeps them in the browser's localStorage. It speaks the hall's language
(settings.LANGUAGE_CODE) whatever the browser asks, as a hall screen speaks its venue's; ``?lang=`` names
another language of the system (a visitor's choice at the terminal).
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache

from halls.i18n import render_in_venue_language

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
