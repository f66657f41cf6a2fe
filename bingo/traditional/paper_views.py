"""Pages of paper cards: the operator's paper page (import a series with its report, the stock of every series
and its moves, sheets printed for a game), a game's printed-card register, and the public card check that a
card's QR code opens. Forms post here; each post calls one service of bingo.traditional.services.paper."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache

from bingo.traditional.models import CardSeries, Game, GameState, PrintedCards, StockMovement, StockState
from bingo.traditional.paper_api import MAX_FILE_BYTES, check_data
from bingo.traditional.paperstock import NOT_RECEIVED
from bingo.traditional.services import paper, stock
from bingo.traditional.services.series import IMPORTED
from halls import access, errors, money
from halls.models import Role, Venue
from halls.staff_pages import staff_page, staff_venues


def _operator_venue(request: HttpRequest) -> Venue:
    venues = [v.venue for v in staff_venues(request) if v.is_operator]
    if not venues:
        raise PermissionDenied(_("The paper cards page is for operators."))
    wanted = request.GET.get("venue") or request.POST.get("venue")
    for venue in venues:
        if str(venue.pk) == wanted:
            return venue
    return venues[0]


def _ranges(held: stock.Stock) -> list[dict[str, Any]]:
    out = []
    for span in held.spans:
        game = held.games.get(span.game) if span.game is not None else None
        out.append({"span": span, "label": StockState(span.state).label, "game": game})
    return out


def _counts(held: stock.Stock) -> list[tuple[str, str, int]]:
    """(state, label, cards) of the states the series' paper is in, in the order it moves."""
    counts = held.counts
    labels = [(NOT_RECEIVED, _("Not received"))] + [(s.value, s.label) for s in StockState]
    return [(state, str(label), counts[state]) for state, label in labels if counts[state]]


def _context(venue: Venue) -> dict[str, Any]:
    series = list(CardSeries.objects.filter(venue=venue).order_by("-created_at", "code"))
    stocks = stock.stocks_of(series)
    rows = []
    for item in series:
        held = stocks[item.pk]
        whole = held.spans[0].state if len(held.spans) == 1 and held.spans[0].cards == item.card_count else ""
        rows.append(
            {
                "series": item,
                "stock": held,
                "ranges": _ranges(held),
                "counts": _counts(held),
                "state": whole or ("mixed" if held.spans else ""),
                "blocked": held.counts[StockState.DESTROYED] == item.card_count,
                "imported": item.generator == IMPORTED,
            }
        )
    open_games = Game.objects.filter(
        room__venue=venue, state__in=[GameState.SCHEDULED, GameState.ON_SALE, GameState.SALES_CLOSED]
    ).select_related("room")
    recent_games = Game.objects.filter(room__venue=venue, printed_cards__isnull=False).distinct()
    movements = StockMovement.objects.filter(series__venue=venue).select_related(
        "series", "actor", "game__room"
    )
    return {
        "venue": venue,
        "rows": rows,
        "states": list(StockState.choices),
        "open_games": open_games.order_by("room__name", "number"),
        "register_games": recent_games.select_related("room").order_by("-pk")[:20],
        "movements": movements.order_by("-pk")[:30],
    }


def _serial(request: HttpRequest, name: str) -> int | None:
    raw = request.POST.get(name, "").strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError as exc:
        raise errors.InvalidInput(_("Serials are whole numbers."), code="bad_range") from exc


def _error(exc: errors.DomainError) -> dict[str, Any]:
    return {"error": exc.message, "error_code": exc.code}


@login_required
@never_cache
def paper_page(request: HttpRequest) -> HttpResponse:
    venue = _operator_venue(request)
    user = request.user
    assert isinstance(user, User)
    extra: dict[str, Any] = {}
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if action == "import":
                extra = _import(request, venue, user)
            elif action == "move":
                series = CardSeries.objects.filter(venue=venue, pk=request.POST.get("series") or 0).first()
                if series is None:
                    raise errors.NotFound(_("No such series."), code="unknown_series")
                game = (
                    Game.objects.filter(room__venue=venue, pk=request.POST.get("game") or 0)
                    .select_related("room")
                    .first()
                )
                stock.move_paper(
                    series=series,
                    to_state=request.POST.get("to_state", ""),
                    actor=user,
                    first=_serial(request, "first"),
                    last=_serial(request, "last"),
                    game=game,
                    note=request.POST.get("note", "")[:200],
                )
                return redirect(f"{reverse('bingo:paper')}?venue={venue.pk}#stock")
            elif action == "print":
                return _print(request, venue, user)
        except errors.DomainError as exc:
            extra = {**extra, **_error(exc)}
            if action == "move":
                extra["move_posted"] = request.POST
                extra["offending"] = exc.details.get("offending", [])
            if exc.code == "bad_cards":
                extra["report"] = exc.details.get("problems", [])
                extra["bad_serials"] = exc.details.get("bad_serials", [])
    return staff_page(request, "bingo/paper.html", staff_venues(request), **_context(venue), **extra)


def _import(request: HttpRequest, venue: Venue, user: User) -> dict[str, Any]:
    upload = request.FILES.get("file")
    if upload is None or upload.size is None or upload.size > MAX_FILE_BYTES:
        raise errors.InvalidInput(_("Choose the series' CSV file (at most 12 MB)."), code="no_file")
    mark = "," if (get_language() or "es").startswith("es") else "."
    face_value = money.parse_typed(request.POST.get("face_value", ""), decimal_mark=mark)
    if face_value is None:  # "1.234,56" and "2,00" read as the pages read them (halls.money.parse_typed)
        raise errors.InvalidInput(_("The face value is not an amount."), code="bad_face_value")
    code = request.POST.get("code", "").strip()[:40]
    if not code:
        raise errors.InvalidInput(_("Give the series a code."), code="bad_code")
    series = paper.import_series(
        venue=venue,
        code=code,
        face_value=face_value,
        data=upload.read(),
        actor=user,
        reference=request.POST.get("reference", "")[:120],
    )
    return {"imported": series}


def _print(request: HttpRequest, venue: Venue, user: User) -> HttpResponse:
    series = CardSeries.objects.filter(venue=venue, pk=request.POST.get("series") or 0).first()
    game = (
        Game.objects.filter(room__venue=venue, pk=request.POST.get("game") or 0)
        .select_related("room")
        .first()
    )
    if series is None or game is None:
        raise errors.NotFound(_("Choose a series and a game."), code="unknown_series")
    try:
        first = int(request.POST.get("first") or 1)
        last = int(request.POST.get("last") or series.card_count)
    except ValueError as exc:
        raise errors.InvalidInput(_("Serials are whole numbers."), code="bad_range") from exc
    _row, pdf = paper.print_sheets(
        series=series, game=game, first=first, last=last, actor=user, base_url=request.build_absolute_uri("/")
    )
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="series-{series.code}-{first}-{last}.pdf"'
    return response


@login_required
@never_cache
def register_page(request: HttpRequest, game_id: int) -> HttpResponse:
    try:
        game = access.get_for_user(
            Game.objects.select_related("room__venue"),
            request.user,
            Role.OPERATOR,
            Role.CALLER,
            Role.CASHIER,
            venue_path="room.venue_id",
            label="game",
            pk=game_id,
        )
    except errors.NotFound as exc:
        raise Http404(exc.message) from exc
    except errors.PermissionDenied as exc:
        raise PermissionDenied(exc.message) from exc
    rows = list(PrintedCards.objects.filter(game=game).select_related("series", "printed_by", "sale"))
    return staff_page(
        request,
        "bingo/printed_register.html",
        staff_venues(request),
        game=game,
        rows=rows,
        total=sum(r.cards for r in rows),
    )


@never_cache
def card_check(request: HttpRequest, series_id: int, serial: int, code: str) -> HttpResponse:
    """Public (no login): what a card's QR code opens. JSON with ?format=json."""
    try:
        check = paper.check_card(series_id=series_id, serial=serial, code=code)
    except errors.NotFound as exc:
        if request.GET.get("format") == "json":
            return JsonResponse({"error": exc.as_dict()}, status=404)
        raise Http404(exc.message) from exc
    data = check_data(check)
    if request.GET.get("format") == "json":
        return JsonResponse({**data, "face_value": str(check.face_value)})
    state = GameState(check.game.state).label if check.game else ""
    return render(request, "bingo/card_check.html", {"check": check, "data": data, "game_state_label": state})
