"""Sheets of paper cards printed in the hall, as a PDF (pure: reportlab, no Django).

An A4 page holds two strips side by side, each a column of six cards; every card shows the texts its
caller prepared (series, serial, face value, cards in the series, security code, already translated), its
3×9 grid, and a QR code of the URL a phone opens to check the card against its game. The QR code is drawn
as vector squares by reportlab's own encoder (reportlab.graphics.barcode.qr), so no image library is used.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

from reportlab.graphics import renderPDF
from reportlab.graphics.barcode.qr import QrCodeWidget
from reportlab.graphics.shapes import Drawing
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas

Grid = Sequence[Sequence[int | None]]

CARDS_PER_COLUMN = 6
COLUMNS_PER_PAGE = 2
CELL_W = 7.6 * mm
CELL_H = 7.5 * mm
QR_SIZE = 21 * mm
CARD_W = 9 * CELL_W + QR_SIZE + 3 * mm
CARD_H = 3 * CELL_H + 11 * mm
MARGIN_X = (A4[0] - COLUMNS_PER_PAGE * CARD_W) / 3
MARGIN_TOP = 14 * mm


@dataclass(frozen=True)
class PrintCard:
    """One card to print: its two header lines, its grid (None = blank) and the URL its QR code holds."""

    title: str  # e.g. "Serie A · Nº 123"
    details: str  # e.g. "2,00 € · 600 cartones · Código K7Q2M4X9PA"
    grid: Grid
    check_url: str


def _qr(canvas: Canvas, payload: str, x: float, y: float, size: float) -> None:
    widget = QrCodeWidget(payload, barLevel="M", barBorder=2)
    left, bottom, right, top = widget.getBounds()
    drawing = Drawing(size, size, transform=[size / (right - left), 0, 0, size / (top - bottom), 0, 0])
    drawing.add(widget)
    renderPDF.draw(drawing, canvas, x, y)


def _card(canvas: Canvas, card: PrintCard, x: float, top: float) -> None:
    canvas.setLineWidth(0.8)
    canvas.rect(x, top - CARD_H, CARD_W, CARD_H)
    canvas.setFont("Helvetica-Bold", 9)
    canvas.drawString(x + 2 * mm, top - 4.5 * mm, card.title[:60])
    canvas.setFont("Helvetica", 7)
    canvas.drawString(x + 2 * mm, top - 8.5 * mm, card.details[:90])
    grid_top = top - 10 * mm
    canvas.setLineWidth(0.4)
    for r, row in enumerate(card.grid):
        for c, value in enumerate(row):
            cx, cy = x + 1.5 * mm + c * CELL_W, grid_top - (r + 1) * CELL_H
            if value is None:
                canvas.setFillGray(0.85)
                canvas.rect(cx, cy, CELL_W, CELL_H, stroke=1, fill=1)
                canvas.setFillGray(0)
            else:
                canvas.rect(cx, cy, CELL_W, CELL_H)
                canvas.setFont("Helvetica-Bold", 12)
                canvas.drawCentredString(cx + CELL_W / 2, cy + 2.2 * mm, str(value))
    _qr(canvas, card.check_url, x + CARD_W - QR_SIZE - 1 * mm, top - CARD_H + 0.5 * mm, QR_SIZE)


def render(cards: Sequence[PrintCard], *, title: str, footer: str) -> bytes:
    """The PDF: cards in order, a column of six (a strip) at a time, two columns a page."""
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=A4, invariant=True)  # invariant: the same cards give the same bytes
    canvas.setTitle(title)
    per_page = CARDS_PER_COLUMN * COLUMNS_PER_PAGE
    pages = max(1, -(-len(cards) // per_page))
    for page in range(pages):
        canvas.setFont("Helvetica-Bold", 10)
        canvas.drawString(MARGIN_X, A4[1] - 9 * mm, title[:110])
        canvas.setFont("Helvetica", 7)
        canvas.drawString(MARGIN_X, 7 * mm, footer[:150])
        canvas.drawRightString(A4[0] - MARGIN_X, 7 * mm, f"{page + 1}/{pages}")
        for i, card in enumerate(cards[page * per_page : (page + 1) * per_page]):
            column, row = divmod(i, CARDS_PER_COLUMN)
            x = MARGIN_X + column * (CARD_W + MARGIN_X)
            top = A4[1] - MARGIN_TOP - row * (CARD_H + 3 * mm)
            _card(canvas, card, x, top)
        canvas.showPage()
    canvas.save()
    return out.getvalue()
