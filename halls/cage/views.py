"""The AML officer's compliance page: the payouts tied to a person (with the identification recorded at the
cage) and the flags of a date range, its CSV and PDF, and the operator's review of a flag.

Thin doors: login required; the operator or the inspector of the venue read (another venue is a 404), the
operator reviews (halls.cage.services.flags); the lists from halls.cage.services.readmodels."""

from __future__ import annotations

import csv
from datetime import date, timedelta

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from halls import access, errors
from halls.cage import pdf
from halls.cage.services import flags, readmodels
from halls.cage.services.rules import rules_for
from halls.models import Role, Venue
from halls.services import venueclock
from halls.staff_pages import staff_page, staff_venues

READERS = (Role.OPERATOR, Role.INSPECTOR)
DEFAULT_DAYS = 7


def _venue(request: HttpRequest, venue_id: int, *roles: str) -> Venue:
    try:
        return access.venue_for(request.user, venue_id, *roles)
    except errors.NotFound as exc:
        raise Http404(exc.message) from exc
    except errors.PermissionDenied as exc:
        raise PermissionDenied(exc.message) from exc


def _days(request: HttpRequest, venue: Venue) -> tuple[date, date]:
    """The page's days: ?from=&to= (YYYY-MM-DD), by default the venue's last seven days."""
    today = venueclock.today(venue)
    try:
        last = date.fromisoformat(request.GET["to"]) if request.GET.get("to") else today
        first = (
            date.fromisoformat(request.GET["from"])
            if request.GET.get("from")
            else last - timedelta(days=DEFAULT_DAYS - 1)
        )
    except ValueError as exc:
        raise errors.InvalidInput(_("Dates are written YYYY-MM-DD."), code="bad_date") from exc
    return readmodels.checked_days(first, last)


@require_safe
@login_required
def compliance_home(request: HttpRequest) -> HttpResponse:
    """The first venue the user reads the compliance of."""
    for found in staff_venues(request):
        if found.is_operator or found.can_inspect:
            return HttpResponseRedirect(reverse("cage:compliance", args=[found.venue.pk]))
    raise PermissionDenied(_("The compliance page is for the venue's operator and inspector."))


@require_safe
@login_required
@never_cache
def compliance_page(request: HttpRequest, venue_id: int) -> HttpResponse:
    venue = _venue(request, venue_id, *READERS)
    venues = staff_venues(request)
    can_review = Role.OPERATOR in access.roles_in(request.user, venue.pk) and not access.inspects(
        request.user, venue.pk
    )
    try:
        first, last = _days(request, venue)
    except errors.InvalidInput as exc:
        response = staff_page(
            request, "cage/compliance.html", venues, venue=venue, error=exc.message, query=request.GET
        )
        response.status_code = 400
        return response
    report = readmodels.compliance(venue, first, last)
    query = urlencode({"from": first.isoformat(), "to": last.isoformat()})
    return staff_page(
        request,
        "cage/compliance.html",
        venues,
        venue=venue,
        report=report,
        query=request.GET,
        days=query,
        can_review=can_review,
        threshold=rules_for(venue.jurisdiction).threshold,
    )


def _file(request: HttpRequest, venue_id: int) -> tuple[Venue, readmodels.Compliance | HttpResponse]:
    venue = _venue(request, venue_id, *READERS)
    try:
        first, last = _days(request, venue)
    except errors.InvalidInput as exc:
        return venue, HttpResponse(exc.message, status=400, content_type="text/plain; charset=utf-8")
    return venue, readmodels.compliance(venue, first, last)


def _name(venue: Venue, report: readmodels.Compliance, extension: str) -> str:
    return f"blanqueo-{venue.licence_number}-{report.first}-{report.last}.{extension}"


@require_safe
@login_required
def compliance_csv(request: HttpRequest, venue_id: int) -> HttpResponse:
    venue, report = _file(request, venue_id)
    if isinstance(report, HttpResponse):
        return report
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{_name(venue, report, "csv")}"'
    csv.writer(response).writerows(readmodels.csv_rows(report))
    return response


@require_safe
@login_required
def compliance_pdf(request: HttpRequest, venue_id: int) -> HttpResponse:
    venue, report = _file(request, venue_id)
    if isinstance(report, HttpResponse):
        return report
    response = HttpResponse(pdf.compliance_pdf(report), content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{_name(venue, report, "pdf")}"'
    return response


@require_POST
@login_required
def review_flag(request: HttpRequest, venue_id: int, flag_id: int) -> HttpResponse:
    venue = _venue(request, venue_id, Role.OPERATOR)
    back = reverse("cage:compliance", args=[venue.pk])
    days = request.POST.get("days", "")
    try:
        flags.review_flag(
            venue_id=venue.pk,
            flag_id=flag_id,
            note=request.POST.get("note", ""),
            actor=request.user,  # type: ignore[arg-type]
        )
    except errors.DomainError as exc:
        return HttpResponseRedirect(f"{back}?{days}&{urlencode({'error': exc.message})}")
    return HttpResponseRedirect(f"{back}?{days}#flag-{flag_id}")
