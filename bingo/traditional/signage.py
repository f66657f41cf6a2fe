"""The posted signage of a prize program: the printable prize table for the hall's wall (A4 portrait PDF,
reportlab, Helvetica, in the request's language).

It is printed FROM A PROPOSAL's terms (bingo.traditional.programs.terms) before the program is in force:
the program, its room and hall, every parameter as proposed, the rule it follows, a QR code linking to the
public page of these terms and their digest in groups of four. The second person approves with the digest
read on the posted sheet (typed or scanned), so what hangs on the wall is what is activated.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any
from xml.sax.saxutils import escape

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from reportlab.graphics.barcode.qr import QrCodeWidget
from reportlab.graphics.shapes import Drawing
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from bingo.traditional.programs import terms as program_terms
from bingo.traditional.programs.regulation import ProgramType
from bingo.traditional.programs.rules import PROGRAM_TYPES
from halls import i18n

QR_SIDE = 45 * mm
_STYLES = getSampleStyleSheet()
TITLE = ParagraphStyle("sign-title", parent=_STYLES["Title"], fontSize=22, leading=26, spaceAfter=6)
H2 = ParagraphStyle("sign-h2", parent=_STYLES["Heading2"], fontSize=13, spaceBefore=10, spaceAfter=4)
BODY = ParagraphStyle("sign-body", parent=_STYLES["BodyText"], fontSize=11, leading=14)
DIGEST = ParagraphStyle("sign-digest", parent=BODY, fontName="Courier-Bold", fontSize=12, leading=16)
SMALL = ParagraphStyle("sign-small", parent=BODY, fontSize=8, leading=10)

# The parameters a person reads on the wall (bingo.traditional.programs.rules' names).
PARAM_LABELS: Mapping[str, Any] = {
    "authorisation_ref": gettext_lazy("Authorisation"),
    "funding_percent": gettext_lazy("Funding (% of the cards sold)"),
    "amount": gettext_lazy("Prize amount"),
    "prima_levels": gettext_lazy("Prima levels"),
    "ball_limit": gettext_lazy("Won up to ball"),
    "pays": gettext_lazy("Paid with"),
    "extraction_order": gettext_lazy("Won up to ball"),
    "extraction_floor": gettext_lazy("Lowest ball order"),
    "scale": gettext_lazy("Ball scale"),
    "carry_percent": gettext_lazy("Carried over (%)"),
    "hours": gettext_lazy("Scheduled hours"),
    "ba6_profile": gettext_lazy("Profile"),
    "extrapolation": gettext_lazy("Extrapolation"),
    "fixed_step": gettext_lazy("Fixed step"),
    "missed_slot": gettext_lazy("A missed hour"),
    "colour": gettext_lazy("Colour"),
    "colours": gettext_lazy("Colours"),
}


MONEY_PARAMS = frozenset({"amount"})  # shown as money ("30,00 €"); the rest as proposed


def _value(name: str, value: Any, currency: str) -> str:
    if name in MONEY_PARAMS and isinstance(value, str | int | float):
        try:
            return i18n.amount(Decimal(str(value)), currency)
        except InvalidOperation:
            return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str | int) for v in value):
        return ", ".join(str(v) for v in value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _qr(payload: str) -> Drawing:
    widget = QrCodeWidget(payload, barLevel="M", barBorder=2)  # M: 15 % of the symbol may be lost
    x0, y0, x1, y1 = widget.getBounds()
    drawing = Drawing(QR_SIDE, QR_SIDE, transform=[QR_SIDE / (x1 - x0), 0, 0, QR_SIDE / (y1 - y0), 0, 0])
    drawing.add(widget)
    return drawing


def shown_params(params: Mapping[str, Any], currency: str) -> list[tuple[str, str]]:
    """The parameters as people read them (label, value), as the sheet and the public page show them."""
    return [
        (str(PARAM_LABELS.get(name, name)), _value(name, value, currency))
        for name, value in sorted(params.items())
    ]


def _params_table(params: Mapping[str, Any], currency: str) -> Table:
    rows = [
        [Paragraph(escape(label), BODY), Paragraph(escape(value), BODY)]
        for label, value in shown_params(params, currency)
    ]
    table = Table(rows, colWidths=[70 * mm, 100 * mm], hAlign="LEFT")
    table.setStyle(
        TableStyle(
            [
                ("GRID", (0, 0), (-1, -1), 0.5, colors.HexColor("#9aa4b2")),
                ("BACKGROUND", (0, 0), (0, -1), colors.HexColor("#e8ecf2")),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ]
        )
    )
    return table


def prize_table_pdf(
    *,
    terms: Mapping[str, Any],
    digest: str,
    url: str,
    venue: str,
    room: str,
    proposal: int,
    currency: str = "EUR",
) -> bytes:
    """The prize table of the program these `terms` put in force; `url` is the public page of the terms
    (the QR code's payload) and `digest` their digest (printed in groups of four)."""
    info = PROGRAM_TYPES[ProgramType(terms["program_type"])]
    starts = terms.get("effective_from")
    story: list[Flowable] = [
        Paragraph(escape(str(terms["name"])), TITLE),
        Paragraph(
            escape(
                _("%(label)s · %(room)s, %(venue)s") % {"label": info.label, "room": room, "venue": venue}
            ),
            BODY,
        ),
        Paragraph(escape(_("Rule: %(citation)s") % {"citation": info.citation}), SMALL),
        Paragraph(
            escape(
                _("In force from %(start)s.") % {"start": starts}
                if starts
                else _("In force from its approval.")
            ),
            BODY,
        ),
        Spacer(1, 4 * mm),
        Paragraph(escape(_("Prize terms")), H2),
        _params_table(terms["params"], currency),
        Spacer(1, 6 * mm),
        Paragraph(escape(_("Check these terms")), H2),
        Paragraph(
            escape(
                _(
                    "Scan the code to read these terms on the hall's public page. The hall's screens show "
                    "the first two groups of the digest of the program in force: %(short)s."
                )
                % {"short": program_terms.short(digest)}
            ),
            BODY,
        ),
        Spacer(1, 3 * mm),
        _qr(url),
        Spacer(1, 3 * mm),
        Paragraph(escape(_("Digest (SHA-256) of the terms:")), BODY),
        Paragraph(escape(program_terms.grouped(digest)), DIGEST),
        Spacer(1, 2 * mm),
        Paragraph(escape(url), SMALL),
        Paragraph(escape(_("Proposal no. %(id)s") % {"id": proposal}), SMALL),
    ]
    out = io.BytesIO()
    SimpleDocTemplate(
        out,
        pagesize=A4,
        leftMargin=18 * mm,
        rightMargin=18 * mm,
        topMargin=16 * mm,
        bottomMargin=14 * mm,
        title=_("Prize table"),
    ).build(story)
    return out.getvalue()
