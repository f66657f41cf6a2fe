"""The operators' API of electronic bingo (/api/electronic/): a speciality created and versioned, terminals
registered (token once), software approved, the verification run and read, the session opened and closed;
other roles and other venues refused."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from bingo.electronic.models import EGameState, ElectronicGame, Speciality, Terminal, TerminalState
from halls.models import Proposal, Role, Room
from tests.api_support import api_client, refused
from tests.bingo.electronic.support import RULES_90, make_speciality
from tests.conftest import make_user
from tests.four_eyes_support import approved

pytestmark = pytest.mark.django_db

API = "/api/electronic/"


def test_the_operator_sets_up_a_speciality_verifies_it_and_opens_a_session(venue: Any, operator: Any) -> None:
    api = api_client(operator)
    room = Room.objects.create(venue=venue, name="Sala E")
    made = api.post(
        f"{API}venues/{venue.pk}/specialities/",
        {
            "room": room.pk,
            "code": "E90",
            "name": "Electrónico 90",
            "rules": RULES_90,
            "authorisation_ref": "AUT-1",
        },
        format="json",
    )
    # Four eyes: the speciality (its prize table) is proposed; a second operator approves it.
    assert made.status_code == 202 and made.json()["proposal"]["kind"] == "speciality.create", made.content
    assert not Speciality.objects.exists()
    refused(
        api.post(f"/api/proposals/{made.json()['proposal']['id']}/approve/", {"password": "pw-operator"}),
        403,
        "same_person",
    )
    done = approved(made)
    assert done.decided_by is not None and done.decided_by.username == "second-operator"
    speciality = api.get(f"{API}specialities/{done.result['speciality']}/").json()
    assert (speciality["code"], speciality["family"], speciality["running"]) == ("E90", "electronic", False)
    assert [v["number"] for v in speciality["versions"]] == [1]
    assert speciality["open_session"] is None and speciality["latest_verification"] is None
    sid = speciality["id"]
    assert [s["code"] for s in api.get(f"{API}venues/{venue.pk}/specialities/").json()] == ["E90"]

    version = api.post(
        f"{API}specialities/{sid}/versions/",
        {"rules": {**RULES_90, "card_price": "1.00"}, "authorisation_ref": "AUT-2"},
        format="json",
    )
    assert version.status_code == 202 and version.json()["proposal"]["kind"] == "speciality.rules"
    assert approved(version).result == {"speciality": sid, "version": 2}
    assert [v["number"] for v in api.get(f"{API}specialities/{sid}/").json()["versions"]] == [1, 2]

    registered = api.post(f"{API}specialities/{sid}/terminals/", {"name": "Terminal 1"}, format="json")
    assert registered.status_code == 201, registered.content
    terminal, token = registered.json()["terminal"], registered.json()["token"]
    assert terminal["state"] == "in_service" and terminal["verified_by"] is None and len(token) > 20
    rotated = api.post(f"{API}terminals/{terminal['id']}/rotate-token/")
    assert rotated.status_code == 200 and rotated.json()["token"] != token

    software = api.post(
        f"{API}venues/{venue.pk}/software/", {"version": "3.1", "authorisation_ref": "AUT-SW"}, format="json"
    )
    assert software.status_code == 201 and software.json()["withdrawn_at"] is None
    Terminal.objects.filter(pk=terminal["id"]).update(  # what its `hello` reports
        software_version="3.1", clock_offset_ms=40, last_seen_at=timezone.now()
    )

    refused(api.post(f"{API}specialities/{sid}/sessions/"), 409, "verification_missing", "verification")
    run = api.post(f"{API}specialities/{sid}/verifications/")
    assert run.status_code == 201, run.content
    body = run.json()
    assert body["passed"] and [t["passed"] for t in body["terminals"]] == [True]
    assert {c["check"] for c in body["system_checks"]} == {
        "database",
        "migrations",
        "broker",
        "channel_layer",
        "clock",
    }
    assert all(r["statistic"] <= r["threshold"] for r in body["rng_checks"])
    assert [v["id"] for v in api.get(f"{API}specialities/{sid}/verifications/").json()] == [body["id"]]
    detail = api.get(f"{API}verifications/{body['id']}/").json()
    assert detail["terminals"][0]["name"] == "Terminal 1"
    assert [c["check"] for c in detail["terminals"][0]["checks"]] == ["alive", "software", "clock"]

    opened = api.post(f"{API}specialities/{sid}/sessions/")
    assert opened.status_code == 201, opened.content
    session = opened.json()
    assert session["verification"] == body["id"] and session["closed_at"] is None
    assert api.get(f"{API}specialities/{sid}/").json()["open_session"] == session["id"]
    started = api.post(f"{API}specialities/{sid}/running/", {"running": True}, format="json")
    assert started.status_code == 200 and started.json()["running"] is True
    game = ElectronicGame.objects.get(speciality_id=sid)  # its first game opened its sales
    assert (game.number, game.state, game.session_id) == (1, EGameState.SELLING, session["id"])
    stopped = api.post(f"{API}specialities/{sid}/running/", {"running": False}, format="json")
    assert stopped.status_code == 200 and stopped.json()["running"] is False
    refused(api.post(f"{API}specialities/{sid}/verifications/"), 409, "session_open", "close")
    closed = api.post(f"{API}sessions/{session['id']}/close/")
    assert closed.status_code == 200 and closed.json()["closed_by"] == "operator"
    refused(api.post(f"{API}sessions/{session['id']}/close/"), 409, "session_closed")
    refused(api.post(f"{API}specialities/{sid}/sessions/"), 409, "verification_stale", "verify again")
    assert [s["id"] for s in api.get(f"{API}specialities/{sid}/sessions/").json()] == [session["id"]]


def test_a_failed_terminal_is_shown_failed_and_stays_out_until_it_passes(venue: Any, operator: Any) -> None:
    api = api_client(operator)
    speciality = make_speciality(venue, operator)
    terminal = api.post(f"{API}specialities/{speciality.pk}/terminals/", {"name": "T"}, format="json").json()[
        "terminal"
    ]
    run = api.post(f"{API}specialities/{speciality.pk}/verifications/").json()
    assert run["passed"] and not run["terminals"][0]["passed"]  # never heard from, no software approved
    listed = api.get(f"{API}specialities/{speciality.pk}/terminals/").json()
    assert [(t["id"], t["state"]) for t in listed] == [(terminal["id"], "failed")]
    refused(
        api.post(f"{API}terminals/{terminal['id']}/state/", {"state": "in_service"}, format="json"),
        409,
        "terminal_failed",
    )
    parked = api.post(
        f"{API}terminals/{terminal['id']}/state/",
        {"state": "out_of_service", "reason": "repair"},
        format="json",
    )
    assert parked.status_code == 200 and parked.json()["state"] == "out_of_service"
    assert Terminal.objects.get(pk=terminal["id"]).state == TerminalState.OUT_OF_SERVICE


def test_software_withdrawn_and_approved_again(venue: Any, operator: Any) -> None:
    api = api_client(operator)
    made = api.post(
        f"{API}venues/{venue.pk}/software/", {"version": "1.0", "authorisation_ref": "A"}, format="json"
    )
    refused(
        api.post(
            f"{API}venues/{venue.pk}/software/", {"version": "1.0", "authorisation_ref": "A"}, format="json"
        ),
        409,
        "already_approved",
    )
    withdrawn = api.post(f"{API}software/{made.json()['id']}/withdraw/")
    assert withdrawn.status_code == 200 and withdrawn.json()["withdrawn_at"] is not None
    refused(api.post(f"{API}software/{made.json()['id']}/withdraw/"), 409, "already_withdrawn")
    assert [s["version"] for s in api.get(f"{API}venues/{venue.pk}/software/").json()] == ["1.0"]


def test_bad_rules_are_refused_naming_the_problem_and_nothing_is_made(venue: Any, operator: Any) -> None:
    api = api_client(operator)
    room = Room.objects.create(venue=venue, name="Sala mala")
    answer = api.post(
        f"{API}venues/{venue.pk}/specialities/",
        {
            "room": room.pk,
            "code": "X",
            "name": "X",
            "rules": {**RULES_90, "card_price": "0"},
            "authorisation_ref": "A",
        },
        format="json",
    )
    refused(answer, 400, "bad_rules", "card_price")
    assert not Speciality.objects.exists() and not Proposal.objects.exists()


def test_other_roles_and_other_venues_are_refused(venue: Any, operator: Any, other_venue: Any) -> None:
    speciality = make_speciality(venue, operator)
    cashier = api_client(make_user("cajero", venue, Role.CASHIER))
    refused(cashier.post(f"{API}specialities/{speciality.pk}/verifications/"), 403, "role_required")
    refused(cashier.get(f"{API}venues/{venue.pk}/specialities/"), 403, "role_required")
    stranger = api_client(make_user("otro", other_venue, Role.OPERATOR))
    refused(stranger.get(f"{API}specialities/{speciality.pk}/"), 404, "unknown_speciality")
    refused(stranger.post(f"{API}specialities/{speciality.pk}/sessions/"), 404, "unknown_speciality")
    other_room = Room.objects.create(venue=other_venue, name="Ajena")
    refused(
        api_client(operator).post(
            f"{API}venues/{venue.pk}/specialities/",
            {"room": other_room.pk, "code": "Y", "name": "Y", "rules": RULES_90, "authorisation_ref": "A"},
            format="json",
        ),
        404,
        "unknown_room",
    )
    assert api_client(None).get(f"{API}venues/{venue.pk}/specialities/").status_code == 401
