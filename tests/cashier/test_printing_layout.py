"""The pure layout of printed documents: every row fits the paper, wrapping loses no character, no control
character reaches the printer; and the ESC/POS bytes read back as the laid-out rows, codes included."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from halls.cashier.printing import escpos
from halls.cashier.printing.document import (
    Align,
    Barcode,
    BarcodeRow,
    Document,
    Field,
    Row,
    Rule,
    Symbology,
    fit_pair,
    layout,
    plain_text,
    printable,
    wrap,
)
from tests.cashier.escpos_reader import read

texts = st.text(max_size=200)
# What code page CP858 can print: the slip's text read back must equal the layout's.
cp858 = st.text(
    st.characters(codec="cp858", exclude_categories=("Cc", "Cs", "Co", "Cn", "Cf")),
    max_size=120,
)
widths = st.integers(min_value=1, max_value=60)
columns = st.sampled_from([42, 48])


def visible(text: str) -> str:
    return "".join(printable(text).split())


@given(texts, widths)
def test_wrapping_fits_the_width_and_loses_no_character(text: str, width: int) -> None:
    rows = wrap(text, width)
    assert rows and all(len(row) <= width for row in rows)
    assert "".join(visible(row) for row in rows) == visible(text)
    assert all(row == row.strip() and "  " not in row for row in rows)


@given(texts, texts, widths)
def test_a_pair_on_one_row_fills_it_exactly(label: str, value: str, width: int) -> None:
    row = fit_pair(label, value, width)
    if row is not None:
        assert len(row) == width
        assert row.startswith(" ".join(label.split())) and row.endswith(" ".join(value.split()))


def documents(text: st.SearchStrategy[str]) -> st.SearchStrategy[Document]:
    line = st.one_of(text, st.builds(Field, text, text), st.just(Rule()))
    return st.builds(
        Document,
        venue=text,
        title=text,
        lines=st.lists(line, max_size=6).map(tuple),
        amount=st.none() | st.builds(Field, text, text),
        barcode=st.none() | st.from_regex(r"\A[0-9]{2,9}\Z").map(lambda d: Barcode(d * 2, Symbology.ITF)),
        qr=st.none() | text.filter(bool),
        footer=st.lists(text, max_size=3).map(tuple),
    )


@given(documents(texts), columns)
def test_every_row_fits_the_paper_and_carries_every_character(document: Document, width: int) -> None:
    items = layout(document, width)
    rows = [item for item in items if isinstance(item, Row)]
    for row in rows:
        assert len(row.text) * (2 if row.big else 1) <= width
        assert all(ch == " " or printable(ch) == ch for ch in row.text)
    said = "".join(visible(row.text) for row in rows)
    parts = [document.venue, document.title]
    for line in document.lines:
        if isinstance(line, Field):
            parts += [line.label, line.value]
        elif isinstance(line, str):
            parts.append(line)
    if document.amount:
        parts += [document.amount.label, document.amount.value]
    parts += document.footer
    # every character, in order (the rules' dashes aside)
    assert said.replace("-", "").replace("=", "") == visible("".join(parts)).replace("-", "").replace("=", "")
    codes = [i.barcode if isinstance(i, BarcodeRow) else i.payload for i in items if not isinstance(i, Row)]
    assert codes == [code for code in (document.barcode, document.qr) if code]


@settings(max_examples=60)
@given(documents(cp858), columns)
def test_the_escpos_bytes_read_back_as_the_layout(document: Document, width: int) -> None:
    items = layout(document, width)
    slip = read(escpos.render(document, columns=width))
    rows = [item.text for item in items if isinstance(item, Row)]
    # a barcode prints its digits below the bars (ITF, pos BELOW), with no row of its own; then a feed
    assert [row for row in slip.rows if row] == [row for row in rows if row]
    assert slip.big_rows == [item.text for item in items if isinstance(item, Row) and item.big]
    assert slip.barcodes == ([("ITF", document.barcode.value.encode())] if document.barcode else [])
    assert slip.qr == ([document.qr] if document.qr else [])
    assert slip.cuts == 1


def test_a_ticket_laid_out_on_42_columns() -> None:
    document = Document(
        venue="Bingo Melilla Centro",
        title="Ticket",
        lines=(Field("Número de validación", "1234 5678 9012 3456 78"), "Canjeable en caja o en terminal."),
        amount=Field("Importe", "125,50 €"),
        barcode=Barcode("123456789012345678", Symbology.ITF),
        qr="T:123456789012345678",
        footer=("Válido 30 días",),
    )
    assert plain_text(layout(document)).splitlines() == [
        "Bingo Melilla Centro",
        "Ticket",
        "-" * 42,
        "Número de validación",  # 20 + 1 + 22 > 42: the value goes below, flush right
        "1234 5678 9012 3456 78",
        "Canjeable en caja o en terminal.",
        "=" * 42,
        "Importe      125,50 €",  # double width: 21 columns
        "=" * 42,
        "[ITF 123456789012345678]",
        "[QR T:123456789012345678]",
        "Válido 30 días",
    ]


def test_a_pair_too_long_for_one_row_puts_the_value_flush_right_below() -> None:
    document = Document(venue="V", title="T", lines=(Field("Premio acumulado del bingo", "1.234.567,89 €"),))
    items = layout(document, 30)
    assert items[3:] == [Row("Premio acumulado del bingo"), Row("1.234.567,89 €", Align.RIGHT)]


def test_control_characters_never_reach_the_printer() -> None:
    document = Document(venue="V", title="T", lines=("Juan\x1bd\x09\x1dV\x00 Pérez",))
    slip = read(escpos.render(document))  # the reader fails on any control byte outside a command
    assert slip.rows[3] == "Juand V Pérez"  # ESC, GS and NUL dropped, the tab a space
    assert slip.cuts == 1  # the "GS V" of the name cut nothing


@pytest.mark.parametrize("value", ["12345", "12a4", ""])
def test_itf_takes_an_even_count_of_digits_only(value: str) -> None:
    with pytest.raises(ValueError, match=r"ITF|barcode"):
        Barcode(value, Symbology.ITF)


@pytest.mark.parametrize(
    ("value", "symbology"),
    [
        ("12" * 15, Symbology.ITF),
        ("12" * 19, Symbology.CODE128),
        ("A" * 19, Symbology.CODE128),
        ("é", Symbology.CODE128),
    ],
)
def test_a_barcode_wider_than_the_paper_or_not_ascii_is_refused(value: str, symbology: Symbology) -> None:
    with pytest.raises(ValueError, match=r"wider than 80 mm|printable ASCII"):
        Barcode(value, symbology)


@pytest.mark.parametrize(
    ("value", "symbology"),
    [("12" * 14, Symbology.ITF), ("12" * 18, Symbology.CODE128), ("A" * 18, Symbology.CODE128)],
)
def test_the_widest_barcodes_fit_the_printable_width(value: str, symbology: Symbology) -> None:
    """Dots of the bars at 2 a module (ITF wide bars 2.5 narrow), quiet zones of 10 modules: ≤ 512."""
    barcode = Barcode(value, symbology)
    if symbology is Symbology.ITF:
        modules = 8 * len(value) + 4 + 4.5 + 20  # a digit: 3 narrow + 2 wide; start; stop; quiet zones
    else:
        symbols = len(escpos.barcode_data(barcode)) - 2  # after "{C" / "{B"
        modules = 11 * (symbols + 2) + 13 + 20  # start and check symbols, the stop pattern, quiet zones
    assert modules * 2 <= 512
