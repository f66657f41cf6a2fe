"""The inspector (issue 15, spec §8): reads every page and report of their venue, runs the audit
verification, and writes nothing: every write of the API's schema answers 403, by token and by session."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from bingo.traditional.models import Game
from bingo.traditional.services import games
from halls import access
from halls.errors import PermissionDenied
from halls.models import GameSession, Role, StaffRole
from tests.api_support import api_client, refused
from tests.conftest import make_user

UNSAFE = ("post", "put", "patch", "delete")
# What an inspector may still POST: the token exchange and the audit verification (a read).
ALLOWED = {"/api/auth/token/", "/api/venues/{venue_id}/audit/verify/"}


@pytest.fixture
def inspector(venue):
    return make_user("inspector", venue, Role.INSPECTOR)


def _writes() -> list[tuple[str, str]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)  # type: ignore[no-untyped-call]
    found = [
        (method, path)
        for path, operations in schema["paths"].items()
        for method in operations
        if method in UNSAFE and path not in ALLOWED
    ]
    assert len(found) > 100, len(found)  # the whole API, not a corner of it
    return found


def _filled(path: str, venue_id: int) -> str:
    return re.sub(r"\{venue_id\}", str(venue_id), re.sub(r"\{(?!venue_id)[^}]+\}", "1", path))


def test_every_write_of_the_api_is_refused_to_the_inspector_with_403(inspector, venue, room, session):
    writes = _writes()
    by_token, by_session = api_client(inspector), Client()
    by_session.force_login(inspector)
    for method, path in writes:
        url = _filled(path, venue.pk)
        for client in (by_token, by_session):
            response = getattr(client, method)(url, {}, content_type="application/json")
            assert response.status_code == 403, (method, url, response.status_code, response.content[:200])
            assert response.json()["error"]["code"] == "read_only", (method, url)
    # Nothing was written: the session is as it was, no game was made.
    session.refresh_from_db()
    assert session.closed_at is None and not Game.objects.exists()


def test_the_inspector_reads_the_venue_and_runs_the_audit_verification(
    inspector, venue, room, session, manual_game, other_venue
):
    client = api_client(inspector)
    venues = client.get("/api/venues/").json()
    assert [(v["id"], v["roles"]) for v in venues] == [(venue.pk, ["inspector"])]
    assert client.get(f"/api/sessions/{session.pk}/").status_code == 200
    recall = client.get(f"/api/games/{manual_game.pk}/recall/")
    assert recall.status_code == 200 and recall.json()["number"] == manual_game.number
    for method in ("get", "post"):
        report = getattr(client, method)(f"/api/venues/{venue.pk}/audit/verify/").json()
        assert report["ok"] is True and report["chains"][0]["length"] >= 2, report
    # Another venue's: not even found.
    refused(client.get(f"/api/venues/{other_venue.pk}/audit/verify/"), 404, "not_found")


def test_an_inspector_who_also_works_elsewhere_still_writes_nothing_in_the_inspected_venue(
    venue, room, session, other_venue
):
    """Not only an inspector (a cashier in another venue): the middleware lets the request through, and
    the venue's own role check refuses it."""
    user = make_user("both", venue, Role.INSPECTOR)
    StaffRole.objects.create(user=user, venue=other_venue, role=Role.CASHIER)
    client = api_client(user)
    assert client.get(f"/api/sessions/{session.pk}/").status_code == 200
    refused(client.post(f"/api/sessions/{session.pk}/close/"), 403, "role_required")
    refused(
        client.post("/api/games/", {"room": room.pk, "draw_source": "manual"}, format="json"),
        403,
        "role_required",
    )
    session.refresh_from_db()
    assert session.closed_at is None and not Game.objects.exists()


def test_no_service_records_a_write_while_an_inspector_reads(inspector, venue, room, session):
    """The last lock: within a read that granted an inspector's rights, the audit (every write's) refuses."""
    with access.reading():
        assert access.roles_in(inspector, venue.pk) == access.ALL_ROLES
        with pytest.raises(PermissionDenied) as refusal:
            games.create_game(room=room, actor=inspector, draw_source="manual")
        assert refusal.value.code == "read_only"
    assert not Game.objects.exists()
    # Outside a read, the inspector holds the inspector's role only: no write's role.
    assert access.roles_in(inspector, venue.pk) == {Role.INSPECTOR}
    with pytest.raises(PermissionDenied):
        access.require_role(inspector, venue.pk, Role.CALLER)


def test_the_operator_keeps_writing(operator, session: GameSession):
    assert api_client(operator).post(f"/api/sessions/{session.pk}/close/").status_code == 200
    session.refresh_from_db()
    assert session.closed_at is not None


def test_the_inspector_reads_every_get_of_the_api_the_operator_reads(
    inspector, operator, venue, room, session, manual_game, card_series, screen
):
    """Every GET of the schema whose path names the venue's own objects answers the inspector as it
    answers the operator (the same status, and the same body when it is a 200)."""
    known = {
        "venue_id": venue.pk, "room_id": room.pk, "session_id": session.pk, "game_id": manual_game.pk,
        "series_id": card_series.pk, "serial": 1, "screen_id": screen.pk,
    }  # fmt: skip
    schema = SchemaGenerator().get_schema(request=None, public=True)  # type: ignore[no-untyped-call]
    as_inspector, as_operator = api_client(inspector), api_client(operator)
    compared = 0
    for path, operations in schema["paths"].items():
        names = re.findall(r"\{([^}]+)\}", path)
        if "get" not in operations or any(name not in known for name in names):
            continue
        url = path.format(**{name: known[name] for name in names})
        seen, expected = as_inspector.get(url), as_operator.get(url)
        assert seen.status_code == expected.status_code, (url, seen.status_code, seen.content[:200])
        if expected.status_code == 200 and expected["Content-Type"].startswith("application/json"):
            # A clock's reading differs between two requests: the lab clock is compared without its instants.
            instants = {"real", "now"} if url.endswith("/lab-clock/") else set()
            seen_body = (
                {k: v for k, v in seen.json().items() if k not in instants} if instants else seen.json()
            )
            body = (
                {k: v for k, v in expected.json().items() if k not in instants}
                if instants
                else expected.json()
            )
            assert seen_body == body or url == "/api/venues/", url
        compared += 1
    assert compared > 40, compared


def test_the_inspector_opens_the_venues_staff_pages_as_the_operator_does(
    inspector, operator, venue, room, session, manual_game
):
    pages = [
        "/", "/console/", f"/console/rooms/{room.pk}/", "/cashier/", f"/paper/?venue={venue.pk}",
        f"/paper/games/{manual_game.pk}/", f"/machines/floor/?venue={venue.pk}",
        f"/machines/handpays/?venue={venue.pk}", "/tables/", "/inspector/",
        f"/inspector/sessions/{session.pk}/", f"/inspector/games/{manual_game.pk}/",
        f"/inspector/venues/{venue.pk}/statistics/", f"/inspector/venues/{venue.pk}/audit/?verify=1",
    ]  # fmt: skip
    as_inspector, as_operator = Client(), Client()
    as_inspector.force_login(inspector)
    as_operator.force_login(operator)
    for url in pages:
        seen, expected = as_inspector.get(url), as_operator.get(url)
        assert expected.status_code == 200, (url, expected.status_code)
        assert seen.status_code == 200, (url, seen.status_code)


def test_pages_offer_a_write_exactly_when_the_api_lets_it_through(
    venue, room, session, other_venue, operator
):
    """halls.access.may_write (what the pages ask before offering a write control) agrees with what a
    caller's write (closing the session) answers, for every kind of user: the inspector, one who also works
    elsewhere, a cashier, a caller, the operator."""
    both = make_user("both", venue, Role.INSPECTOR)
    StaffRole.objects.create(user=both, venue=other_venue, role=Role.CASHIER)
    users = {
        "inspector": make_user("inspector", venue, Role.INSPECTOR),
        "both": both,
        "cashier": make_user("cajera", venue, Role.CASHIER),
        "caller": make_user("locutor", venue, Role.CALLER),
        "operator": operator,
    }
    offered = {name: access.may_write(user, venue.pk, Role.CALLER) for name, user in users.items()}
    assert offered == {"inspector": False, "both": False, "cashier": False, "caller": True, "operator": True}
    # Inside a read (a page's GET), the inspector's read rights do not turn into a write control.
    with access.reading():
        assert not access.may_write(users["inspector"], venue.pk, Role.CALLER)
        assert access.roles_in(users["inspector"], venue.pk) == access.ALL_ROLES
    for name, user in users.items():
        if offered[name]:
            continue
        answer = api_client(user).post(f"/api/sessions/{session.pk}/close/")
        assert answer.status_code == 403, (name, answer.status_code)
    answer = api_client(users["caller"]).post(f"/api/sessions/{session.pk}/close/")
    assert answer.status_code == 200
