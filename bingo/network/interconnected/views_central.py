"""The central's network pages: the network prizes and their live meters, the simultaneous games, and the
reports per venue, region or operator (with their CSV). Thin doors (DESIGN §3): login, the role check,
one read service (`services.central_overview`, `services.reports`), render. Nothing here writes.

Only at the central (HALL_ROLE=central: 404 at a venue installation), for the central's operators (the
operator role in any of its venues, or a superuser); anyone else is refused (403).
"""

from __future__ import annotations

import csv
from datetime import date

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache

from bingo.network.interconnected.services import central_overview, reports
from halls import access, errors
from halls.models import Role

METER_POLL_SECONDS = 3
GAMES_REFRESH_SECONDS = 5


def _require_central_operator(request: HttpRequest) -> None:
    if getattr(settings, "HALL_ROLE", "venue") != "central":
        raise Http404(gettext("The network pages are the central's."))
    user = request.user
    if not any(Role.OPERATOR in held for _, held in access.roles_in_each(user)):  # one query
        raise PermissionDenied(gettext("The network pages need the operator role."))


@login_required
@never_cache
def pools(request: HttpRequest) -> HttpResponse:
    _require_central_operator(request)
    games = [g for g in central_overview.network_games() if g.in_progress]
    return render(
        request,
        "bingo_network/central_pools.html",
        {
            "prizes": central_overview.network_prizes(),
            "games": games,
            "poll_seconds": METER_POLL_SECONDS,
            "now": timezone.now(),
        },
    )


@login_required
@never_cache
def pool_meters(request: HttpRequest) -> JsonResponse:
    """The live meters the pools page polls: {prize code: {amount, currency}}."""
    _require_central_operator(request)
    return JsonResponse({"meters": central_overview.live_meters(), "at": timezone.now().isoformat()})


@login_required
@never_cache
def games(request: HttpRequest) -> HttpResponse:
    _require_central_operator(request)
    return render(
        request,
        "bingo_network/central_games.html",
        {
            "games": central_overview.network_games(),
            "refresh_seconds": GAMES_REFRESH_SECONDS,
            "now": timezone.now(),
        },
    )


class ReportForm(forms.Form):
    date_from = forms.DateField(label=_("From"), widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(label=_("To"), widget=forms.DateInput(attrs={"type": "date"}))
    by = forms.ChoiceField(
        label=_("Grouped by"),
        choices=[(g.value, reports.GROUP_LABELS[g]) for g in reports.GroupBy],
    )


def _report_form(request: HttpRequest) -> ReportForm:
    today = timezone.localdate()
    data = {
        "date_from": request.GET.get("date_from") or date(today.year, today.month, 1).isoformat(),
        "date_to": request.GET.get("date_to") or today.isoformat(),
        "by": request.GET.get("by") or reports.GroupBy.VENUE.value,
    }
    return ReportForm(data)


def _report(form: ReportForm) -> reports.Report | None:
    if not form.is_valid():
        return None
    try:
        return reports.network_report(
            group_by=reports.GroupBy(form.cleaned_data["by"]),
            date_from=form.cleaned_data["date_from"],
            date_to=form.cleaned_data["date_to"],
        )
    except errors.InvalidInput as exc:
        form.add_error(None, exc.message)
        return None


@login_required
@never_cache
def report(request: HttpRequest) -> HttpResponse:
    _require_central_operator(request)
    form = _report_form(request)
    found = _report(form)
    return render(
        request,
        "bingo_network/central_report.html",
        {
            "form": form,
            "report": found,
            "group_label": reports.GROUP_LABELS[found.group_by] if found else "",
            "query": request.GET.urlencode(),
        },
        status=200 if found is not None else 400,
    )


@login_required
@never_cache
def report_csv(request: HttpRequest) -> HttpResponse:
    _require_central_operator(request)
    form = _report_form(request)
    found = _report(form)
    if found is None:
        return HttpResponse(
            "; ".join(str(e) for errs in form.errors.values() for e in errs),
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = f"network-{found.group_by}-{found.date_from.isoformat()}-{found.date_to.isoformat()}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    writer = csv.writer(response)
    writer.writerows(reports.csv_rows(found))
    return response
