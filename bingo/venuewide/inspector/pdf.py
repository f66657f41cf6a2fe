"""The inspector's records as A4 PDFs (reportlab, Helvetica: no system fonts), in the request's language:
a session's minutes, a game's record, the statistics. Built from bingo.venuewide.records' data."""

from __future__ import annotations

import io
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from xml.sax.saxutils import escape
from zoneinfo import ZoneInfo

from django.utils import formats
from django.utils.translation import gettext as _
from django.utils.translation import pgettext
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import (
    Flowable,
    KeepTogether,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)

from bingo.venuewide.records import Statistics
from halls import i18n
from halls.cashier.models import PayableState

_STYLES = getSampleStyleSheet()
TITLE = ParagraphStyle("title", parent=_STYLES["Title"], fontSize=16, spaceAfter=4)
H2 = ParagraphStyle("h2", parent=_STYLES["Heading2"], fontSize=12, spaceBefore=8, spaceAfter=4)
BODY = ParagraphStyle("body", parent=_STYLES["BodyText"], fontSize=9, leading=11)
SMALL = ParagraphStyle("small", parent=BODY, fontSize=8, leading=9.5)


def time_text(value: datetime | None, zone: str) -> str:
    if value is None:
        return "—"
    return formats.date_format(value.astimezone(ZoneInfo(zone)), "SHORT_DATETIME_FORMAT")


def _day(value: date) -> str:
    return formats.date_format(value, "SHORT_DATE_FORMAT")


def licence_text(number: str) -> str:
    return _("licence %(number)s") % {"number": number}


def _p(text: Any, style: ParagraphStyle = SMALL) -> Paragraph:
    return Paragraph(escape(str(text)), style)


def _table(
    header: Sequence[str], rows: Sequence[Sequence[Any]], widths: Sequence[float] | None = None
) -> Table:
    data = [[_p(h) for h in header], *[[_p(c) for c in row] for row in rows]]
    table = Table(data, colWidths=widths, repeatRows=1, hAlign="LEFT")
    table.setStyle(
        TableStyle(
            [
                ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8ecf2")),
                ("GRID", (0, 0), (-1, -1), 0.25, colors.HexColor("#9aa4b2")),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("TOPPADDING", (0, 0), (-1, -1), 2),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
            ]
        )
    )
    return table


def _pairs(rows: Sequence[tuple[str, Any]]) -> Table:
    table = Table([[_p(k, BODY), _p(v, BODY)] for k, v in rows], colWidths=[55 * mm, 115 * mm], hAlign="LEFT")
    table.setStyle(TableStyle([("VALIGN", (0, 0), (-1, -1), "TOP"), ("TOPPADDING", (0, 0), (-1, -1), 1)]))
    return table


def _build(story: list[Flowable], title: str, *, wide: bool = False) -> bytes:
    out = io.BytesIO()
    size = landscape(A4) if wide else A4

    def footer(canvas: Any, doc: Any) -> None:
        canvas.saveState()
        canvas.setFont("Helvetica", 7)
        canvas.drawString(15 * mm, 8 * mm, title)
        canvas.drawRightString(size[0] - 15 * mm, 8 * mm, _("Page %(page)s") % {"page": doc.page})
        canvas.restoreState()

    doc = SimpleDocTemplate(
        out,
        pagesize=size,
        leftMargin=15 * mm,
        rightMargin=15 * mm,
        topMargin=15 * mm,
        bottomMargin=15 * mm,
        title=title,
        author=_("Bingo hall"),
    )
    doc.build(story, onFirstPage=footer, onLaterPages=footer)
    return out.getvalue()


def minutes_pdf(minutes: dict[str, Any]) -> bytes:
    session, venue, room, tz = minutes["session"], minutes["venue"], minutes["room"], minutes["time_zone"]
    title = _("Session minutes %(session)s · %(room)s · %(venue)s") % {
        "session": session.pk,
        "room": room.name,
        "venue": venue.name,
    }
    totals = minutes["totals"]
    story: list[Flowable] = [
        Paragraph(escape(_("Session minutes")), TITLE),
        _pairs(
            [
                (_("Establishment"), f"{venue.name} · {licence_text(venue.licence_number)}"),
                (_("Room"), room.name),
                (_("Session"), session.pk),
                (_("Opened"), f"{time_text(session.opened_at, tz)} · {session.opened_by.get_username()}"),
                (
                    _("Closed"),
                    f"{time_text(session.closed_at, tz)} · {session.closed_by.get_username()}"
                    if session.closed_at and session.closed_by
                    else _("Still open"),
                ),
                (_("Time zone"), tz),
            ]
        ),
        Paragraph(escape(_("Opening checks")), H2),
        _table(
            [_("Check"), _("Result"), _("Checked by"), _("At"), _("Note")],
            [
                (c["label"], c["result"], c["by"], time_text(c["at"], tz), c["note"] or "—")
                for c in minutes["checks"]
            ],
        )
        if minutes["checks"]
        else _p(_("No check recorded."), BODY),
        Paragraph(escape(_("Inspection draw (90 balls, in the order drawn)")), H2),
        _p(" ".join(str(n) for n in minutes["inspection_balls"]), BODY),
        Paragraph(escape(_("Games")), H2),
        _table(
            [
                _("Game"),
                _("State"),
                _("Device"),
                _("Ball set"),
                _("Sales closed"),
                _("Closed"),
                _("Cards sold"),
                _("Amount played"),
                _("Line"),
                _("Bingo"),
                _("Balls"),
                _("Prizes paid"),
            ],
            [
                (
                    g["number"],
                    g["state_label"],
                    g["device"],
                    g["ball_set"] or "—",
                    time_text(g["sales_closed_at"], tz),
                    time_text(g["closed_at"], tz),
                    g["cards_sold"],
                    i18n.amount(g["sales_total"]),
                    i18n.amount(g["line_prize"]),
                    i18n.amount(g["bingo_prize"]),
                    g["balls_drawn"],
                    i18n.amount(g["paid"]),
                )
                for g in minutes["games"]
            ],
        ),
        Spacer(1, 3 * mm),
        _pairs(
            [
                (
                    _("Games"),
                    _("%(games)s games: %(played)s played, %(void)s void")
                    % {"games": totals["games"], "played": totals["played"], "void": totals["void"]},
                ),
                (_("Cards sold"), totals["cards_sold"]),
                (_("Amount played"), i18n.amount(totals["sales_total"])),
                (_("Prizes paid"), i18n.amount(totals["paid"])),
            ]
        ),
        Paragraph(escape(_("Sales")), H2),
    ]
    sales = [
        (
            g["number"],
            s["kind_label"],
            s["series"],
            f"{s['first']}–{s['last']}",
            s["cards"],
            i18n.amount(s["amount"]),
            s["cashier"],
            time_text(s["at"], tz),
        )
        for g in minutes["games"]
        for s in g["sales"]
    ]
    story.append(
        _table(
            [
                _("Game"),
                _("Operation"),
                _("Series"),
                _("Cards"),
                _("Count"),
                _("Amount"),
                _("Sold by"),
                _("At"),
            ],
            sales,
        )
        if sales
        else _p(_("No sales."), BODY)
    )
    story.append(Paragraph(escape(_("Prizes")), H2))
    prizes = [
        (
            g["number"],
            p["kind"],
            p["ordinal"] or "—",
            i18n.amount(p["amount"]),
            ", ".join(p["winners"]),
            i18n.amount(p["share"]),
            p["confirmed_by"] or "—",
            time_text(p["confirmed_at"], tz),
        )
        for g in minutes["games"]
        for p in g["prizes"]
    ]
    story.append(
        _table(
            [
                _("Game"),
                _("Prize"),
                _("Ball"),
                _("Amount"),
                _("Winning cards"),
                _("Share"),
                _("Confirmed by"),
                _("At"),
            ],
            prizes,
        )
        if prizes
        else _p(_("No prizes."), BODY)
    )
    story.append(Paragraph(escape(_("Incidents")), H2))
    incidents = [
        (time_text(i["at"], tz), i["game"] or "—", i["who"] or "—", i["what"]) for i in minutes["incidents"]
    ]
    story.append(
        _table([_("At"), _("Game"), _("Who"), _("What")], incidents, [32 * mm, 14 * mm, 28 * mm, 106 * mm])
        if incidents
        else _p(_("No incidents."), BODY)
    )
    story.append(Paragraph(escape(_("Who did what")), H2))
    story.append(
        _table(
            [_("At"), _("Who"), _("Game"), _("What")],
            [(time_text(e["at"], tz), e["actor"], e["game"] or "—", e["label"]) for e in minutes["log"]],
            [32 * mm, 28 * mm, 14 * mm, 106 * mm],
        )
    )
    return _build(story, title)


def record_pdf(record: dict[str, Any]) -> bytes:
    tz = record["time_zone"]
    title = _("Game %(number)s record · %(room)s · %(venue)s") % {
        "number": record["number"],
        "room": record["room"],
        "venue": record["venue"],
    }
    ball_set = record["ball_set"]
    story: list[Flowable] = [
        Paragraph(escape(_("Game record")), TITLE),
        _pairs(
            [
                (_("Establishment"), record["venue"]),
                (_("Room"), record["room"]),
                (_("Session"), record["session"]),
                (_("Game"), record["number"]),
                (_("State"), record["state_label"]),
                (_("Device"), record["device"]),
                (
                    _("Ball set"),
                    _("%(name)s (%(played)s of %(certified)s certified games)")
                    % {
                        "name": ball_set["name"],
                        "played": ball_set["games_played"],
                        "certified": ball_set["certified_games"],
                    }
                    if ball_set
                    else _("None recorded"),
                ),
                (_("Created"), time_text(record["created_at"], tz)),
                (_("Sales closed"), time_text(record["sales_closed_at"], tz)),
                (_("Draw started"), time_text(record["draw_started_at"], tz)),
                (_("Closed"), time_text(record["closed_at"], tz)),
                (_("Cards sold"), record["cards_sold"]),
                (_("Amount played"), i18n.amount(record["sales_total"])),
                (_("Line prize"), i18n.amount(record["line_prize"])),
                (_("Bingo prize"), i18n.amount(record["bingo_prize"])),
                (_("Rounding kept by the house"), i18n.amount(record["prize_rounding_residue"], exact=True)),
                (_("Sales announcement"), (record["announcement"] or {}).get("formula", "—")),
                *([(_("Void reason"), record["void_reason"])] if record.get("void_reason") else []),
            ]
        ),
        Paragraph(escape(_("Sales")), H2),
    ]
    story.append(
        _table(
            [_("Operation"), _("Series"), _("Cards"), _("Count"), _("Amount"), _("Sold by"), _("At")],
            [
                (
                    s["kind_label"],
                    s["series"],
                    f"{s['first']}–{s['last']}",
                    s["cards"],
                    i18n.amount(s["amount"]),
                    s["cashier"],
                    time_text(s["at"], tz),
                )
                for s in record["sale_operations"]
            ],
        )
        if record["sale_operations"]
        else _p(_("No sales."), BODY)
    )
    story.append(Paragraph(escape(_("Balls in the order drawn")), H2))
    balls = [
        (
            b["ordinal"],
            b["ball"],
            b["colour_label"] or "—",
            time_text(b["drawn_at"], tz),
            b["corrected_from"] or "",
        )
        for b in record["balls"]
    ]
    story.append(
        _table([_("Order"), _("Ball"), _("Colour"), _("Drawn at"), _("Corrected from")], balls)
        if balls
        else _p(_("No balls drawn."), BODY)
    )
    story.append(Paragraph(escape(_("Claims and verifications")), H2))
    story.append(
        _table(
            [_("At"), _("Prize"), _("Claimed card"), _("Ball"), _("Result"), _("Reason"), _("Verified by")],
            [
                (
                    time_text(c["created_at"], tz),
                    c["kind_label"],
                    f"{c['series']} #{c['serial']}",
                    c["bound_ordinal"],
                    pgettext("claim", "Valid") if c["valid"] else _("Refused"),
                    c["reason_label"],
                    c["claimed_by"],
                )
                for c in record["claims"]
            ],
            [30 * mm, 14 * mm, 18 * mm, 11 * mm, 16 * mm, 63 * mm, 28 * mm],
        )
        if record["claims"]
        else _p(_("No claims."), BODY)
    )
    story.append(Paragraph(escape(_("Prizes and who confirmed them")), H2))
    story.append(
        _table(
            [
                _("Prize"),
                _("Ball"),
                _("Amount"),
                _("Winners"),
                _("Share"),
                _("Remainder"),
                _("Confirmed by"),
                _("At"),
            ],
            [
                (
                    p["kind_label"],
                    p["ordinal"],
                    i18n.amount(p["amount"]),
                    ", ".join(p["cards"]),
                    i18n.amount(p["share"]),
                    f"{i18n.amount(p['remainder'])} → {p['remainder_to']}",
                    p["confirmed_by"],
                    time_text(p["confirmed_at"], tz),
                )
                for p in record["confirmations"]
            ],
        )
        if record["confirmations"]
        else _p(_("No prizes."), BODY)
    )
    programs = record.get("programs") or []
    if programs:
        story.append(Paragraph(escape(_("Accumulated prizes in play")), H2))
        story.append(
            _table(
                [_("Prize"), _("Amount"), _("Max ball"), _("Won?")],
                [
                    (
                        p.get("name", p.get("code", "")),
                        i18n.amount(Decimal(str(p["amount"]))) if p.get("amount") is not None else "—",
                        p.get("max_ball") or "—",
                        {True: _("Yes"), False: _("No")}.get(p.get("won"), "—"),
                    )
                    for p in programs
                ],
            )
        )
    story.append(Paragraph(escape(_("Payments at the cashier")), H2))
    story.append(
        _table(
            [_("Prize"), _("Claimed card"), _("Amount"), _("Payment")],
            [
                (
                    p["prize_label"],
                    f"{p['series']} #{p['serial']}",
                    i18n.amount(p["amount"]),
                    _payout_text(p["payout"], tz),
                )
                for p in record["payouts"]
            ],
        )
        if record["payouts"]
        else _p(_("No payments."), BODY)
    )
    story.append(Paragraph(escape(_("Ball corrections")), H2))
    story.append(
        _table(
            [_("Ball"), _("From"), _("To"), _("Why"), _("Who"), _("At")],
            [
                (
                    c["ordinal"],
                    c["old"],
                    c["new"],
                    c["reason"],
                    c["corrected_by"],
                    time_text(c["corrected_at"], tz),
                )
                for c in record["ball_corrections"]
            ],
        )
        if record["ball_corrections"]
        else _p(_("No corrections."), BODY)
    )
    story.append(Paragraph(escape(_("Switches to another drawing device")), H2))
    story.append(
        _table(
            [_("At"), _("Who"), _("What")],
            [(time_text(e["switched_at"], tz), e["switched_by"], e["text"]) for e in record["switches"]],
            [32 * mm, 28 * mm, 120 * mm],
        )
        if record["switches"]
        else _p(_("No switch to the reserve device was recorded."), BODY)
    )
    story.append(Paragraph(escape(_("Ball set incidents")), H2))
    story.append(
        _table(
            [_("At"), _("Who"), _("What")],
            [
                (time_text(e["recorded_at"], tz), e["recorded_by"], e["text"])
                for e in record["ball_set_notes"]
            ],
            [32 * mm, 28 * mm, 120 * mm],
        )
        if record["ball_set_notes"]
        else _p(_("No incident of the ball set was recorded."), BODY)
    )
    return _build([KeepTogether(story[:2]), *story[2:]], title)


def _payout_text(payout: dict[str, Any] | None, tz: str) -> str:
    if not payout:
        return "—"
    parts = [str(PayableState(payout["state"]).label)]
    if payout.get("paid_at"):
        parts.append(time_text(payout["paid_at"], tz))
    if payout.get("paid_by"):
        parts.append(str(payout["paid_by"]))
    return " · ".join(p for p in parts if p)


def period_text(report: Statistics, period: date | None) -> str:
    if period is None:
        return _("Total")
    return formats.date_format(
        period, "YEAR_MONTH_FORMAT" if report.period == "month" else "SHORT_DATE_FORMAT"
    )


def statistics_pdf(report: Statistics) -> bytes:
    kind = _("Monthly statistics") if report.period == "month" else _("Daily statistics")
    title = f"{kind} · {report.venue.name} · {_day(report.first)} – {_day(report.last)}"
    rows = [
        (
            period_text(report, r.period),
            r.room,
            r.game_type_label if r.game_type else "",
            r.games,
            r.void,
            r.cards,
            i18n.amount(r.amount),
            i18n.amount(r.prizes),
            "—" if r.return_percent is None else f"{formats.number_format(r.return_percent, 2)} %",
        )
        for r in [*report.rows, report.total]
    ]
    story: list[Flowable] = [
        Paragraph(escape(kind), TITLE),
        _pairs(
            [
                (_("Establishment"), f"{report.venue.name} · {licence_text(report.venue.licence_number)}"),
                (_("From"), _day(report.first)),
                (_("To"), _day(report.last)),
                (_("Time zone"), report.venue.time_zone),
            ]
        ),
        Spacer(1, 4 * mm),
        _table(
            [
                _("Period"),
                _("Room"),
                _("Game type"),
                _("Games"),
                _("Void games"),
                _("Cards sold"),
                _("Amount played"),
                _("Prizes paid"),
                _("Return to players"),
            ],
            rows,
        ),
    ]
    return _build(story, title, wide=True)
