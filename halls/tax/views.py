"""The operator's gaming-tax returns page: the returns filed, a closed period computed (nothing written), its
filing, and each return's CSV (the file filed, byte for byte) and PDF.

Thin doors: login required; the venue's operator and inspector read, the operator files
(halls.tax.services.returns). A refusal (a period not closed, no rate table, filed already) is shown on the
page, in the reader's language, and nothing is written."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from halls import access, errors
from halls.models import Jurisdiction, Role, Venue
from halls.staff_pages import staff_page, staff_venues
from halls.tax import compute, hooks, pdf
from halls.tax.models import Basis, Rounding, TaxReturn
from halls.tax.services import periods, returns

READERS = (Role.OPERATOR, Role.INSPECTOR)


def _venue(request: HttpRequest, venue_id: int, *roles: str) -> Venue:
    try:
        return access.venue_for(request.user, venue_id, *roles)
    except errors.NotFound as exc:
        raise Http404(exc.message) from exc
    except errors.PermissionDenied as exc:
        raise PermissionDenied(exc.message) from exc


def _lines(rows: list[list[str]]) -> list[dict[str, Any]]:
    labels = hooks.game_types()
    lines = []
    for row in rows:
        line: dict[str, Any] = dict(zip(compute.COLUMNS, row, strict=True))
        line["game_type_label"] = str(labels.get(line["game_type"], line["game_type"]))
        line["basis_label"] = str(Basis(line["basis"]).label)
        rate = line["rate_percent"]
        line["rate_shown"] = formats.number_format(Decimal(rate)) if rate else ""
        lines.append(line)
    return lines


def shown(venue: Venue, found: TaxReturn | returns.Draft) -> dict[str, Any]:
    """What the page and the PDF show of a filed return or a draft."""
    common = {"venue": venue, "jurisdiction_label": str(Jurisdiction(venue.jurisdiction).label)}
    if isinstance(found, TaxReturn):
        return {
            **common,
            "filed": True,
            "period": found.period,
            "first_day": found.first_day,
            "last_day": found.last_day,
            "reference": found.rate_reference,
            "rounding_label": str(Rounding(found.rounding).label),
            "lines": _lines(found.lines),
            "total_due": str(found.total_due),
            "digest": found.digest,
            "filed_at": formats.date_format(timezone.localtime(found.filed_at), "SHORT_DATETIME_FORMAT"),
            "filed_by": found.filed_by_label,
        }
    return {
        **common,
        "filed": False,
        "period": found.period.label,
        "first_day": found.period.first,
        "last_day": found.period.last,
        "reference": found.table.reference,
        "rounding_label": str(Rounding(found.computed.rounding).label),
        "lines": _lines([compute.line_row(line) for line in found.computed.lines]),
        "total_due": compute.amount(found.computed.total),
        "digest": found.digest,
    }


@require_safe
@login_required
def home(request: HttpRequest) -> HttpResponse:
    """The first venue the user reads the returns of."""
    for found in staff_venues(request):
        if found.is_operator or found.can_inspect:
            return HttpResponseRedirect(reverse("tax:returns", args=[found.venue.pk]))
    raise PermissionDenied(_("The tax returns are for the venue's operator and inspector."))


@require_safe
@login_required
@never_cache
def returns_page(request: HttpRequest, venue_id: int) -> HttpResponse:
    venue = _venue(request, venue_id, *READERS)
    can_file = access.may_write(request.user, venue.pk, Role.OPERATOR)
    filed = returns.filed(venue)
    suggested = periods.last_closed(venue).label
    wanted = (request.GET.get("period") or "").strip().upper()
    context: dict[str, Any] = {
        "venue": venue,
        "can_file": can_file,
        "filed": filed,
        "period": wanted or suggested,
        "period_kind": periods.KINDS[periods.period_kind(venue.jurisdiction)],
        "error": request.GET.get("error", ""),
    }
    status = 200
    if wanted:
        found = returns.filed_one(venue, wanted)
        try:
            context["shown"] = shown(
                venue, found if found is not None else returns.compute_return(venue=venue, period=wanted)
            )
        except errors.DomainError as exc:
            context["error"], status = exc.message, exc.status
    response = staff_page(request, "tax/returns.html", staff_venues(request), **context)
    response.status_code = status
    return response


@require_POST
@login_required
def file_return(request: HttpRequest, venue_id: int) -> HttpResponse:
    venue = _venue(request, venue_id, Role.OPERATOR)
    period = request.POST.get("period", "")
    back = reverse("tax:returns", args=[venue.pk])
    try:
        filed = returns.file_return(venue=venue, period=period, actor=request.user)
    except errors.DomainError as exc:
        return HttpResponseRedirect(f"{back}?{urlencode({'period': period, 'error': exc.message})}")
    return HttpResponseRedirect(f"{back}?{urlencode({'period': filed.period})}")


def _found(request: HttpRequest, venue_id: int, period: str) -> tuple[Venue, TaxReturn | returns.Draft]:
    venue = _venue(request, venue_id, *READERS)
    found = returns.filed_one(venue, period)
    if found is not None:
        return venue, found
    try:
        return venue, returns.compute_return(venue=venue, period=period)
    except errors.DomainError as exc:
        raise Http404(exc.message) from exc


def _name(venue: Venue, period: str, draft: bool, extension: str) -> str:
    return f"impuesto-juego-{venue.licence_number}-{period}{'-borrador' if draft else ''}.{extension}"


@require_safe
@login_required
def return_csv(request: HttpRequest, venue_id: int, period: str) -> HttpResponse:
    """The CSV filed (byte for byte; its SHA-256 is the return's digest), or a draft's."""
    venue, found = _found(request, venue_id, period)
    draft = not isinstance(found, TaxReturn)
    response = HttpResponse(found.csv.encode("utf-8"), content_type="text/csv; charset=utf-8")
    label = found.period if isinstance(found, TaxReturn) else found.period.label
    response["Content-Disposition"] = f'attachment; filename="{_name(venue, label, draft, "csv")}"'
    return response


@require_safe
@login_required
def return_pdf(request: HttpRequest, venue_id: int, period: str) -> HttpResponse:
    venue, found = _found(request, venue_id, period)
    view = shown(venue, found)
    response = HttpResponse(pdf.return_pdf(view), content_type="application/pdf")
    name = _name(venue, view["period"], not view["filed"], "pdf")
    response["Content-Disposition"] = f'inline; filename="{name}"'
    return response
