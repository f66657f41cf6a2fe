"""Staff pages of the cashier: the printable shift report.

Thin doors: login required, the cashier role in the shift's venue (another venue's shift is a 404), the
figures from halls.cashier.services.shift_report, rendered."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from halls import access, errors
from halls.cashier.models import Shift
from halls.cashier.services.shift_report import shift_report, when
from halls.models import Role
from halls.templatetags.hall_money import money as page_money


@login_required
def shift_report_page(request: HttpRequest, shift_id: int) -> HttpResponse:
    try:
        shift = access.get_for_user(
            Shift.objects.select_related("venue", "till", "cashier", "witness"),
            request.user,
            Role.CASHIER,
            label="shift",
            pk=shift_id,
        )
    except errors.NotFound as exc:
        raise Http404(exc.message) from exc
    except errors.PermissionDenied as exc:
        raise PermissionDenied(exc.message) from exc
    report = shift_report(shift)
    currency = shift.venue.currency

    def amount(value: Decimal | None) -> str:
        """As the pages write it (the |money filter): "1.234,50 €" in Spanish, "€1,234.50" in English."""
        return "" if value is None else page_money(value, currency)

    cash_up = [
        {
            "label": label,
            "expected": amount(report.expected[code]),
            "counted": amount(report.counted[code]) if report.counted else "",
            "difference": amount(report.differences[code]) if report.differences else "",
            "short": bool(report.differences and report.differences[code] < 0),
        }
        for code, label in report.means
    ]
    totals = [
        {
            "label": t.label,
            "count": t.count,
            "amount": amount(t.amount),
            "drawer": [amount(t.drawer[code]) if t.drawer[code] else "" for code, _label in report.means],
        }
        for t in report.totals
    ]
    prizes = [
        {"label": p.label, "method": p.method_label, "count": p.count, "amount": amount(p.amount)}
        for p in report.prizes
    ]
    return render(
        request,
        "cashier/shift_report.html",
        {
            "shift": shift,
            "report": report,
            "opened": when(shift, shift.opened_at),
            "closed": when(shift, shift.closed_at),
            "float": amount(shift.float_amount),
            "difference": amount(report.difference),
            "totals": totals,
            "prizes": prizes,
            "cash_up": cash_up,
            "means": [label for _code, label in report.means],
        },
    )
