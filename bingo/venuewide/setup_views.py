"""The operator's setup page (/setup/, issue 15): everything a venue needs before its first night — ball sets
with their colour map (and their incidents and replacements), rooms with their drawing devices and
screens, card series (their import, printing and stock are the paper page's), and casino tables with the
carrusel they play into.

A thin door (DESIGN §3): GET lists what the operator's venues have; each form POSTs one action, which
calls ONE service and redirects back (POST/redirect/GET), or shows the service's refusal above the page
with status 400/404/409 and nothing written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache

from bingo.balls import ColourRangeError, colour_ranges, default_colours, parse_colour_ranges
from bingo.traditional import labels
from bingo.traditional.models import BallSet, CardSeries, DrawDevice, DrawDeviceKind
from bingo.traditional.services import ballsets, devices, series
from bingo.venuewide import setup_cashier, setup_casino
from bingo.venuewide import setup_fields as fields
from halls import access, errors
from halls.models import Role, Room, Screen, Venue
from halls.services import setup, voice


def _operator_venues(request: HttpRequest) -> list[Venue]:
    user = request.user
    ids = access.venue_ids_with(user, Role.OPERATOR)  # one query, however many venues they run
    if not ids:
        raise PermissionDenied(_("The setup page is for operators."))
    return list(Venue.objects.filter(pk__in=ids).order_by("name"))


def _context(venues: list[Venue]) -> dict[str, Any]:
    ids = [v.pk for v in venues]
    rooms = list(
        Room.objects.filter(venue_id__in=ids).select_related("venue").order_by("venue__name", "name")
    )
    sets = list(BallSet.objects.filter(venue_id__in=ids).select_related("venue").order_by("venue_id", "pk"))
    for ball_set in sets:
        ball_set.ranges_shown = colour_ranges(ball_set.colours, labels.colour_label)  # type: ignore[attr-defined]
    return {
        "venues": venues,
        "is_operator": True,
        "can_call": True,
        "can_sell": True,
        "ball_sets": sets,
        # the five-colour set, said in the page's language: the parser reads it back (bingo.balls)
        "default_ranges": colour_ranges(default_colours(), labels.colour_label),
        "colour_names": labels.colour_list(list(labels.COLOURS)),
        "rooms": rooms,
        "devices": DrawDevice.objects.filter(room__in=rooms)
        .select_related("room")
        .order_by("room_id", "reserve", "pk"),
        "device_kinds": DrawDeviceKind.choices,
        "screens": Screen.objects.filter(venue_id__in=ids).select_related("room").order_by("room_id", "pk"),
        "series": CardSeries.objects.filter(venue_id__in=ids)
        .select_related("venue")
        .order_by("venue_id", "code"),
        **setup_casino.context(venues),
        **setup_cashier.context(venues),
    }


@login_required
@never_cache
def setup_page(request: HttpRequest) -> HttpResponse:
    venues = _operator_venues(request)
    if request.method == "POST":
        action = ACTIONS.get(request.POST.get("action", ""))
        if action is None:
            return _refused(request, venues, errors.InvalidInput(_("Unknown action."), code="bad_action"))
        try:
            action(request, venues)
        except errors.DomainError as exc:
            return _refused(request, venues, exc)
        return HttpResponseRedirect(reverse("bingo:setup") + "#" + request.POST.get("section", ""))
    return render(request, "bingo/setup.html", _context(venues))


def _refused(request: HttpRequest, venues: list[Venue], exc: errors.DomainError) -> HttpResponse:
    context = {**_context(venues), "error": exc.message, "error_code": exc.code, "posted": request.POST}
    if request.POST.get("action") == "carrusel_create":  # the form comes back as it was filled
        context["carrusel_posted"] = request.POST
        context["carrusel_tables"] = request.POST.getlist("tables")
    return render(request, "bingo/setup.html", context, status=exc.status)


def _colours(request: HttpRequest) -> dict[str, str]:
    try:
        return parse_colour_ranges(fields.text(request, "colour_ranges"))
    except ColourRangeError as exc:
        raise errors.InvalidInput(labels.colour_range_error(exc), code="bad_ball_set") from exc


# --- actions (one service each) -------------------------------------------------------------------------


def _ball_set_create(request: HttpRequest, venues: list[Venue]) -> None:
    ballsets.register_ball_set(
        venue=fields.venue(request, venues),
        name=fields.text(request, "name"),
        colours=_colours(request),
        certified_games=fields.whole(request, "certified_games", _("The manufacturer's number of games")),
        manufacturer=fields.text(request, "manufacturer"),
        homologation_ref=fields.text(request, "homologation_ref"),
        actor=fields.user(request),
    )


def _balls(request: HttpRequest) -> list[int]:
    text = fields.text(request, "balls").replace(",", " ")
    if any(not part.isdigit() for part in text.split()):
        raise errors.InvalidInput(_("Balls are numbers separated by spaces or commas."), code="bad_balls")
    return [int(part) for part in text.split()]


def _ball_set_incident(request: HttpRequest, venues: list[Venue]) -> None:
    ballsets.record_incident(
        ball_set=fields.one(venues, request, BallSet, "ball_set", _("ball set"), "venue_id"),
        note=fields.text(request, "note"),
        balls=_balls(request),
        replaced=request.POST.get("replaced") == "on",
        actor=fields.user(request),
    )


def _ball_set_replace(request: HttpRequest, venues: list[Venue]) -> None:
    ballsets.replace_ball_set(
        ball_set=fields.one(venues, request, BallSet, "ball_set", _("ball set"), "venue_id"),
        name=fields.text(request, "name"),
        note=fields.text(request, "note"),
        actor=fields.user(request),
    )


def _room_create(request: HttpRequest, venues: list[Venue]) -> None:
    setup.create_room(
        venue=fields.venue(request, venues),
        name=fields.text(request, "name"),
        ball_pace_seconds=fields.decimal(request, "ball_pace_seconds", _("The pace between balls")),
        claim_window_seconds=fields.whole(request, "claim_window_seconds", _("The any-more-claims window")),
        actor=fields.user(request),
    )


def _device_create(request: HttpRequest, venues: list[Venue]) -> None:
    devices.register_device(
        room=fields.one(venues, request, Room, "room", _("room"), "venue_id"),
        name=fields.text(request, "name"),
        kind=fields.text(request, "kind"),
        reserve=request.POST.get("reserve") == "on",
        homologation_ref=fields.text(request, "homologation_ref"),
        actor=fields.user(request),
    )


def _screen_create(request: HttpRequest, venues: list[Venue]) -> None:
    setup.create_screen(
        room=fields.one(venues, request, Room, "room", _("room"), "venue_id"),
        name=fields.text(request, "name"),
        actor=fields.user(request),
    )


def _screen_toggle(request: HttpRequest, venues: list[Venue]) -> None:
    screen = fields.one(venues, request, Screen, "screen", _("screen"), "venue_id")
    setup.set_screen_active(screen=screen, active=not screen.active, actor=fields.user(request))


def _screen_audio(request: HttpRequest, venues: list[Venue]) -> None:
    """The room's audio screen (the caller's voice, halls.services.voice): this one, or none if it was."""
    screen = fields.one(venues, request, Screen, "screen", _("screen"), "venue_id")
    room = Room.objects.get(pk=screen.room_id)
    voice.choose_audio_screen(
        room=room, screen=None if screen.plays_audio else screen, actor=fields.user(request)
    )


def _series_create(request: HttpRequest, venues: list[Venue]) -> None:
    series.create_series(
        venue=fields.venue(request, venues),
        code=fields.text(request, "code"),
        face_value=fields.amount(request, "face_value", _("The face value")),
        strips=fields.whole(request, "strips", _("Strips")),
        actor=fields.user(request),
    )


def _room_rename(request: HttpRequest, venues: list[Venue]) -> None:
    setup.rename_room(
        room=fields.one(venues, request, Room, "room", _("room"), "venue_id"),
        name=fields.text(request, "name"),
        actor=fields.user(request),
    )


def _screen_rename(request: HttpRequest, venues: list[Venue]) -> None:
    setup.rename_screen(
        screen=fields.one(venues, request, Screen, "screen", _("screen"), "venue_id"),
        name=fields.text(request, "name"),
        actor=fields.user(request),
    )


ACTIONS: dict[str, Callable[[HttpRequest, list[Venue]], None]] = {
    "ball_set_create": _ball_set_create,
    "ball_set_incident": _ball_set_incident,
    "ball_set_replace": _ball_set_replace,
    "room_create": _room_create,
    "device_create": _device_create,
    "screen_create": _screen_create,
    "screen_toggle": _screen_toggle,
    "screen_audio": _screen_audio,
    "series_create": _series_create,
    "room_rename": _room_rename,
    "screen_rename": _screen_rename,
    **setup_casino.ACTIONS,
    **setup_cashier.ACTIONS,
}
