"""A gaming-tax return as an A4 landscape PDF (reportlab, Helvetica, as the project's other reports), in the
request's language: the venue, the period, the rate table's legal reference and rounding, the bases by game
type, the rates, the amount due, and the SHA-256 of the CSV it goes with."""

from __future__ import annotations

import io
from collections.abc import Sequence
from decimal import Decimal
from typing import Any
from xml.sax.saxutils import escape

from django.utils.translation import gettext as _
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from halls.i18n import amount

_STYLES = getSampleStyleSheet()
TITLE = ParagraphStyle("tax-title", parent=_STYLES["Title"], fontSize=15, spaceAfter=4)
BODY = ParagraphStyle("tax-body", parent=_STYLES["BodyText"], fontSize=9, leading=11)
SMALL = ParagraphStyle("tax-small", parent=BODY, fontSize=7.5, leading=9)


def _table(rows: Sequence[Sequence[str]]) -> Table:
    data = [[Paragraph(escape(str(c)), SMALL) for c in row] for row in rows]
    table = Table(data, repeatRows=1, hAlign="LEFT")
    table.setStyle(
        TableStyle(
            [
                ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8ecf2")),
                ("BACKGROUND", (0, -1), (-1, -1), colors.HexColor("#f3f5f8")),
                ("GRID", (0, 0), (-1, -1), 0.25, colors.HexColor("#9aa4b2")),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ]
        )
    )
    return table


def _money(text: str, *, exact: bool = False) -> str:
    return amount(Decimal(text), exact=exact) if text else "—"


def return_pdf(shown: dict[str, Any]) -> bytes:
    """``shown``: halls.tax.views.shown (a filed return, or a draft)."""
    venue = shown["venue"]
    rows: list[list[str]] = [
        [
            _("Game type"),
            _("Base taxed"),
            _("Played"),
            _("Prizes"),
            _("Drop"),
            _("Machines"),
            _("Taxable base"),
            _("Rate (%)"),
            _("Fee per machine"),
            _("Amount due"),
            _("Rounding remainder"),
        ]
    ]
    for line in shown["lines"]:
        rows.append(
            [
                line["game_type_label"],
                line["basis_label"],
                _money(line["played"]),
                _money(line["prizes"]),
                _money(line["drop"]),
                line["machines"],
                _money(line["base"]),
                line["rate_shown"] or "—",
                _money(line["fee_per_machine"]),
                _money(line["due"]),
                _money(line["remainder"], exact=True),
            ]
        )
    rows.append([_("Total due"), "", "", "", "", "", "", "", "", _money(shown["total_due"]), ""])
    if shown["filed"]:
        status = _("Filed on %(when)s by %(who)s.") % {"when": shown["filed_at"], "who": shown["filed_by"]}
    else:
        status = _("Draft: computed, not filed.")
    story: list[Flowable] = [
        Paragraph(escape(_("Gaming-tax return %(period)s") % {"period": shown["period"]}), TITLE),
        Paragraph(
            escape(
                _("%(venue)s (licence %(licence)s), %(jurisdiction)s, from %(first)s to %(last)s")
                % {
                    "venue": venue.name,
                    "licence": venue.licence_number,
                    "jurisdiction": shown["jurisdiction_label"],
                    "first": shown["first_day"].isoformat(),
                    "last": shown["last_day"].isoformat(),
                }
            ),
            BODY,
        ),
        Paragraph(
            escape(
                _("Rate table: %(reference)s. Rounding: %(rounding)s, line by line.")
                % {"reference": shown["reference"], "rounding": shown["rounding_label"]}
            ),
            BODY,
        ),
        Spacer(1, 4 * mm),
        _table(rows),
        Spacer(1, 4 * mm),
        Paragraph(escape(status), BODY),
        Paragraph(escape(_("SHA-256 of the CSV: %(digest)s") % {"digest": shown["digest"]}), SMALL),
    ]
    out = io.BytesIO()
    SimpleDocTemplate(
        out,
        pagesize=landscape(A4),
        leftMargin=10 * mm,
        rightMargin=10 * mm,
        topMargin=10 * mm,
        bottomMargin=10 * mm,
        title=_("Gaming-tax return %(period)s") % {"period": shown["period"]},
    ).build(story)
    return out.getvalue()
