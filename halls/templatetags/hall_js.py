"""The scripts every page loads before its own: the djangojs catalogue of the page's language (gettext,
ngettext, interpolate) and halls/format.js (numbers and money in that language).

    {% load hall_js %}{% hall_js %}

The page's language is the active one: the request's on staff pages (LocaleMiddleware), the venue's on
public screens (rendered in it: halls.i18n.render_in_venue_language).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from django import template
from django.conf import settings
from django.templatetags.static import static
from django.urls import reverse
from django.utils import translation
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()


@functools.cache
def catalogue_version() -> str:
    """A digest of the compiled djangojs catalogues: a new catalogue is a new URL (no stale browser cache)."""
    digest = hashlib.sha256()
    for directory in settings.LOCALE_PATHS:
        for compiled in sorted(Path(directory).glob("*/LC_MESSAGES/djangojs.mo")):
            digest.update(compiled.read_bytes())
    return digest.hexdigest()[:12]


def page_language() -> str:
    try:
        return translation.get_supported_language_variant(translation.get_language() or "")
    except LookupError:
        return settings.LANGUAGE_CODE


@register.simple_tag
def hall_js() -> SafeString:
    catalogue = reverse("halls:javascript-catalogue", kwargs={"language": page_language()})
    return format_html(
        '<script src="{}?v={}"></script>\n<script src="{}"></script>',
        catalogue,
        catalogue_version(),
        static("halls/format.js"),
    )
