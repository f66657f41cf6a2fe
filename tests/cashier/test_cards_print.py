"""A player card printed: at a till's ESC/POS printer (number, QR payload, CODE128 of the number) or as a
PDF whose QR and barcode read back; audited with the card as subject; a blocked card is not printed."""

from __future__ import annotations

from decimal import Decimal

import pytest
import qrcode.exceptions
import qrcode.util
from django.contrib.auth.models import User

from halls.cashier import cardnumber
from halls.cashier.models import PlayerCard, Till
from halls.cashier.printing import pdf
from halls.cashier.services import player_cards, shifts
from halls.errors import Conflict
from halls.models import AuditEntry, Venue
from tests.api_support import api_client, refused
from tests.cashier import pdf_reader
from tests.cashier.escpos_reader import code128_value, read
from tests.cashier.printer_fakes import fake_printer

# The cashier opens its shift in each test, with the float the test counts.
pytestmark = pytest.mark.cashier_off_shift


def _is_qr_of(matrix: list[list[bool]], payload: str) -> bool:
    """pdf_reader.is_qr_of, each mode tried alone (the byte mode of "TJ:<16 digits>" overflows the small
    version an alphanumeric encoder picks, which the reader's `qrcode` raises on)."""
    version = (len(matrix) - 17) // 4
    for mode in (qrcode.util.MODE_ALPHA_NUM, qrcode.util.MODE_8BIT_BYTE):
        for mask in range(8):
            try:
                if pdf_reader.qr_matrix_of(payload, version, mode, mask) == matrix:
                    return True
            except qrcode.exceptions.DataOverflowError:
                break
    return False


@pytest.fixture
def till(venue: Venue) -> Till:
    return Till.objects.create(venue=venue, name="Caja 1")


@pytest.fixture
def card(venue: Venue, cashier: User) -> PlayerCard:
    return player_cards.issue_card(venue_id=venue.pk, actor=cashier)


@pytest.mark.django_db
def test_a_card_goes_to_the_tills_printer_with_its_qr_and_barcode(till: Till, card: PlayerCard) -> None:
    with fake_printer() as printer:
        till.printer = printer.address
        till.save()
        result = player_cards.print_card(card=card, till=till, actor="cajero-1")
        slip = read(printer.job())
    assert result.medium == "printer"
    assert slip.qr == [cardnumber.qr_payload(card.number)]
    ((symbology, data),) = slip.barcodes
    assert symbology == "CODE128" and code128_value(data) == card.number
    assert cardnumber.printed(card.number) in slip.text
    entry = AuditEntry.objects.get(action="cashier.printed")
    assert (entry.object_type, entry.object_id) == ("cashier.playercard", str(card.pk))
    assert entry.data["kind"] == "card"


@pytest.mark.django_db
def test_without_a_printer_the_api_answers_the_pdf_and_a_blocked_card_is_refused(
    venue: Venue, cashier: User, till: Till, card: PlayerCard
) -> None:
    client = api_client(cashier)
    url = f"/api/cashier/venues/{venue.pk}/cards/{card.number}/print/"
    refused(client.post(url, {}, format="json"), 409, "no_open_shift")
    refused(client.post(url, {"till": till.pk + 1000}, format="json"), 404, "unknown_till")
    shifts.open_shift(till=till, cashier=cashier, float_amount=Decimal("0"), actor=cashier)
    response = client.post(url, {}, format="json")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    rects = pdf_reader.filled_rects(response.content)
    assert pdf_reader.code128_value(rects, pdf.BARCODE_HEIGHT) == card.number
    matrix = pdf_reader.qr_matrix([r for r in rects if abs(r[3] - pdf.BARCODE_HEIGHT) > 0.01])
    assert _is_qr_of(matrix, cardnumber.qr_payload(card.number))
    assert not _is_qr_of(
        matrix, cardnumber.qr_payload(player_cards.issue_card(venue_id=venue.pk, actor="t").number)
    )
    player_cards.block_card(card=card, reason="lost", actor=cashier)
    refused(client.post(url, {}, format="json"), 409, "card_blocked")
    with pytest.raises(Conflict):
        player_cards.print_card(card=card, till=till, actor=cashier)
    assert AuditEntry.objects.filter(action="cashier.printed").count() == 1
