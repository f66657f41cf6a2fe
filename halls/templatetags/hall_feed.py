"""Names a person reads for the feed's codes (halls/feed/schemas): a session's game family, a pool's family,
a tax base's game type. A code not named here is shown as it came."""

from __future__ import annotations

from django import template
from django.utils.translation import gettext_lazy as _

register = template.Library()

FAMILIES = {
    # session.opened's families
    "traditional": _("Traditional bingo"),
    "electronic": _("Electronic bingo"),
    "automatic": _("Automatic bingo"),
    "simultaneous": _("Simultaneous bingo"),
    # pool.amounts' families
    "bingo": _("Bingo"),
    "carrusel": _("Table carousel"),
    "machines": _("Machines"),
    "network": _("Network"),
}


@register.filter
def feed_family(code: str | None) -> str:
    if not code:
        return "—"
    return str(FAMILIES.get(code, code))
