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
from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache

from bingo import labels
from bingo.balls import colour_ranges, default_colours, parse_colour_ranges
from bingo.models import BallSet, CardSeries, DrawDevice, DrawDeviceKind
from bingo.services import ballsets, devices, series
from halls import access, errors
from halls.models import Role, Room, Screen, Venue
from halls.services import setup, voice
from jackpots.models import Pool
from jackpots.rulepacks import packs_for
from jackpots.tables.models import CasinoTable, TableGame
from jackpots.tables.services import tables as table_services


def _operator_venues(request: HttpRequest) -> list[Venue]:
    user = request.user
    ids = [v for v in access.venue_ids_for(user) if Role.OPERATOR in access.roles_in(user, v)]
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
    pools = list(Pool.objects.filter(venue_id__in=ids, active=True).exclude(rule_pack="").order_by("code"))
    return {
        "venues": venues,
        "is_operator": True,
        "can_call": True,
        "can_sell": True,
        "ball_sets": sets,
        "default_ranges": colour_ranges(default_colours()),
        "rooms": rooms,
        "devices": DrawDevice.objects.filter(room__in=rooms)
        .select_related("room")
        .order_by("room_id", "reserve", "pk"),
        "device_kinds": DrawDeviceKind.choices,
        "screens": Screen.objects.filter(venue_id__in=ids).select_related("room").order_by("room_id", "pk"),
        "series": CardSeries.objects.filter(venue_id__in=ids)
        .select_related("venue")
        .order_by("venue_id", "code"),
        "tables": CasinoTable.objects.filter(venue_id__in=ids)
        .select_related("venue", "pool")
        .order_by("venue_id", "number"),
        "table_games": TableGame.choices,
        "rule_packs": sorted({(p.code, p.title) for v in venues for p in packs_for(v.jurisdiction)}),
        "pools": pools,
        "all_tables_pools": {p.pk for p in pools if table_services.carrusel_tables(p) is not None},
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
    return render(request, "bingo/setup.html", context, status=exc.status)


# --- the form's fields ----------------------------------------------------------------------------------


def _text(request: HttpRequest, name: str) -> str:
    return str(request.POST.get(name, "")).strip()


def _int(request: HttpRequest, name: str, label: str) -> int:
    value = _text(request, name)
    if not value.lstrip("-").isdigit():
        raise errors.InvalidInput(
            _("%(field)s must be a whole number.") % {"field": label}, code="bad_number"
        )
    return int(value)


def _decimal(request: HttpRequest, name: str, label: str) -> Decimal:
    try:
        value = Decimal(_text(request, name).replace(",", "."))
    except InvalidOperation as exc:
        raise errors.InvalidInput(
            _("%(field)s must be a number.") % {"field": label}, code="bad_number"
        ) from exc
    if not value.is_finite():
        raise errors.InvalidInput(_("%(field)s must be a number.") % {"field": label}, code="bad_number")
    return value


def _one(venues: list[Venue], request: HttpRequest, model: Any, name: str, label: str, path: str) -> Any:
    """The object named by the field, among the operator's venues' (404 otherwise)."""
    value = _text(request, name)
    ids = [v.pk for v in venues]
    found = model.objects.filter(pk=int(value), **{f"{path}__in": ids}).first() if value.isdigit() else None
    if found is None:
        raise errors.NotFound(
            _("No %(what)s %(id)s in your venues.") % {"what": label, "id": value}, code="unknown"
        )
    return found


def _venue(request: HttpRequest, venues: list[Venue]) -> Venue:
    return _one(venues, request, Venue, "venue", _("venue"), "pk")  # type: ignore[no-any-return]


def _colours(request: HttpRequest) -> dict[str, str]:
    try:
        return parse_colour_ranges(_text(request, "colour_ranges"))
    except ValueError as exc:
        raise errors.InvalidInput(str(exc), code="bad_ball_set") from exc


def _user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user


# --- actions (one service each) -------------------------------------------------------------------------


def _ball_set_create(request: HttpRequest, venues: list[Venue]) -> None:
    ballsets.register_ball_set(
        venue=_venue(request, venues),
        name=_text(request, "name"),
        colours=_colours(request),
        certified_games=_int(request, "certified_games", _("The manufacturer's number of games")),
        manufacturer=_text(request, "manufacturer"),
        homologation_ref=_text(request, "homologation_ref"),
        actor=_user(request),
    )


def _balls(request: HttpRequest) -> list[int]:
    text = _text(request, "balls").replace(",", " ")
    if any(not part.isdigit() for part in text.split()):
        raise errors.InvalidInput(_("Balls are numbers separated by spaces or commas."), code="bad_balls")
    return [int(part) for part in text.split()]


def _ball_set_incident(request: HttpRequest, venues: list[Venue]) -> None:
    ballsets.record_incident(
        ball_set=_one(venues, request, BallSet, "ball_set", _("ball set"), "venue_id"),
        note=_text(request, "note"),
        balls=_balls(request),
        replaced=request.POST.get("replaced") == "on",
        actor=_user(request),
    )


def _ball_set_replace(request: HttpRequest, venues: list[Venue]) -> None:
    ballsets.replace_ball_set(
        ball_set=_one(venues, request, BallSet, "ball_set", _("ball set"), "venue_id"),
        name=_text(request, "name"),
        note=_text(request, "note"),
        actor=_user(request),
    )


def _room_create(request: HttpRequest, venues: list[Venue]) -> None:
    setup.create_room(
        venue=_venue(request, venues),
        name=_text(request, "name"),
        ball_pace_seconds=_decimal(request, "ball_pace_seconds", _("The pace between balls")),
        claim_window_seconds=_int(request, "claim_window_seconds", _("The any-more-claims window")),
        actor=_user(request),
    )


def _device_create(request: HttpRequest, venues: list[Venue]) -> None:
    devices.register_device(
        room=_one(venues, request, Room, "room", _("room"), "venue_id"),
        name=_text(request, "name"),
        kind=_text(request, "kind"),
        reserve=request.POST.get("reserve") == "on",
        homologation_ref=_text(request, "homologation_ref"),
        actor=_user(request),
    )


def _screen_create(request: HttpRequest, venues: list[Venue]) -> None:
    setup.create_screen(
        room=_one(venues, request, Room, "room", _("room"), "venue_id"),
        name=_text(request, "name"),
        actor=_user(request),
    )


def _screen_toggle(request: HttpRequest, venues: list[Venue]) -> None:
    screen = _one(venues, request, Screen, "screen", _("screen"), "venue_id")
    setup.set_screen_active(screen=screen, active=not screen.active, actor=_user(request))


def _screen_audio(request: HttpRequest, venues: list[Venue]) -> None:
    """The room's audio screen (the caller's voice, halls.services.voice): this one, or none if it was."""
    screen = _one(venues, request, Screen, "screen", _("screen"), "venue_id")
    room = Room.objects.get(pk=screen.room_id)
    voice.choose_audio_screen(room=room, screen=None if screen.plays_audio else screen, actor=_user(request))


def _series_create(request: HttpRequest, venues: list[Venue]) -> None:
    series.create_series(
        venue=_venue(request, venues),
        code=_text(request, "code"),
        face_value=_decimal(request, "face_value", _("The face value")),
        strips=_int(request, "strips", _("Strips")),
        actor=_user(request),
    )


def _table_create(request: HttpRequest, venues: list[Venue]) -> None:
    table_services.create_table(
        venue=_venue(request, venues),
        number=_int(request, "number", _("The table number")),
        name=_text(request, "name"),
        game=_text(request, "game"),
        table_minimum=_decimal(request, "table_minimum", _("The table minimum")),
        rule_pack=_text(request, "rule_pack"),
        actor=_user(request),
    )


def _carrusel_join(request: HttpRequest, venues: list[Venue]) -> None:
    pool = _one(venues, request, Pool, "pool", _("pool"), "venue_id")
    ids = [int(v) for v in request.POST.getlist("tables") if v.isdigit()]
    chosen = list(CasinoTable.objects.filter(pk__in=ids, venue_id__in=[v.pk for v in venues]))
    table_services.form_carrusel(pool=pool, tables=chosen, actor=_user(request))


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
    "table_create": _table_create,
    "carrusel_join": _carrusel_join,
}
