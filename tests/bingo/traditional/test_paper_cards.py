"""Paper cards (issue 15): a pre-printed series imported all or nothing, its cards playing a game and
verifying claims as generated ones do; sheets printed for a game (the PDF turned to pictures, its QR codes
read back and their URLs answering the card's check); a player's cards printed at the table on an ESC/POS
printer; the paper stock's moves; the printed-card register."""

from __future__ import annotations

import shutil
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from bingo.traditional.models import (
    Card,
    CardSeries,
    Game,
    PaperRange,
    PrintedCards,
    StockMovement,
    StockState,
)
from bingo.traditional.services import claims, draw, games, paper, readmodels, sales, stock
from bingo.traditional.services.series import IMPORTED, master_card
from halls.cashier.models import Till
from halls.errors import InvalidInput, Unavailable
from halls.models import AuditEntry, Venue
from tests.bingo.traditional.paper_support import SPOILED, bad_file, good_file
from tests.cashier.printer_fakes import fake_printer

pytestmark = pytest.mark.django_db
BASE = "http://testserver/"
KEY = "t-1"


@pytest.fixture(scope="module")
def files() -> tuple[bytes, bytes]:
    return good_file(), bad_file()


def imported(venue: Venue, operator: User, data: bytes, code: str = "P") -> CardSeries:
    return paper.import_series(venue=venue, code=code, face_value=Decimal("1.50"), data=data, actor=operator)


def test_a_file_with_one_bad_card_is_refused_naming_it_and_nothing_is_stored(
    venue: Venue, operator: User, files: tuple[bytes, bytes]
) -> None:
    audits = AuditEntry.objects.count()
    with pytest.raises(InvalidInput) as refused:
        imported(venue, operator, files[1])
    assert refused.value.code == "bad_cards"
    assert refused.value.details["bad_serials"] == [SPOILED]
    [problem] = refused.value.details["problems"]
    assert (problem["serial"], problem["line"], problem["code"]) == (SPOILED, SPOILED + 1, "row_order")
    assert f"{SPOILED}" in refused.value.message
    assert not CardSeries.objects.exists() and not Card.objects.exists() and not PaperRange.objects.exists()
    assert AuditEntry.objects.count() == audits


def test_the_corrected_file_is_accepted_and_its_cards_play_and_verify_claims(
    venue: Venue, operator: User, caller: User, cashier: User, manual_game: Game, files: tuple[bytes, bytes]
) -> None:
    series = imported(venue, operator, files[0])
    assert (series.generator, series.strips, series.card_count, series.seed) == (IMPORTED, 100, 600, "")
    assert Card.objects.filter(series=series).count() == 600
    card = Card.objects.get(series=series, serial=SPOILED)
    assert card.security_code == f"IMP{SPOILED:06d}"  # the printer's own code, as printed
    assert master_card(series, SPOILED).to_json() == card.grid
    received = PaperRange.objects.get(series=series)
    assert (received.first_serial, received.last_serial, received.state) == (1, 600, StockState.RECEIVED)
    movement = StockMovement.objects.get(series=series)
    assert (movement.first_serial, movement.last_serial, movement.from_state) == (1, 600, "")
    assert AuditEntry.objects.filter(action="series.imported").count() == 1

    game = games.open_sales(game=manual_game, actor=caller)
    sales.sell_range(game=game, series=series, first=1, last=12, actor=cashier)
    games.close_sales(game=game, actor=caller)
    game = games.start_draw(game=game, actor=caller)
    row = [n for n in Card.objects.get(series=series, serial=7).grid[0] if n]
    for number in row:
        draw.enter_ball(game=game, number=number, actor=caller)
    line = claims.file_claim(game=game, kind="line", series_code="P", serial=7, actor=caller)
    assert line.valid and line.winning_row == 0
    unsold = claims.file_claim(game=game, kind="line", series_code="P", serial=13, actor=caller)
    assert not unsold.valid and unsold.refusal == "not_sold"


def test_the_import_api_answers_the_report_then_the_series(
    venue: Venue, operator: User, files: tuple[bytes, bytes]
) -> None:
    client = APIClient()
    client.force_authenticate(operator)

    def post(data: bytes) -> Any:
        upload = SimpleUploadedFile("serie.csv", data, content_type="text/csv")
        body = {"venue": venue.pk, "code": "P", "face_value": "1.50", "file": upload}
        return client.post("/api/series/import/", body, format="multipart")

    refused = post(files[1])
    assert refused.status_code == 400, refused.content
    assert refused.json()["error"]["code"] == "bad_cards", refused.json()
    assert refused.json()["error"]["details"]["bad_serials"] == [SPOILED]
    assert refused.json()["error"]["details"]["problems"][0]["serial"] == SPOILED
    created = post(files[0])
    assert created.status_code == 201, created.content
    assert created.json()["card_count"] == 600
    assert post(files[0]).json()["error"]["code"] == "series_exists"


def test_the_import_api_is_for_operators(venue: Venue, caller: User, files: tuple[bytes, bytes]) -> None:
    client = APIClient()
    client.force_authenticate(caller)
    upload = SimpleUploadedFile("serie.csv", files[0], content_type="text/csv")
    body = {"venue": venue.pk, "code": "P", "face_value": "1.50", "file": upload}
    assert client.post("/api/series/import/", body, format="multipart").status_code == 403


# --- printing in the hall -------------------------------------------------------------------------------


def qr_urls(pdf: bytes, tmp_path: Path) -> list[str]:
    """The PDF's pages as pictures (pdftoppm), and every QR code on them read back (zbarimg)."""
    assert shutil.which("pdftoppm") and shutil.which("zbarimg"), (
        "make browser installs poppler-utils, zbar-tools"
    )
    (tmp_path / "sheets.pdf").write_bytes(pdf)
    subprocess.run(
        ["pdftoppm", "-r", "200", "-png", "sheets.pdf", "page"], cwd=tmp_path, check=True, timeout=60
    )
    pages = sorted(tmp_path.glob("page-*.png"))
    assert pages
    found = subprocess.run(
        ["zbarimg", "-q", "--raw", *map(str, pages)], capture_output=True, text=True, timeout=60, check=True
    )
    return found.stdout.split()


def test_printed_sheets_carry_qr_codes_that_answer_each_cards_check(
    venue: Venue,
    operator: User,
    caller: User,
    cashier: User,
    manual_game: Game,
    card_series: CardSeries,
    tmp_path: Path,
) -> None:
    game = games.open_sales(game=manual_game, actor=caller)
    sales.sell_range(game=game, series=card_series, first=1, last=6, actor=cashier)
    row, pdf = paper.print_sheets(
        series=card_series, game=game, first=1, last=12, actor=operator, base_url=BASE
    )
    assert pdf.startswith(b"%PDF") and (row.cards, row.medium, row.game_id) == (12, "hall", game.pk)
    urls = qr_urls(pdf, tmp_path)
    assert len(urls) == 12
    cards = {c.serial: c for c in Card.objects.filter(series=card_series, serial__lte=12)}
    assert set(urls) == {paper.check_url(BASE, card) for card in cards.values()}
    public = Client()  # no login: a player's phone
    for url in urls:
        serial = int(urlsplit(url).path.split("/")[3])
        answer = public.get(urlsplit(url).path, {"format": "json"})
        assert answer.status_code == 200, answer.content
        check = answer.json()
        assert (check["series"], check["serial"], check["game"]) == ("A", serial, game.pk)
        assert check["sold"] is (serial <= 6)
        assert check["grid"] == cards[serial].grid
        assert check["series_cards"] == 60 and check["face_value"] == "2.00"
    page = public.get(urlsplit(urls[0]).path)
    assert page.status_code == 200 and b'id="check"' in page.content
    wrong = public.get(f"/c/{card_series.pk}/1/WRONGCODE1/", {"format": "json"})
    assert wrong.status_code == 404 and wrong.json()["error"]["code"] == "unknown_card"
    # The register of the game, through the API.
    api = APIClient()
    api.force_authenticate(operator)
    register = api.get(f"/api/games/{game.pk}/printed-cards/").json()
    assert [(r["series"], r["first_serial"], r["last_serial"], r["medium"]) for r in register] == [
        ("A", 1, 12, "hall")
    ]


def test_print_api_answers_the_pdf_and_refuses_a_closed_game_or_destroyed_paper(
    venue: Venue, operator: User, caller: User, manual_game: Game, card_series: CardSeries
) -> None:
    api = APIClient()
    api.force_authenticate(operator)
    answer = api.post(f"/api/series/{card_series.pk}/print/", {"game": manual_game.pk, "first": 1, "last": 6})
    assert answer.status_code == 200 and answer["Content-Type"] == "application/pdf"
    assert PrintedCards.objects.get().cards == 6
    bad = api.post(f"/api/series/{card_series.pk}/print/", {"game": manual_game.pk, "first": 5, "last": 61})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "range_not_in_series"
    stock.receive_paper(series=card_series, actor=operator)
    stock.move_paper(series=card_series, to_state=StockState.DESTROYED, actor=operator, first=30, last=31)
    gone = api.post(f"/api/series/{card_series.pk}/print/", {"game": manual_game.pk})
    assert gone.status_code == 409 and gone.json()["error"]["code"] == "paper_destroyed"
    assert gone.json()["error"]["details"]["serials"] == [[30, 31]]
    assert "30–31" in gone.json()["error"]["message"]
    fine = api.post(f"/api/series/{card_series.pk}/print/", {"game": manual_game.pk, "first": 32, "last": 37})
    assert fine.status_code == 200


# --- printing at the table ------------------------------------------------------------------------------


def test_a_players_purchase_is_sold_printed_as_a_ticket_and_registered(
    venue: Venue, caller: User, cashier: User, till: Till, manual_game: Game, card_series: CardSeries
) -> None:
    game = games.open_sales(game=manual_game, actor=caller)
    sales.sell_range(game=game, series=card_series, first=1, last=3, actor=cashier)
    with fake_printer() as printer:
        Till.objects.filter(pk=till.pk).update(printer=printer.address)
        till.refresh_from_db()
        done = paper.print_at_table(
            game=game,
            series=card_series,
            count=4,
            actor=cashier,
            till=till,
            base_url=BASE,
            idempotency_key="t-1",
        )
        job = printer.job()
    assert (done.sale.first_serial, done.sale.last_serial, done.sale.amount) == (4, 7, Decimal("8.00"))
    assert done.result.medium == "printer"
    text = job.decode("cp858", errors="replace")
    for serial in range(4, 8):
        card = Card.objects.get(series=card_series, serial=serial)
        assert f"Card {serial}" in text and card.security_code in text
        assert paper.ticket_row(card.grid[0]) in text
    assert b"\x1d(k" in job  # the check URL as the printer's own QR code
    register = PrintedCards.objects.get(game=game)
    assert (register.medium, register.first_serial, register.last_serial, register.sale_id) == (
        "table",
        4,
        7,
        done.sale.pk,
    )
    # The printer gone: refused (the sale stands); a retry with the same key at a till without a printer
    # prints the same cards again as a PDF and registers the reprint, selling nothing.
    with pytest.raises(Unavailable):
        paper.print_at_table(
            game=game,
            series=card_series,
            count=4,
            actor=cashier,
            till=till,
            base_url=BASE,
            idempotency_key="t-1",
        )
    Till.objects.filter(pk=till.pk).update(printer="")
    till.refresh_from_db()
    again = paper.print_at_table(
        game=game, series=card_series, count=4, actor=cashier, till=till, base_url=BASE, idempotency_key="t-1"
    )
    assert again.sale.pk == done.sale.pk and again.result.medium == "pdf"
    assert PrintedCards.objects.filter(game=game).count() == 2
    assert readmodels.sales_totals(game)["cards_sold"] == 7


def test_the_table_print_api_answers_the_ticket(
    venue: Venue, caller: User, cashier: User, till: Till, manual_game: Game, card_series: CardSeries
) -> None:
    game = games.open_sales(game=manual_game, actor=caller)
    api = APIClient()
    api.force_authenticate(cashier)
    answer = api.post(f"/api/games/{game.pk}/table-print/", {"series": "A", "count": 2}, format="json")
    assert answer.status_code == 201 and answer["Content-Type"] == "application/pdf"
    assert PrintedCards.objects.get(game=game).cards == 2
    too_many = api.post(f"/api/games/{game.pk}/table-print/", {"series": "A", "count": 61}, format="json")
    assert too_many.status_code == 400
