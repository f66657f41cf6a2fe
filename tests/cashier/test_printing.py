"""Printing at a till: to a network ESC/POS printer (a real TCP server here) with the text, the barcode and
the QR code as printer commands; audited; a printer that does not answer refuses with
printer_unreachable and writes nothing; without a printer, a PDF."""

from __future__ import annotations

import io
import socket
import time

import pypdf
import pytest

from halls.cashier.models import Till
from halls.cashier.printing import escpos, pdf
from halls.cashier.printing.document import Barcode, Document, Field, Paper, Rule, Symbology
from halls.cashier.services.printing import print_document
from halls.errors import Conflict, Unavailable
from halls.models import AuditEntry, Venue
from tests.cashier import pdf_reader
from tests.cashier.escpos_reader import code128_value, read
from tests.cashier.printer_fakes import fake_printer
from tests.ports import free_port

NUMBER = "123456789012345678"


def ticket(number: str = NUMBER, symbology: Symbology = Symbology.ITF) -> Document:
    return Document(
        venue="Bingo Melilla Centro",
        title="Ticket",
        kind="ticket",
        lines=(Field("Número de validación", number), Field("Emitido", "26/11/2026 10:15"), Rule()),
        amount=Field("Importe", "125,50 €"),
        barcode=Barcode(number, symbology),
        footer=("Válido 30 días", "Caja 1"),
    )


@pytest.fixture
def till(venue: Venue) -> Till:
    return Till.objects.create(venue=venue, name="Caja 1")


@pytest.mark.django_db
def test_a_ticket_goes_to_the_tills_printer_with_its_text_barcode_and_is_audited(till: Till) -> None:
    with fake_printer() as printer:
        till.printer = printer.address
        result = print_document(till=till, document=ticket(), actor="cajero-1")
        data = printer.job()
    assert data == escpos.render(ticket())
    assert (result.medium, result.printer, result.pdf) == ("printer", printer.address, None)
    assert result.size == len(data)
    slip = read(data)
    assert slip.code_page == "cp858"
    assert slip.rows[:2] == ["Bingo Melilla Centro", "Ticket"]
    assert "Número de validación" in slip.text and NUMBER in slip.text
    assert [row.split() for row in slip.big_rows] == [["Importe", "125,50", "€"]]
    assert slip.barcodes == [("ITF", NUMBER.encode())]
    assert slip.rows[-2:] == ["Válido 30 días", "Caja 1"]
    assert slip.cuts == 1 and slip.qr == []
    entry = AuditEntry.objects.get(action="cashier.printed")
    assert (entry.object_type, entry.object_id) == ("cashier.till", str(till.pk))
    assert entry.actor_label == "cajero-1"
    assert entry.data["medium"] == "printer" and entry.data["barcode"] == NUMBER
    assert entry.data["kind"] == "ticket" and entry.data["sha256"] == result.sha256


@pytest.mark.django_db
def test_a_card_prints_its_number_and_qr_code_and_the_audit_names_the_subject(
    till: Till, venue: Venue
) -> None:
    card = Document(
        venue=venue.name,
        title="Tarjeta de jugador",
        kind="card",
        lines=(Field("Número", "1000 0000 0001"),),
        barcode=Barcode("100000000001"),
        qr="HALL-CARD:100000000001",
    )
    with fake_printer() as printer:
        till.printer = printer.address
        print_document(till=till, document=card, actor="cajero-1", subject=venue)
        slip = read(printer.job())
    assert slip.qr == ["HALL-CARD:100000000001"]
    ((symbology, data),) = slip.barcodes
    assert symbology == "CODE128" and data.startswith(b"{C") and code128_value(data) == "100000000001"
    assert "1000 0000 0001" in slip.text
    entry = AuditEntry.objects.get(action="cashier.printed")
    assert (entry.object_type, entry.object_id) == ("halls.venue", str(venue.pk))


def test_code128_of_letters_goes_in_subset_b() -> None:
    data = escpos.barcode_data(Barcode("AB-12{x"))
    assert data == "{BAB-12{{x"
    assert code128_value(data.encode()) == "AB-12{x"
    assert code128_value(escpos.barcode_data(Barcode("0099")).encode()) == "0099"


@pytest.mark.django_db
def test_an_unreachable_printer_refuses_with_printer_unreachable_and_writes_nothing(till: Till) -> None:
    till.printer = f"tcp://127.0.0.1:{free_port()}"  # nobody listens there
    with pytest.raises(Unavailable) as refused:
        print_document(till=till, document=ticket(), actor="cajero-1")
    assert refused.value.code == "printer_unreachable" and refused.value.status == 503
    assert "Caja 1" in refused.value.message and till.printer in refused.value.message
    assert not AuditEntry.objects.filter(action="cashier.printed").exists()


def test_a_printer_that_stops_taking_bytes_times_out() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:  # listens, never reads
        address = escpos.Address("127.0.0.1", int(server.getsockname()[1]))
        began = time.monotonic()
        with pytest.raises(escpos.PrinterUnreachable, match="timed out"):
            escpos.send(address, b"x" * (64 << 20), timeout=0.5)
    assert time.monotonic() - began < 5


@pytest.mark.django_db
@pytest.mark.parametrize("address", ["http://10.0.0.5:9100", "10.0.0.5", "tcp://:9100", "tcp://host:99999"])
def test_a_printer_address_that_is_not_tcp_host_port_is_a_conflict(till: Till, address: str) -> None:
    till.printer = address
    with pytest.raises(Conflict) as refused:
        print_document(till=till, document=ticket(), actor="cajero-1")
    assert refused.value.code == "printer_address_invalid"
    assert not AuditEntry.objects.filter(action="cashier.printed").exists()


def test_printer_addresses() -> None:
    assert escpos.parse_address("tcp://10.0.0.5:9100") == escpos.Address("10.0.0.5", 9100)
    assert escpos.parse_address(" tcp://impresora-caja1 ") == escpos.Address("impresora-caja1", 9100)
    assert str(escpos.parse_address("tcp://[::1]:9101")) == "tcp://::1:9101"


@pytest.mark.django_db
def test_without_a_printer_the_ticket_is_a_one_page_pdf_with_its_number_and_is_audited(till: Till) -> None:
    result = print_document(till=till, document=ticket(), actor="cajero-1")
    assert result.medium == "pdf" and result.pdf is not None and result.pdf.startswith(b"%PDF")
    reader = pypdf.PdfReader(io.BytesIO(result.pdf))
    assert len(reader.pages) == 1
    page = reader.pages[0]
    assert round(float(page.mediabox.width) / 72 * 25.4) == 80  # 80 mm receipt paper
    text = page.extract_text()
    assert NUMBER in text and "Número de validación" in text and "125,50 €" in text
    assert reader.metadata is not None and reader.metadata.title == "Ticket"
    entry = AuditEntry.objects.get(action="cashier.printed")
    assert entry.data["medium"] == "pdf" and entry.data["size"] == len(result.pdf)


@pytest.mark.django_db
def test_a_long_a4_document_runs_over_pages(till: Till) -> None:
    report = Document(
        venue="Bingo Melilla Centro",
        title="Arqueo de caja",
        kind="shift_report",
        lines=tuple(Field(f"Operación {i}", f"{i},00 €") for i in range(200)),
        paper=Paper.A4,
    )
    result = print_document(till=till, document=report, actor="cajero-1")
    assert result.pdf is not None
    reader = pypdf.PdfReader(io.BytesIO(result.pdf))
    assert len(reader.pages) > 1
    assert round(float(reader.pages[0].mediabox.width) / 72 * 25.4) == 210
    text = "\n".join(page.extract_text() for page in reader.pages)
    assert all(f"Operación {i}" in text for i in range(200))


def test_the_pdf_barcodes_decode_to_their_values_and_the_qr_code_is_its_payload() -> None:
    itf = pdf.render(ticket())
    assert pdf_reader.itf_value(pdf_reader.filled_rects(itf), pdf.BARCODE_HEIGHT) == NUMBER
    card = Document(venue="V", title="T", barcode=Barcode("HALL-0001"), qr="HALL-CARD:100000000001")
    rects = pdf_reader.filled_rects(pdf.render(card))
    assert pdf_reader.code128_value(rects, pdf.BARCODE_HEIGHT) == "HALL-0001"
    matrix = pdf_reader.qr_matrix([r for r in rects if abs(r[3] - pdf.BARCODE_HEIGHT) > 0.01])
    assert pdf_reader.is_qr_of(matrix, "HALL-CARD:100000000001")
    assert not pdf_reader.is_qr_of(matrix, "HALL-CARD:100000000002")
