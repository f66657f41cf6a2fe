"""What every print action of the cashier's API shares: the till it prints at, and its answer (the PDF
when the till has no printer, what was sent otherwise)."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.utils.translation import gettext
from rest_framework.request import Request
from rest_framework.response import Response

from halls.cashier.models import Shift, ShiftState, Till
from halls.cashier.services.printing import PrintResult
from halls.errors import Conflict, NotFound


def till_to_print_at(request: Request, venue_id: int, till_id: int | None) -> Till:
    """The named till of the venue, or the one of the person's open shift there."""
    if till_id is not None:
        till = Till.objects.filter(venue_id=venue_id, pk=till_id).first()
        if till is None:
            message = gettext("No till %(till)s in this venue.") % {"till": till_id}
            raise NotFound(message, code="unknown_till")
        return till
    shift = (
        Shift.objects.filter(venue_id=venue_id, cashier=request.user.pk, state=ShiftState.OPEN)
        .select_related("till")
        .first()
    )
    if shift is None:
        raise Conflict(
            gettext("You have no open shift: name the till to print at, or open a shift."),
            code="no_open_shift",
        )
    return shift.till


def printed_answer(result: PrintResult, filename: str, **extra: Any) -> HttpResponse:
    """The PDF inline (no printer at the till), or what went to the printer as JSON."""
    if result.medium == "pdf" and result.pdf is not None:
        response = HttpResponse(result.pdf, content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="{filename}"'
        return response
    return Response({"medium": result.medium, "printer": result.printer, **extra, "sha256": result.sha256})
