"""What a printed slip says, and how it is laid out in rows of a fixed width (pure: no Django).

A builder (tickets, payouts, shifts, cards) fills a `Document` with texts already translated; `layout`
turns it into the rows both renderers draw, so the thermal slip and its PDF read the same. Columns: 80 mm
paper holds 48 characters of font A on a 576-dot head and 42 on a 512-dot one; 42 fits both.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from enum import StrEnum

RECEIPT_COLUMNS = 42


class Symbology(StrEnum):
    ITF = "ITF"  # Interleaved 2 of 5: digits, an even count (the 18-digit TITO validation number)
    CODE128 = "CODE128"  # any printable ASCII


class Paper(StrEnum):
    RECEIPT = "receipt"  # 80 mm roll
    A4 = "a4"  # long documents (a shift report) as a PDF; the thermal printer still prints them on its roll


class Align(StrEnum):
    LEFT = "left"
    CENTER = "center"
    RIGHT = "right"


@dataclass(frozen=True)
class Field:
    """A labelled value: label on the left, value on the right."""

    label: str
    value: str


@dataclass(frozen=True)
class Rule:
    """A separating line."""


Line = Field | Rule | str  # str: plain text, wrapped at words


# The longest values whose bars, 2 dots a module with their quiet zones, fit a 512-dot head (72 mm):
# ITF 16 dots a digit; CODE128 22 dots a symbol, a symbol holding two digits (set C) or one character.
MAX_ITF_DIGITS = 28
MAX_CODE128_DIGITS = 36
MAX_CODE128_CHARACTERS = 18


@dataclass(frozen=True)
class Barcode:
    value: str
    symbology: Symbology = Symbology.CODE128

    def __post_init__(self) -> None:
        if not self.value or not all(" " <= ch <= "~" for ch in self.value):
            raise ValueError(f"a barcode holds printable ASCII, got {self.value!r}")
        if self.symbology is Symbology.ITF and (not self.value.isdigit() or len(self.value) % 2):
            raise ValueError(f"ITF encodes an even number of digits, got {self.value!r}")
        if len(self.value) > self.max_length:
            raise ValueError(f"a {self.symbology} barcode of {self.value!r} is wider than 80 mm paper")

    @property
    def max_length(self) -> int:
        if self.symbology is Symbology.ITF:
            return MAX_ITF_DIGITS
        if self.value.isdigit() and len(self.value) % 2 == 0:
            return MAX_CODE128_DIGITS
        return MAX_CODE128_CHARACTERS


@dataclass(frozen=True)
class Document:
    """One slip: a ticket, a prize receipt, a shift report, a player card.

    ``kind`` names it in the audit chain ("ticket", "payout", "shift_report", "card"); ``amount`` is the
    big line (label, value); ``barcode`` and ``qr`` are printed after it, ``footer`` last.
    """

    venue: str
    title: str
    kind: str = "receipt"
    lines: tuple[Line, ...] = ()
    amount: Field | None = None
    barcode: Barcode | None = None
    qr: str | None = None
    footer: tuple[str, ...] = ()
    paper: Paper = Paper.RECEIPT


@dataclass(frozen=True)
class Row:
    """One printed row; ``big`` rows are printed at double width and height (half the columns)."""

    text: str
    align: Align = Align.LEFT
    bold: bool = False
    big: bool = False


@dataclass(frozen=True)
class BarcodeRow:
    barcode: Barcode


@dataclass(frozen=True)
class QrRow:
    payload: str


Item = Row | BarcodeRow | QrRow


@dataclass
class _Rows:
    columns: int
    items: list[Item] = field(default_factory=list)

    def text(self, text: str, align: Align = Align.LEFT, *, bold: bool = False, big: bool = False) -> None:
        width = self.columns // 2 if big else self.columns
        for piece in wrap(text, width):
            self.items.append(Row(piece, align, bold, big))

    def field(self, item: Field, *, big: bool = False) -> None:
        width = self.columns // 2 if big else self.columns
        label, value = printable(item.label), printable(item.value)
        joined = fit_pair(label, value, width)
        if joined is not None:
            self.items.append(Row(joined, Align.LEFT, bold=big, big=big))
            return
        if label.strip():
            self.text(label, bold=big, big=big)
        self.text(value, Align.RIGHT, bold=big, big=big)


def printable(text: str) -> str:
    """``text`` without control characters (a name could otherwise carry printer commands); tabs and
    line breaks become spaces."""
    return "".join(
        " " if ch in "\t\n\r" else ch for ch in text if ch in "\t\n\r" or unicodedata.category(ch)[0] != "C"
    )


def fit_pair(label: str, value: str, width: int) -> str | None:
    """``label`` and ``value`` on one row of ``width``, value flush right; None when they do not fit."""
    label, value = " ".join(label.split()), " ".join(value.split())
    gap = width - len(label) - len(value)
    if gap < 1 and label and value:
        return None
    if gap < 0:
        return None
    return label + " " * gap + value


def wrap(text: str, width: int) -> list[str]:
    """Greedy word wrap to ``width`` columns; a word longer than a row is cut. Never drops a character
    other than whitespace; an empty text is one empty row. Line breaks in ``text`` start a new row."""
    if width < 1:
        raise ValueError("width must be at least 1")
    rows: list[str] = []
    for paragraph in text.split("\n"):
        row = ""
        for word in printable(paragraph).split():
            while len(word) > width:
                if row:
                    rows.append(row)
                    row = ""
                rows.append(word[:width])
                word = word[width:]
            if not word:
                continue
            if not row:
                row = word
            elif len(row) + 1 + len(word) <= width:
                row += " " + word
            else:
                rows.append(row)
                row = word
        rows.append(row)
    return rows


def layout(document: Document, columns: int = RECEIPT_COLUMNS) -> list[Item]:
    """The rows of ``document`` at ``columns`` characters: venue and title centred, the lines, the big
    amount, the barcode, the QR code, the footer."""
    if columns < 8:
        raise ValueError("a slip is at least 8 columns wide")
    rows = _Rows(columns)
    rows.text(document.venue, Align.CENTER, bold=True)
    rows.text(document.title, Align.CENTER, bold=True)
    rows.items.append(Row("-" * columns))
    for line in document.lines:
        if isinstance(line, Field):
            rows.field(line)
        elif isinstance(line, Rule):
            rows.items.append(Row("-" * columns))
        else:
            rows.text(line)
    if document.amount is not None:
        rows.items.append(Row("=" * columns))
        rows.field(document.amount, big=True)
        rows.items.append(Row("=" * columns))
    if document.barcode is not None:
        rows.items.append(BarcodeRow(document.barcode))
    if document.qr:
        rows.items.append(QrRow(document.qr))
    for line in document.footer:
        rows.text(line, Align.CENTER)
    return rows.items


def plain_text(items: list[Item]) -> str:
    """The rows as text (barcode and QR as their values): for logs, tests and a screen preview."""
    out: list[str] = []
    for item in items:
        if isinstance(item, Row):
            out.append(item.text)
        elif isinstance(item, BarcodeRow):
            out.append(f"[{item.barcode.symbology} {item.barcode.value}]")
        else:
            out.append(f"[QR {item.payload}]")
    return "\n".join(out)
