"""The inspector's pages (issue 15): the venues' sessions, a session's minutes, a game's record, the
statistics, and the audit verification; each record also as a PDF, the statistics as CSV and PDF.

Thin doors (DESIGN §3): login required, the object found through halls.access with the inspector's role
(the operator holds it too), a read model from bingo.venuewide.records, then render. Only GET: nothing
here writes (the audit verification reads, in one snapshot).
"""

from __future__ import annotations

import csv
from datetime import date, timedelta
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count, F, Model, QuerySet, Window
from django.db.models.functions import RowNumber
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from bingo.electronic.models import ElectronicGame
from bingo.traditional.models import Game
from bingo.venuewide import records
from bingo.venuewide.inspector import pdf
from halls import access, errors
from halls.models import GameSession, Role, Venue
from halls.services.verify import verify_audit

M = TypeVar("M", bound=Model)

SESSIONS_LISTED = 60
ELECTRONIC_GAMES_LISTED = 30  # the latest electronic and automatic games, each with its record


def _found(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except errors.NotFound as exc:
        raise Http404(exc.message) from exc
    except errors.PermissionDenied as exc:
        raise PermissionDenied(exc.message) from exc


def _venue(request: HttpRequest, venue_id: int) -> Venue:
    return _found(  # type: ignore[no-any-return]
        access.get_for_user,
        Venue.objects.all(),
        request.user,
        Role.INSPECTOR,
        venue_path="pk",
        label="venue",
        pk=venue_id,
    )


def _inspected(request: HttpRequest) -> list[Venue]:
    user = request.user
    ids = access.venue_ids_with(user, Role.INSPECTOR)  # one query, however many venues they inspect
    return list(Venue.objects.filter(pk__in=ids).order_by("name"))


def _latest_of_each_venue(
    rows: QuerySet[M], venue: str, order: tuple[str, ...], count: int
) -> dict[int, list[M]]:
    """The first ``count`` of ``rows`` in ``order`` for each venue (the row's venue at ``venue``), by venue
    id: one query (a row number over each venue's rows), not one per venue."""
    ranked = rows.annotate(
        listed_venue=F(venue),
        listed_rank=Window(
            RowNumber(),
            partition_by=F(venue),
            order_by=[F(o[1:]).desc() if o.startswith("-") else F(o).asc() for o in order],
        ),
    ).filter(listed_rank__lte=count)
    found: dict[int, list[M]] = {}
    for row in ranked.order_by(*order):
        found.setdefault(row.listed_venue, []).append(row)
    return found


def _page(request: HttpRequest, template: str, status: int = 200, **context: Any) -> HttpResponse:
    return render(request, template, {"can_inspect": True, **context}, status=status)


def _pdf(content: bytes, name: str) -> HttpResponse:
    response = HttpResponse(content, content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{name}"'
    return response


@require_safe
@login_required
def index(request: HttpRequest) -> HttpResponse:
    venues = _inspected(request)
    if not venues:
        raise PermissionDenied(_("This needs the inspector's role in a venue."))
    sessions = _latest_of_each_venue(
        GameSession.objects.filter(room__venue__in=venues)
        .select_related("room", "opened_by")
        .annotate(n_games=Count("games")),
        "room__venue_id",
        ("-opened_at", "-pk"),
        SESSIONS_LISTED,
    )
    egames = _latest_of_each_venue(
        ElectronicGame.objects.filter(speciality__venue__in=venues).select_related("speciality"),
        "speciality__venue_id",
        ("-created_at", "-pk"),
        ELECTRONIC_GAMES_LISTED,
    )
    listed = [
        {"venue": v, "sessions": sessions.get(v.pk, []), "egames": egames.get(v.pk, [])} for v in venues
    ]
    return _page(request, "bingo/inspector/index.html", listed=listed)


def _session(request: HttpRequest, session_id: int) -> GameSession:
    return _found(  # type: ignore[no-any-return]
        access.get_for_user,
        GameSession.objects.select_related("room"),
        request.user,
        Role.INSPECTOR,
        venue_path="room.venue_id",
        label="session",
        pk=session_id,
    )


@require_safe
@login_required
def minutes(request: HttpRequest, session_id: int) -> HttpResponse:
    session = _session(request, session_id)
    found = records.session_minutes(session)
    return _page(request, "bingo/inspector/minutes.html", m=found)


@require_safe
@login_required
def minutes_pdf(request: HttpRequest, session_id: int) -> HttpResponse:
    session = _session(request, session_id)
    return _pdf(pdf.minutes_pdf(records.session_minutes(session)), f"acta-sesion-{session.pk}.pdf")


def _game(request: HttpRequest, game_id: int) -> Game:
    return _found(  # type: ignore[no-any-return]
        access.get_for_user,
        Game.objects.select_related("room"),
        request.user,
        Role.INSPECTOR,
        venue_path="room.venue_id",
        label="game",
        pk=game_id,
    )


@require_safe
@login_required
def game_record(request: HttpRequest, game_id: int) -> HttpResponse:
    game = _game(request, game_id)
    record = records.game_record(game)
    # A claim dispute: ?ball=43 shows that ball on every screen of the room, from the screens' acks.
    asked, ball = _asked_ball(request)
    dispute = None
    if ball is not None:
        dispute = {"ball": ball, "screens": records.ball_dispute(game, ball)}
    return _page(request, "bingo/inspector/game.html", r=record, dispute=dispute, asked=asked)


def _asked_ball(request: HttpRequest) -> tuple[str, int | None]:
    """A claim dispute's ball (?ball=43): the text asked, and the number when it is one."""
    asked = request.GET.get("ball", "").strip()
    return asked, int(asked) if asked.isdigit() and 0 < len(asked) <= 3 else None


@require_safe
@login_required
def electronic_record(request: HttpRequest, game_id: int) -> HttpResponse:
    """An electronic or automatic game: per hall screen and player terminal, when each ball was shown."""
    game = _found(
        access.get_for_user,
        ElectronicGame.objects.select_related("speciality"),
        request.user,
        Role.INSPECTOR,
        venue_path="speciality.venue_id",
        label="game",
        pk=game_id,
    )
    record = records.electronic_record(game)
    asked, ball = _asked_ball(request)
    dispute = None
    if ball is not None:  # ?ball=43: that ball on every screen and terminal, from their acks
        dispute = {"ball": ball, "screens": records.electronic_dispute(game, ball)}
    return _page(request, "bingo/inspector/electronic_game.html", r=record, dispute=dispute, asked=asked)


@require_safe
@login_required
def game_record_pdf(request: HttpRequest, game_id: int) -> HttpResponse:
    game = _game(request, game_id)
    return _pdf(pdf.record_pdf(records.game_record(game)), f"partida-{game.session_id}-{game.number}.pdf")


def _statistics(request: HttpRequest, venue: Venue) -> records.Statistics:
    today = timezone.now().astimezone(ZoneInfo(venue.time_zone)).date()
    period = request.GET.get("period") or "day"
    try:
        last = date.fromisoformat(request.GET["to"]) if request.GET.get("to") else today
        first = (
            date.fromisoformat(request.GET["from"])
            if request.GET.get("from")
            else (last.replace(day=1) if period == "day" else date(last.year, 1, 1))
        )
    except ValueError as exc:
        raise errors.InvalidInput(_("Dates are written YYYY-MM-DD."), code="bad_date") from exc
    if first > last and not request.GET.get("from"):
        first = last - timedelta(days=30)
    return records.statistics(venue=venue, period=period, first=first, last=last)


@require_safe
@login_required
def statistics(request: HttpRequest, venue_id: int) -> HttpResponse:
    venue = _venue(request, venue_id)
    try:
        report = _statistics(request, venue)
    except errors.InvalidInput as exc:
        template = "bingo/inspector/statistics.html"
        return _page(request, template, 400, venue=venue, error=exc.message, query=request.GET)
    return _page(request, "bingo/inspector/statistics.html", venue=venue, report=report, query=request.GET)


def _statistics_file(request: HttpRequest, venue_id: int) -> tuple[Venue, records.Statistics | HttpResponse]:
    venue = _venue(request, venue_id)
    try:
        return venue, _statistics(request, venue)
    except errors.InvalidInput as exc:
        return venue, HttpResponse(exc.message, status=400, content_type="text/plain; charset=utf-8")


@require_safe
@login_required
def statistics_csv(request: HttpRequest, venue_id: int) -> HttpResponse:
    venue, report = _statistics_file(request, venue_id)
    if isinstance(report, HttpResponse):
        return report
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = f"estadisticas-{venue.licence_number}-{report.period}-{report.first}-{report.last}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    csv.writer(response).writerows(records.statistics_csv_rows(report))
    return response


@require_safe
@login_required
def statistics_pdf(request: HttpRequest, venue_id: int) -> HttpResponse:
    venue, report = _statistics_file(request, venue_id)
    if isinstance(report, HttpResponse):
        return report
    name = f"estadisticas-{venue.licence_number}-{report.period}-{report.first}-{report.last}.pdf"
    return _pdf(pdf.statistics_pdf(report), name)


@require_safe
@login_required
def audit(request: HttpRequest, venue_id: int) -> HttpResponse:
    venue = _venue(request, venue_id)
    report = verify_audit(venue_ids=[venue.pk]) if request.GET.get("verify") else None
    return _page(request, "bingo/inspector/audit.html", venue=venue, report=report, checked_at=timezone.now())
