"""Staff pages of bingo: home, the caller console and the cashier page (the till).

Thin doors (DESIGN §3): login required, read-only queries for what the page lists (the user's venues,
rooms and screens), then render. Every command and every live figure goes through the REST API from the
page's script (fetch with the CSRF token), so the pages hold no business rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext as _
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_safe

from bingo.traditional import hooks
from bingo.traditional.models import DrawDevice
from bingo.traditional.voicefiles import clip_file
from halls import access, errors
from halls.models import Role, Room, Screen, Venue


@dataclass
class VenueAccess:
    venue: Venue
    roles: frozenset[str]
    inspecting: bool = False  # the venue's inspector: reads everything, writes nothing
    rooms: list[Room] = field(default_factory=list)
    screens: list[Screen] = field(default_factory=list)

    @property
    def can_call(self) -> bool:
        return Role.CALLER in self.roles

    @property
    def can_sell(self) -> bool:
        return Role.CASHIER in self.roles

    @property
    def is_operator(self) -> bool:
        return Role.OPERATOR in self.roles

    @property
    def can_inspect(self) -> bool:
        return Role.INSPECTOR in self.roles

    @property
    def role_labels(self) -> list[str]:
        if self.inspecting:
            return [str(Role.INSPECTOR.label)]
        if self.is_operator:
            return [str(Role.OPERATOR.label)]
        return [str(Role(r).label) for r in sorted(self.roles)]


def _venues(request: HttpRequest) -> list[VenueAccess]:
    """The user's venues with their roles there, rooms and (for operators) screens."""
    user = request.user
    venues = Venue.objects.filter(pk__in=access.venue_ids_for(user)).order_by("name")
    found = [
        VenueAccess(venue=v, roles=access.roles_in(user, v.pk), inspecting=access.inspects(user, v.pk))
        for v in venues
    ]
    by_id = {v.venue.pk: v for v in found}
    for room in Room.objects.filter(venue_id__in=by_id).order_by("venue_id", "name"):
        by_id[room.venue_id].rooms.append(room)
    for screen in (
        Screen.objects.filter(venue_id__in=by_id, active=True).select_related("room").order_by("name")
    ):
        if by_id[screen.venue_id].is_operator:
            by_id[screen.venue_id].screens.append(screen)
    return found


def _page(request: HttpRequest, template: str, venues: list[VenueAccess], **context: Any) -> HttpResponse:
    return render(
        request,
        template,
        {
            "venues": venues,
            "can_call": any(v.can_call for v in venues),
            "can_sell": any(v.can_sell for v in venues),
            "is_operator": any(v.is_operator for v in venues),
            "can_inspect": any(v.can_inspect for v in venues),
            **context,
        },
    )


@login_required
@ensure_csrf_cookie
def home(request: HttpRequest) -> HttpResponse:
    # At the central, its operators also find the network's pages
    # (bingo.network.interconnected.views_central).
    is_central = getattr(settings, "HALL_ROLE", "venue") == "central"
    return _page(request, "bingo/home.html", _venues(request), is_central=is_central)


@login_required
@ensure_csrf_cookie
def console_index(request: HttpRequest) -> HttpResponse:
    venues = [v for v in _venues(request) if v.can_call]
    room_ids = [room.pk for v in venues for room in v.rooms]
    self_playing = hooks.self_playing(room_ids)
    links = hooks.console_links(room_ids)
    # Each room said by how it draws (its drawing devices, main first), never by a draw source it may not use.
    drawing: dict[int, list[DrawDevice]] = {}
    for device in DrawDevice.objects.filter(room_id__in=room_ids).order_by("room_id", "reserve", "pk"):
        drawing.setdefault(device.room_id, []).append(device)
    for v in venues:
        for room in v.rooms:
            room.network_links = links.get(room.pk, [])  # type: ignore[attr-defined]
            room.main_devices = [d for d in drawing.get(room.pk, []) if not d.reserve]  # type: ignore[attr-defined]
            room.reserve_devices = [d for d in drawing.get(room.pk, []) if d.reserve]  # type: ignore[attr-defined]
    return _page(request, "bingo/console_index.html", venues, self_playing=self_playing)


@login_required
@ensure_csrf_cookie
def console_room(request: HttpRequest, room_id: int) -> HttpResponse:
    try:
        room = access.get_for_user(
            Room.objects.select_related("venue"), request.user, Role.CALLER, label="room", pk=room_id
        )
    except errors.NotFound as exc:
        raise Http404(exc.message) from exc
    except errors.PermissionDenied as exc:
        raise PermissionDenied(exc.message) from exc
    links = hooks.console_links([room.pk]).get(room.pk, [])
    return _page(request, "bingo/console.html", _venues(request), room=room, network_links=links)


@login_required
@ensure_csrf_cookie
def cashier(request: HttpRequest) -> HttpResponse:
    venues = [v for v in _venues(request) if v.can_sell]
    rooms = [
        {
            "id": room.pk,
            "name": room.name,
            "venue": v.venue.pk,
            "venue_name": v.venue.name,
            "currency": v.venue.currency,
        }
        for v in venues
        for room in v.rooms
    ]
    # The till's panels (shift, cards, tickets, prizes) are halls.cashier's templates and scripts, composed
    # here with bingo's range sales; every figure and operation goes through /api/cashier/ and the bingo API.
    till_venues = [{"id": v.venue.pk, "name": v.venue.name, "currency": v.venue.currency} for v in venues]
    return _page(request, "bingo/cashier.html", venues, cashier_rooms=rooms, till_venues=till_venues)


@require_safe
def voice_clip(request: HttpRequest, key: str) -> FileResponse:
    """One clip of the caller's voice (bingo.traditional.voice), as generated offline by `manage.py
    build_voice`:
    public (screens fetch them without their token; they say only what the hall hears), cached an hour."""
    path = clip_file(Path(settings.HALL_VOICE_DIR), key)
    if path is None or not path.is_file():
        raise Http404(_("No such voice clip."))
    response = FileResponse(path.open("rb"), content_type="audio/wav")
    patch_cache_control(response, public=True, max_age=3600)
    return response
