"""The compliance report as an A4 landscape PDF (reportlab, Helvetica), in the request's language: the
venue, the days, the payouts tied to a person (with the identification recorded at the cage) and the
flags. Built from halls.cage.services.readmodels.csv_rows, so the PDF and the CSV say the same."""

from __future__ import annotations

import io
from collections.abc import Sequence
from xml.sax.saxutils import escape

from django.utils.translation import gettext as _
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from halls.cage.services.readmodels import Compliance, csv_rows

_STYLES = getSampleStyleSheet()
TITLE = ParagraphStyle("cage-title", parent=_STYLES["Title"], fontSize=15, spaceAfter=4)
H2 = ParagraphStyle("cage-h2", parent=_STYLES["Heading2"], fontSize=11, spaceBefore=8, spaceAfter=4)
BODY = ParagraphStyle("cage-body", parent=_STYLES["BodyText"], fontSize=9, leading=11)
SMALL = ParagraphStyle("cage-small", parent=BODY, fontSize=7, leading=8.5)


def _table(rows: Sequence[Sequence[str]]) -> Table:
    data = [[Paragraph(escape(str(c)), SMALL) for c in row] for row in rows]
    table = Table(data, repeatRows=1, hAlign="LEFT")
    table.setStyle(
        TableStyle(
            [
                ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8ecf2")),
                ("GRID", (0, 0), (-1, -1), 0.25, colors.HexColor("#9aa4b2")),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ]
        )
    )
    return table


def compliance_pdf(report: Compliance) -> bytes:
    rows = csv_rows(report)
    gap = rows.index([])
    payouts, flags = rows[:gap], rows[gap + 1 :]
    venue = report.venue
    story: list[Flowable] = [
        Paragraph(escape(_("Anti-money-laundering report")), TITLE),
        Paragraph(
            escape(
                _("%(venue)s (licence %(licence)s), from %(first)s to %(last)s")
                % {
                    "venue": venue.name,
                    "licence": venue.licence_number,
                    "first": report.first.isoformat(),
                    "last": report.last.isoformat(),
                }
            ),
            BODY,
        ),
        Spacer(1, 4 * mm),
        Paragraph(escape(_("Payouts tied to a person")), H2),
        _table(payouts) if len(payouts) > 1 else Paragraph(escape(_("No payout in these days.")), BODY),
        Paragraph(escape(_("Flags")), H2),
        _table(flags) if len(flags) > 1 else Paragraph(escape(_("No flag in these days.")), BODY),
    ]
    out = io.BytesIO()
    SimpleDocTemplate(
        out,
        pagesize=landscape(A4),
        leftMargin=10 * mm,
        rightMargin=10 * mm,
        topMargin=10 * mm,
        bottomMargin=10 * mm,
        title=_("Anti-money-laundering report"),
    ).build(story)
    return out.getvalue()
