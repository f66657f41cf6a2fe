"""The posted signage of prize programs: the digest of the terms kept with each version, the printed prize
table (its QR code opens the public page of the terms, its digest printed in groups of four), the public
page that recomputes it, and the short digest on the room's screens (snapshot and on change)."""

from __future__ import annotations

import io
from typing import Any

import pypdf
import pytest
from django.test import Client

from bingo.traditional.programs import terms
from bingo.traditional.services import programs as svc
from bingo.traditional.services.programs.config import activation_terms, change_terms
from bingo.traditional.services.readmodels import screen_snapshot
from bingo.traditional.signage import prize_table_pdf
from halls.errors import Conflict
from halls.models import Room
from tests.cashier.pdf_reader import filled_rects, is_qr_of, qr_matrix

AUTH = "ML-DGJ-2025/017"
PRIMA: dict[str, Any] = {"funding_percent": "2.5", "amount": "30", "authorisation_ref": AUTH}


def pdf_text(pdf: bytes) -> str:
    return " ".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf)).pages)


@pytest.fixture
def prima(room: Room, operator: Any) -> Any:
    return svc.activate_program(
        room=room, code="PRIMA", program_type="BA-1", params=PRIMA, name="Prima 30", actor=operator
    )


def test_an_activation_keeps_the_digest_of_the_terms_it_put_in_force(room, operator):
    proposed = activation_terms(room=room, code=" PRIMA ", program_type="BA-1", params=PRIMA, name="Prima 30")
    prima = svc.activate_program(
        room=room, code="PRIMA", program_type="BA-1", params=PRIMA, name="Prima 30", actor=operator
    )
    version = prima.versions.get()
    assert version.terms == proposed
    assert version.digest == terms.digest(proposed)
    assert proposed["params"] == PRIMA and proposed["effective_from"] is None
    # Once activated, the same terms are refused: the room has the code.
    with pytest.raises(Conflict):
        activation_terms(room=room, code="PRIMA", program_type="BA-1", params=PRIMA, name="Prima 30")


def test_a_new_version_keeps_the_digest_of_its_own_terms(prima):
    new = {**PRIMA, "amount": "50"}
    expected = change_terms(program=prima, params=new)
    row = svc.change_program(program=prima, params=new, actor=prima.created_by)
    assert row.digest == terms.digest(expected) != prima.versions.get(version=1).digest
    assert expected["params"]["amount"] == "50"


def test_the_rooms_screens_show_the_short_digest_of_the_program_in_force(room, prima):
    digest = prima.versions.get().digest
    shown = screen_snapshot(room)["programs"]
    assert [(p["code"], p["digest_short"]) for p in shown] == [("PRIMA", terms.short(digest))]
    assert "digest" not in shown[0]  # the screens get the short form only


def test_the_change_event_carries_the_new_digest_for_the_screens(prima, django_capture_on_commit_callbacks):
    from halls.models import AuditEntry

    new = {**PRIMA, "amount": "50"}
    with django_capture_on_commit_callbacks(execute=True):
        row = svc.change_program(program=prima, params=new, actor=prima.created_by)
    entry = AuditEntry.objects.filter(action="programs.changed").latest("pk")
    assert entry.data["digest"] == row.digest


def test_the_prize_table_prints_the_terms_the_digest_and_a_qr_of_the_public_page(room):
    put = activation_terms(room=room, code="PRIMA", program_type="BA-1", params=PRIMA, name="Prima 30")
    digest = terms.digest(put)
    url = f"https://hall.example/t/{digest}/"
    pdf = prize_table_pdf(terms=put, digest=digest, url=url, venue="Sala Test", room=room.name, proposal=7)
    text = pdf_text(pdf)
    assert "Prima 30" in text and AUTH in text and "2.5" in text
    assert terms.grouped(digest)[:39] in text  # the first eight groups, in the line the sheet prints
    assert terms.short(digest) in text
    assert is_qr_of(qr_matrix(filled_rects(pdf)), url)


def test_the_public_page_shows_the_terms_and_recomputes_their_digest(client: Client, prima):
    digest = prima.versions.get().digest
    page = client.get(f"/t/{digest}/")
    assert page.status_code == 200
    body = page.content.decode()
    assert 'data-status="in_force"' in body and 'data-recomputed="ok"' in body and "Prima 30" in body
    answer = client.get(f"/t/{terms.grouped(digest).replace(' ', '-')}/?format=json").json()
    assert answer["digest"] == digest and terms.digest(answer["terms"]) == digest
    assert answer["status"] == "in_force"


def test_the_public_page_of_unknown_terms_is_not_found(client: Client, prima):
    assert client.get("/t/" + "0" * 64 + "/").status_code == 404
    answer = client.get("/t/nothex/?format=json")
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "unknown_terms"


def test_a_replaced_version_says_so_on_its_public_page(client: Client, prima):
    old = prima.versions.get().digest
    svc.change_program(program=prima, params={**PRIMA, "amount": "50"}, actor=prima.created_by)
    assert client.get(f"/t/{old}/?format=json").json()["status"] == "replaced"
