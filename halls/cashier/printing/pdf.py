"""A `Document` as a PDF: the thermal slip's rows on an 80 mm page as long as the slip (one page), or on
A4 pages for a long document (``Paper.A4``: a shift report). Monospaced (Courier), so the PDF reads like
the paper; the barcode and the QR code are reportlab drawings (vectors, no image)."""

from __future__ import annotations

import io

from reportlab.graphics import renderPDF
from reportlab.graphics.barcode import createBarcodeDrawing
from reportlab.graphics.barcode.qr import QrCodeWidget
from reportlab.graphics.shapes import Drawing
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm as _mm
from reportlab.pdfgen.canvas import Canvas

from halls.cashier.printing.document import (
    RECEIPT_COLUMNS,
    Align,
    Barcode,
    BarcodeRow,
    Document,
    Item,
    Paper,
    QrRow,
    Row,
    Symbology,
    layout,
)

MM: float = _mm  # points
A4_WIDTH: float = A4[0]
A4_HEIGHT: float = A4[1]
RECEIPT_WIDTH = 80 * MM
RECEIPT_MARGIN = 4 * MM
A4_COLUMNS = 80
A4_MARGIN = 20 * MM
CHAR_WIDTH = 0.6  # Courier's advance, in ems
BARCODE_HEIGHT = 14 * MM
QR_SIDE = 30 * MM


class _Page:
    """Where rows go: the font size that fits the columns, the row heights, the drawable width."""

    def __init__(self, paper: Paper) -> None:
        self.paper = paper
        if paper is Paper.A4:
            self.columns, self.width, self.margin = A4_COLUMNS, A4_WIDTH, A4_MARGIN
        else:
            self.columns, self.width, self.margin = RECEIPT_COLUMNS, RECEIPT_WIDTH, RECEIPT_MARGIN
        self.inner = self.width - 2 * self.margin
        self.size = self.inner / (self.columns * CHAR_WIDTH)
        self.leading = self.size * 1.25

    def height_of(self, item: Item) -> float:
        if isinstance(item, Row):
            return self.leading * (2 if item.big else 1)
        if isinstance(item, BarcodeRow):
            return BARCODE_HEIGHT + 3 * self.leading
        return QR_SIDE + self.leading


def render(document: Document) -> bytes:
    """The PDF of ``document``."""
    page = _Page(document.paper)
    items = layout(document, page.columns)
    if document.paper is Paper.A4:
        height = A4_HEIGHT
    else:  # one page as long as the slip
        height = sum(page.height_of(item) for item in items) + 2 * page.margin
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=(page.width, height), pageCompression=1, invariant=True)
    canvas.setTitle(document.title)
    canvas.setAuthor(document.venue)
    canvas.setSubject(document.kind)
    top = height - page.margin
    y = top
    for item in items:
        needed = page.height_of(item)
        if document.paper is Paper.A4 and y - needed < page.margin and y < top:
            canvas.showPage()
            y = top
        y -= needed
        if isinstance(item, Row):
            _row(canvas, page, item, y)
        elif isinstance(item, BarcodeRow):
            _draw_centred(canvas, page, _barcode(item.barcode), y + page.leading)
        elif isinstance(item, QrRow):
            _draw_centred(canvas, page, _qr(item.payload), y + page.leading / 2)
    canvas.showPage()
    canvas.save()
    return out.getvalue()


def _row(canvas: Canvas, page: _Page, row: Row, y: float) -> None:
    size = page.size * (2 if row.big else 1)
    canvas.setFont("Courier-Bold" if row.bold else "Courier", size)
    baseline = y + page.leading * 0.3
    if row.align is Align.CENTER:
        canvas.drawCentredString(page.width / 2, baseline, row.text)
    elif row.align is Align.RIGHT:
        canvas.drawRightString(page.width - page.margin, baseline, row.text)
    else:
        canvas.drawString(page.margin, baseline, row.text)


def _barcode(barcode: Barcode) -> Drawing:
    if barcode.symbology is Symbology.ITF:
        # No check digit and no bearer bars: the bars carry the value exactly as the ESC/POS slip does.
        return createBarcodeDrawing(
            "I2of5",
            value=barcode.value,
            checksum=0,
            bearers=0,
            barHeight=BARCODE_HEIGHT,
            barWidth=0.3 * MM,
            humanReadable=True,
        )
    return createBarcodeDrawing(
        "Code128", value=barcode.value, barHeight=BARCODE_HEIGHT, barWidth=0.25 * MM, humanReadable=True
    )


def _qr(payload: str) -> Drawing:
    widget = QrCodeWidget(payload, barLevel="M", barBorder=2)  # M: 15 % of the symbol may be lost
    x0, y0, x1, y1 = widget.getBounds()
    drawing = Drawing(QR_SIDE, QR_SIDE, transform=[QR_SIDE / (x1 - x0), 0, 0, QR_SIDE / (y1 - y0), 0, 0])
    drawing.add(widget)
    return drawing


def _draw_centred(canvas: Canvas, page: _Page, drawing: Drawing, y: float) -> None:
    """Draw ``drawing`` centred at height ``y``, shrunk to the drawable width when wider."""
    scale = min(1.0, page.inner / drawing.width)
    canvas.saveState()
    canvas.translate((page.width - drawing.width * scale) / 2, y)
    canvas.scale(scale, scale)
    renderPDF.draw(drawing, canvas, 0, 0)
    canvas.restoreState()
