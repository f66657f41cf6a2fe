"""Staff pages of traditional bingo: the caller console; the caller's voice clips.

Thin doors (DESIGN §3): login required, read-only queries for what the page lists (the user's venues,
rooms and screens), then render. Every command and every live figure goes through the REST API from the
page's script (fetch with the CSRF token), so the pages hold no business rule.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext as _
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_safe

from bingo.traditional import hooks
from bingo.traditional.models import DrawDevice
from bingo.traditional.voicefiles import clip_file
from halls import access, errors
from halls.models import Role, Room
from halls.staff_pages import staff_page, staff_venues


@login_required
@ensure_csrf_cookie
def console_index(request: HttpRequest) -> HttpResponse:
    venues = [v for v in staff_venues(request) if v.can_call]
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
    return staff_page(request, "bingo/console_index.html", venues, self_playing=self_playing)


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
    return staff_page(request, "bingo/console.html", staff_venues(request), room=room, network_links=links)


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
