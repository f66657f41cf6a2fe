"""The scripts every page loads before its own: the djangojs catalogue of the page's language (gettext,
ngettext, interpolate) and halls/format.js (numbers and money in that language).

    {% load hall_js %}{% hall_js %}                     staff pages: the request's language
    {% load hall_js %}{% hall_js venue=screen.venue %}  public screens: their venue's language
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

from django import template
from django.conf import settings
from django.templatetags.static import static
from django.urls import reverse
from django.utils import translation
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()

SCREEN_LANGUAGE = "es"  # a venue without a language of its own: the screens were Spanish before there was one


@functools.cache
def catalogue_version() -> str:
    """A digest of the compiled djangojs catalogues: a new catalogue is a new URL (no stale browser cache)."""
    digest = hashlib.sha256()
    for directory in settings.LOCALE_PATHS:
        for compiled in sorted(Path(directory).glob("*/LC_MESSAGES/djangojs.mo")):
            digest.update(compiled.read_bytes())
    return digest.hexdigest()[:12]


def page_language(venue: Any = None) -> str:
    """A screen's venue's language, else the request's (LocaleMiddleware), as a code of LANGUAGES."""
    if venue is not None:
        wanted = getattr(venue, "language", "") or SCREEN_LANGUAGE
    else:
        wanted = translation.get_language()
    try:
        return translation.get_supported_language_variant(wanted or settings.LANGUAGE_CODE)
    except LookupError:
        return settings.LANGUAGE_CODE


@register.simple_tag
def hall_js(venue: Any = None) -> SafeString:
    catalogue = reverse("halls:javascript-catalogue", kwargs={"language": page_language(venue)})
    return format_html(
        '<script src="{}?v={}"></script>\n<script src="{}"></script>',
        catalogue,
        catalogue_version(),
        static("halls/format.js"),
    )
