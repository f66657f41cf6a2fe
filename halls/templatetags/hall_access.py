"""``{% may_write venue "caller" as can_call_write %}``: whether the page's user may use a write control
of that role in that venue (``halls.access.may_write``, what the API checks the write against), so a
read-only user (the inspector) is never offered a control the API would refuse with 403.

``venue`` is a Venue, a venue id, or a list of either (true when any of them lets the write through).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import template

from halls import access

register = template.Library()


def _ids(venue: Any) -> list[int]:
    if venue is None or venue == "":
        return []
    if isinstance(venue, int | str):
        return [int(venue)]
    if isinstance(venue, Iterable):
        return [i for v in venue for i in _ids(getattr(v, "venue", v))]
    return [int(venue.pk)]


@register.simple_tag(takes_context=True)
def may_write(context: template.Context, venue: Any, *roles: str) -> bool:
    request = context.get("request")
    if request is None:
        return False
    return access.may_write_any(request.user, _ids(venue), *roles)  # two queries, however many venues
