"""Four eyes on the bingo side, through the API (issue 28): activating or changing a prize program, voiding a
game and correcting a ball after a claim are proposed by one person and made only when a second person of
the venue approves them with their own password; a program's approval carries the digest printed on the
posted prize table, which must be the digest of what is put in force. Every refusal writes nothing."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pypdf
import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from bingo.traditional.models import Ball, BallCorrection, Game, GameState, PrizeProgram
from bingo.traditional.programs import terms
from bingo.traditional.services import claims, draw
from bingo.traditional.services.readmodels import screen_snapshot
from halls.foureyes import params_digest
from halls.models import AuditEntry, Proposal, Role, Room, Venue
from tests.api_support import api_client, refused
from tests.bingo.traditional.game_support import top_row
from tests.cashier.pdf_reader import filled_rects, is_qr_of, qr_matrix
from tests.conftest import make_user

AUTH = "ML-DGJ-2025/017"
PRIMA: dict[str, Any] = {"funding_percent": "2.5", "amount": "30", "authorisation_ref": AUTH}
REASON = "Mis-keyed: the reader read 34"


@pytest.fixture
def second_operator(venue: Venue) -> User:
    return make_user("segunda", venue, Role.OPERATOR)


@pytest.fixture
def second_caller(venue: Venue) -> User:
    return make_user("caller2", venue, Role.CALLER)


def writes() -> tuple[int, int, list[tuple[str, str]]]:
    """What a refused approval must leave as it was: programs, the audit, the proposals' decisions."""
    rows = list(Proposal.objects.order_by("pk").values_list("status", "posted_digest"))
    return PrizeProgram.objects.count(), AuditEntry.objects.count(), rows


def propose_prima(client: APIClient, room: Room, **more: Any) -> dict[str, Any]:
    body = {"code": "PRIMA", "program_type": "BA-1", "params": PRIMA, "name": "Prima 30", **more}
    answer = client.post(f"/api/rooms/{room.pk}/programs/", body, format="json")
    assert answer.status_code == 202, answer.content
    body = answer.json()
    found: dict[str, Any] = {**body["proposal"], "signage": body["signage"], "terms_page": body["terms_page"]}
    return found


def approve(client: APIClient, proposal: dict[str, Any], password: str, posted: str = "") -> Any:
    body = {"password": password, "posted_digest": posted}
    return client.post(f"/api/proposals/{proposal['id']}/approve/", body, format="json")


def pdf_text(pdf: bytes) -> str:
    return " ".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf)).pages)


# --- prize programs: proposed, posted, approved with the posted digest -----------------------------------


def test_a_program_is_proposed_posted_and_activated_when_a_second_operator_approves_the_posted_digest(
    operator_api, operator, second_operator, room
):
    proposal = propose_prima(operator_api, room)
    assert proposal["kind"] == "program.activate" and proposal["status"] == "proposed"
    assert not PrizeProgram.objects.exists()  # nothing in force before the second person
    # The proposal's params are the program's terms; its digest is theirs.
    assert proposal["params"]["params"] == PRIMA and proposal["params"]["room"] == room.pk
    assert proposal["digest"] == terms.digest(proposal["params"]) == params_digest(proposal["params"])

    # The prize table to post is printed from the proposal: its digest and a QR code of the public page.
    sheet = operator_api.get(proposal["signage"])
    assert sheet.status_code == 200 and sheet["Content-Type"] == "application/pdf"
    printed = terms.grouped(proposal["digest"])
    text = pdf_text(sheet.content)
    assert printed[:39] in text and "Prima 30" in text
    url = f"http://testserver/t/{proposal['digest']}/"
    assert proposal["terms_page"] == f"/t/{proposal['digest']}/"
    assert is_qr_of(qr_matrix(filled_rects(sheet.content)), url)

    # The second operator types the digest as the sheet prints it (groups of four).
    answer = approve(api_client(second_operator), proposal, "pw-segunda", posted=printed)
    assert answer.status_code == 200, answer.content
    done = answer.json()
    assert done["status"] == "applied" and done["decided_by"] == "segunda"
    assert done["posted_digest"] == proposal["digest"]
    program = PrizeProgram.objects.get()
    version = program.versions.get()
    assert done["result"] == {"program": program.pk, "version": 1, "digest": proposal["digest"]}
    assert version.digest == proposal["digest"] and version.created_by == second_operator
    # Both names in the audit: the proposal under the proposer, the approval and the activation under
    # the approver, with the posted digest.
    entries = {e.action: e for e in AuditEntry.objects.filter(venue=room.venue)}
    assert entries["foureyes.proposed"].actor_label == "operator"
    approved = entries["foureyes.approved"]
    assert approved.actor_label == "segunda" and approved.data["proposed_by"] == "operator"
    assert approved.data["posted_digest"] == proposal["digest"]
    assert entries["programs.activated"].actor_label == "segunda"
    # The room's screens show the short form of the digest of the program in force.
    shown = screen_snapshot(room)["programs"]
    assert [p["digest_short"] for p in shown] == [terms.short(proposal["digest"])]
    # The public page now says the posted terms are in force.
    page = APIClient().get(f"/t/{proposal['digest']}/?format=json").json()
    assert page["status"] == "in_force" and page["terms"] == proposal["params"]


def test_the_qr_code_scanned_from_the_sheet_is_accepted_as_the_posted_digest(
    operator_api, second_operator, room
):
    proposal = propose_prima(operator_api, room)
    scanned = f"http://testserver/t/{proposal['digest']}/"
    answer = approve(api_client(second_operator), proposal, "pw-segunda", posted=scanned)
    assert answer.status_code == 200, answer.content
    assert PrizeProgram.objects.filter(code="PRIMA").exists()


def test_the_public_page_shows_a_proposal_waiting_for_its_second_person(operator_api, room):
    proposal = propose_prima(operator_api, room)
    page = APIClient().get(f"/t/{proposal['digest']}/?format=json").json()
    assert page["status"] == "proposed" and page["terms"] == proposal["params"]
    html = APIClient().get(f"/t/{proposal['digest']}/").content.decode()
    assert 'data-status="proposed"' in html and 'data-recomputed="ok"' in html


@pytest.mark.parametrize("case", ["proposer", "expired", "digest_differs", "no_digest", "caller"])
def test_a_refused_program_approval_writes_nothing(
    operator_api, operator, second_operator, caller, room, case
):
    proposal = propose_prima(operator_api, room)
    client, password, posted = api_client(second_operator), "pw-segunda", proposal["digest"]
    if case == "proposer":
        client, password = operator_api, "pw-operator"
    elif case == "expired":
        Proposal.objects.filter(pk=proposal["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    elif case == "digest_differs":
        other = propose_prima(operator_api, room, name="Prima treinta")  # another sheet, another digest
        posted = terms.grouped(other["digest"])
    elif case == "no_digest":
        posted = ""
    elif case == "caller":
        client, password = api_client(caller), "pw-caller"
    before = writes()
    answer = approve(client, proposal, password, posted)
    expected = {
        "proposer": (403, "same_person", "second person"),
        "expired": (409, "proposal_expired", "expired"),
        "digest_differs": (409, "posted_digest_differs", "posted sheet"),
        "no_digest": (400, "posted_digest_required", "digest"),
        "caller": (403, "approver_role_required", "Hall operator"),
    }[case]
    refused(answer, *expected)
    assert writes() == before
    assert not PrizeProgram.objects.exists()


def test_a_bad_program_is_refused_when_proposed_and_nothing_is_written(operator_api, room):
    body = {"code": "EXTRA", "program_type": "BA-2", "params": {**PRIMA, "extraction_order": 12}}
    answer = operator_api.post(f"/api/rooms/{room.pk}/programs/", body, format="json")
    refused(answer, 400, "bad_program")
    assert not Proposal.objects.exists() and not AuditEntry.objects.exists()


def test_a_program_change_is_proposed_and_applied_as_a_new_version_with_its_digest(
    operator_api, second_operator, room
):
    first = propose_prima(operator_api, room)
    other = api_client(second_operator)
    assert approve(other, first, "pw-segunda", first["digest"]).status_code == 200
    program = PrizeProgram.objects.get()
    answer = operator_api.post(
        f"/api/programs/{program.pk}/versions/", {"params": {**PRIMA, "amount": "50"}}, format="json"
    )
    assert answer.status_code == 202, answer.content
    change = answer.json()["proposal"]
    assert change["kind"] == "program.change" and program.versions.count() == 1
    assert change["params"]["params"]["amount"] == "50" and change["params"]["code"] == "PRIMA"
    done = approve(other, change, "pw-segunda", change["digest"])
    assert done.status_code == 200, done.content
    version = program.versions.get(version=2)
    assert version.digest == change["digest"] and version.params["amount"] == "50"
    assert [p["digest_short"] for p in screen_snapshot(room)["programs"]] == [terms.short(change["digest"])]


def test_the_signage_of_another_venues_proposal_is_not_found(operator_api, room, other_venue):
    proposal = propose_prima(operator_api, room)
    stranger = api_client(make_user("otro", other_venue, Role.OPERATOR))
    refused(stranger.get(proposal["signage"]), 404, "unknown_proposal")


# --- voiding a game ---------------------------------------------------------------------------------------


def test_a_void_is_proposed_and_made_when_a_second_person_approves_it(
    caller_api, caller, second_caller, drawing
):
    answer = caller_api.post(
        f"/api/games/{drawing.pk}/void/",
        {"reason": "the blower failed", "public_message": "Partida anulada"},
        format="json",
    )
    assert answer.status_code == 202, answer.content
    proposal = answer.json()["proposal"]
    assert proposal["kind"] == "game.void" and proposal["target"] == f"game:{drawing.pk}"
    drawing.refresh_from_db()
    assert drawing.state == GameState.DRAWING  # not void until approved
    refused(approve(caller_api, proposal, "pw-caller"), 403, "same_person")
    done = approve(api_client(second_caller), proposal, "pw-caller2")
    assert done.status_code == 200, done.content
    drawing.refresh_from_db()
    assert drawing.state == GameState.VOID and drawing.void_reason == "the blower failed"
    voided = AuditEntry.objects.get(action="game.voided")
    assert voided.actor_label == "caller2"
    approved = AuditEntry.objects.get(action="foureyes.approved")
    assert approved.data["proposed_by"] == "caller"


def test_a_void_without_a_reason_is_refused_when_proposed(caller_api, drawing):
    answer = caller_api.post(f"/api/games/{drawing.pk}/void/", {"reason": " "}, format="json")
    assert answer.status_code == 400
    assert not Proposal.objects.exists()


def test_a_closed_game_cannot_be_proposed_for_voiding(caller_api, drawing):
    Game.objects.filter(pk=drawing.pk).update(state=GameState.CLOSED)
    refused(
        caller_api.post(f"/api/games/{drawing.pk}/void/", {"reason": "x"}, format="json"), 409, "wrong_state"
    )
    assert not Proposal.objects.exists()


# --- correcting a ball after a claim -----------------------------------------------------------------------


def test_before_any_claim_the_caller_corrects_alone(caller_api, caller, drawing):
    for n in (17, 43, 5):
        draw.enter_ball(game=drawing, number=n, actor=caller)
    answer = caller_api.post(
        f"/api/games/{drawing.pk}/corrections/", {"ordinal": 2, "number": 34, "reason": REASON}, format="json"
    )
    assert answer.status_code == 201, answer.content
    assert not Proposal.objects.exists()


def test_after_a_claim_a_correction_is_proposed_and_made_when_a_second_person_approves_it(
    caller_api, caller, second_caller, drawing, card_series
):
    row = top_row(card_series, 7)
    spare = next(n for n in range(90, 0, -1) if n not in row)
    for n in (spare, *row[:3]):
        draw.enter_ball(game=drawing, number=n, actor=caller)
    claims.file_claim(game=drawing, kind="line", series_code="A", serial=7, actor=caller)  # not valid yet
    free = next(n for n in range(1, 91) if n not in row and n != spare)
    answer = caller_api.post(
        f"/api/games/{drawing.pk}/corrections/",
        {"ordinal": 1, "number": free, "reason": REASON},
        format="json",
    )
    assert answer.status_code == 202, answer.content
    proposal = answer.json()["proposal"]
    assert proposal["kind"] == "ball.correct" and not BallCorrection.objects.exists()
    assert Ball.objects.get(game=drawing, ordinal=1).number == spare
    done = approve(api_client(second_caller), proposal, "pw-caller2")
    assert done.status_code == 200, done.content
    correction = BallCorrection.objects.get()
    assert (correction.old_number, correction.new_number, correction.corrected_by) == (
        spare,
        free,
        second_caller,
    )
    assert Ball.objects.get(game=drawing, ordinal=1).number == free


def test_a_bad_correction_after_a_claim_is_refused_when_proposed(caller_api, caller, drawing, card_series):
    row = top_row(card_series, 7)
    for n in row[:2]:
        draw.enter_ball(game=drawing, number=n, actor=caller)
    claims.file_claim(game=drawing, kind="line", series_code="A", serial=7, actor=caller)
    answer = caller_api.post(
        f"/api/games/{drawing.pk}/corrections/", {"ordinal": 1, "number": 95, "reason": REASON}, format="json"
    )
    assert answer.status_code == 400
    assert not Proposal.objects.exists()


# --- the admin and the proposals page ----------------------------------------------------------------------


def staff(user: User) -> Any:
    from django.contrib.auth.models import Permission
    from django.test import Client

    user.is_staff = True
    user.save()
    user.user_permissions.add(Permission.objects.get(codename="view_proposal"))
    client = Client()
    client.force_login(user)
    return client


def test_the_admin_approves_a_program_with_the_digest_typed_from_the_sheet(
    operator_api, second_operator, room
):
    proposal = propose_prima(operator_api, room)
    client = staff(second_operator)
    url = "/admin/halls/proposal/"
    form = {"action": "approve_proposal", "_selected_action": [proposal["id"]], "decide": "1"}
    other = "ab" * 32
    before = writes()
    differs = client.post(url, {**form, "password": "pw-segunda", "posted_digest": other})
    assert differs.status_code == 200 and "is not the digest of this proposal" in differs.content.decode()
    assert writes() == before
    done = client.post(
        url, {**form, "password": "pw-segunda", "posted_digest": terms.grouped(proposal["digest"]).lower()}
    )
    assert done.status_code == 302
    assert PrizeProgram.objects.get().versions.get().digest == proposal["digest"]


def test_the_proposals_page_links_the_sheet_to_post(operator_api, second_operator, room):
    from django.test import Client

    proposal = propose_prima(operator_api, room)
    client = Client()
    client.force_login(second_operator)
    page = client.get("/proposals/").content.decode()
    assert f'href="/api/program-proposals/{proposal["id"]}/signage.pdf"' in page
    sheet = client.get(f"/api/program-proposals/{proposal['id']}/signage.pdf")
    assert sheet.status_code == 200 and sheet.content.startswith(b"%PDF")


def test_the_admin_approves_a_void_and_refuses_the_proposer(caller_api, caller, second_caller, drawing):
    from tests.four_eyes_support import admin_approve

    answer = caller_api.post(f"/api/games/{drawing.pk}/void/", {"reason": "the reader failed"}, format="json")
    proposal = answer.json()["proposal"]
    before = writes()
    own = admin_approve(proposal["id"], caller)
    assert own.status_code == 200 and "second person" in own.content.decode()
    assert writes() == before
    drawing.refresh_from_db()
    assert drawing.state == GameState.DRAWING
    assert admin_approve(proposal["id"], second_caller).status_code == 302
    drawing.refresh_from_db()
    assert drawing.state == GameState.VOID


def test_the_admin_approves_a_new_prize_table_of_an_electronic_speciality(
    operator_api, operator, second_operator, venue
):
    from bingo.electronic.models import SpecialityVersion
    from tests.bingo.electronic.support import RULES_90, make_speciality
    from tests.four_eyes_support import admin_approve

    speciality = make_speciality(venue, operator)
    answer = operator_api.post(
        f"/api/electronic/specialities/{speciality.pk}/versions/",
        {"rules": {**RULES_90, "card_price": "1.00"}, "authorisation_ref": "AUT-2"},
        format="json",
    )
    assert answer.status_code == 202, answer.content
    assert SpecialityVersion.objects.filter(speciality=speciality).count() == 1
    wrong = admin_approve(answer.json()["proposal"]["id"], second_operator, password="nope")
    assert wrong.status_code == 200 and SpecialityVersion.objects.filter(speciality=speciality).count() == 1
    assert admin_approve(answer.json()["proposal"]["id"], second_operator).status_code == 302
    assert SpecialityVersion.objects.filter(speciality=speciality).count() == 2
