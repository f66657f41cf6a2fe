"""The gaming tax's doors: the API (rate tables; a venue's returns computed, filed, read back with their
recomputation) and the operator's page in Spanish with its CSV (the bytes filed, their SHA-256 the return's
digest) and PDF. Refusals are 4xx JSON errors naming the problem; nothing is written."""

from __future__ import annotations

import hashlib
import io

import pytest
from django.test import Client
from pypdf import PdfReader

from halls.models import AuditEntry, Role
from halls.tax.models import RateTable, TaxReturn
from tests.api_support import api_client, refused
from tests.conftest import make_user
from tests.tax.tax_support import LINES, Month, past, play_a_month, rate_table, superuser


@pytest.fixture
def month(venue, session, room, card_series, caller, cashier, ball_set) -> Month:
    return play_a_month(
        venue=venue, session=session, room=room, series=card_series, caller=caller, cashier=cashier
    )


@pytest.fixture
def inspector(venue):
    return make_user("inspector", venue, Role.INSPECTOR)


def test_rate_tables_through_the_api(venue, operator) -> None:
    body = {
        "jurisdiction": "ML",
        "reference": "Orden HAC/123/2026",
        "valid_from": "2026-01-01",
        "lines": LINES,
    }
    # Anyone with a role in some venue reads the rate tables; a user with no role reads nothing.
    assert api_client(make_user("stranger")).get("/api/tax/rate-tables/").status_code == 403
    made = api_client(superuser()).post("/api/tax/rate-tables/", body, format="json")
    assert made.status_code == 201, made.content
    assert made.json()["rounding"] == "half_up" and len(made.json()["lines"]) == 3
    listed = api_client(operator).get("/api/tax/rate-tables/?jurisdiction=ML").json()["rate_tables"]
    assert [t["reference"] for t in listed] == ["Orden HAC/123/2026"]
    refused(
        api_client(superuser()).post(
            "/api/tax/rate-tables/",
            {**body, "valid_from": "2026-03-01", "lines": [{**LINES[0], "basis": "profit"}]},
            format="json",
        ),
        400,
        "bad_rate_table",
        "lines[0]",
    )
    refused(
        api_client(superuser()).post(
            "/api/tax/rate-tables/", {**body, "valid_from": "2026-03-01"}, format="json"
        ),
        409,
        "rate_tables_overlap",
    )
    table_id = made.json()["id"]
    changed = api_client(superuser()).put(
        f"/api/tax/rate-tables/{table_id}/", {**body, "valid_until": "2026-12-31"}, format="json"
    )
    assert changed.status_code == 200 and changed.json()["valid_until"] == "2026-12-31"
    assert RateTable.objects.count() == 1


def test_returns_through_the_api(month, venue, operator, inspector) -> None:
    rate_table()
    label = month.period.label
    before = TaxReturn.objects.count(), AuditEntry.objects.count()
    refused(
        api_client(operator).get(f"/api/tax/venues/{venue.pk}/returns/compute/?period={label}"),
        409,
        "period_not_closed",
        label,
    )
    refused(
        api_client(operator).post(f"/api/tax/venues/{venue.pk}/returns/", {"period": label}),
        409,
        "period_not_closed",
    )
    refused(
        api_client(operator).get(f"/api/tax/venues/{venue.pk}/returns/compute/?period=2026-13"),
        400,
        "bad_period",
    )
    assert (TaxReturn.objects.count(), AuditEntry.objects.count()) == before
    past(venue, month.period)
    computed = api_client(inspector).get(f"/api/tax/venues/{venue.pk}/returns/compute/?period={label}")
    assert computed.status_code == 200 and computed.json()["total_due"] == "59.92"
    assert computed.json()["filed"] is False
    # The inspector reads; only the operator files.
    assert (
        api_client(inspector).post(f"/api/tax/venues/{venue.pk}/returns/", {"period": label}).status_code
        == 403
    )
    filed = api_client(operator).post(f"/api/tax/venues/{venue.pk}/returns/", {"period": label})
    assert filed.status_code == 201, filed.content
    assert (filed.json()["total_due"], filed.json()["digest"]) == ("59.92", computed.json()["digest"])
    refused(
        api_client(operator).post(f"/api/tax/venues/{venue.pk}/returns/", {"period": label}),
        409,
        "return_filed",
    )
    read = api_client(inspector).get(f"/api/tax/venues/{venue.pk}/returns/{label}/").json()
    assert read["same"] is True and read["recomputed_digest"] == read["digest"]
    listed = api_client(operator).get(f"/api/tax/venues/{venue.pk}/returns/").json()
    assert [r["period"] for r in listed["returns"]] == [label] and listed["period_kind"] == "month"
    stranger = make_user("stranger")
    assert api_client(stranger).get(f"/api/tax/venues/{venue.pk}/returns/").status_code == 404


def test_the_returns_page_in_spanish_computes_files_and_serves_the_filed_csv_and_pdf(
    month, venue, operator
) -> None:
    rate_table()
    label = month.period.label
    client = Client(headers={"accept-language": "es"})
    client.cookies["django_language"] = "es"
    client.force_login(operator)
    page = client.get(f"/tax/venues/{venue.pk}/?period={label}")
    assert page.status_code == 409
    assert "no se ha cerrado" in page.content.decode()
    past(venue, month.period)
    page = client.get(f"/tax/venues/{venue.pk}/?period={label}")
    text = page.content.decode()
    assert page.status_code == 200 and "Declaraciones del impuesto sobre el juego" in text
    assert "Borrador" in text and 'data-total="59.92">59,92\u00a0€<' in text
    filed = client.post(f"/tax/venues/{venue.pk}/file/", {"period": label})
    assert filed.status_code == 302
    tax_return = TaxReturn.objects.get(venue=venue, period=label)
    text = client.get(f"/tax/venues/{venue.pk}/?period={label}").content.decode()
    assert "Presentada" in text and tax_return.digest in text
    csv = client.get(f"/tax/venues/{venue.pk}/returns/{label}.csv")
    assert hashlib.sha256(csv.content).hexdigest() == tax_return.digest
    pdf = client.get(f"/tax/venues/{venue.pk}/returns/{label}.pdf")
    assert pdf.content.startswith(b"%PDF-")
    words = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.content)).pages)
    assert "59,92" in words and label in words and "Bingo tradicional" in words and tax_return.digest in words
    again = client.post(f"/tax/venues/{venue.pk}/file/", {"period": label})
    assert "error=" in again["Location"]
    assert TaxReturn.objects.filter(venue=venue).count() == 1
