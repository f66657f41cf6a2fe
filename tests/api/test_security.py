"""Issue 10, the HTTP side: what an anonymous caller can make the server do, and how every /api/ error looks.

- the token exchange and the login pages are throttled per address *before* any password is hashed, and a
  username is locked out at an address after 5 wrong passwords (django-axes): the 6th try, even with the
  right password, is refused without hashing;
- wrong device tokens and unknown screen tokens are counted per address; past the rate that address is
  refused before its token is looked at, while other addresses are served;
- every /api/ error is the JSON envelope: no such URL, malformed or out-of-range ids, bodies too large,
  JSON nested too deep, a server error.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.test import Client
from rest_framework.test import APIClient

from halls.models import Screen, Venue
from tests.api_support import refused
from tests.conftest import make_user
from tests.machines.machine_fixtures import register

TOKEN_URL = "/api/auth/token/"


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every password hash computed (a check of a password, or the dummy hash for an unknown user)."""
    calls: list[str] = []
    encode = PBKDF2PasswordHasher.encode

    def counting(self: PBKDF2PasswordHasher, password: str, salt: str, iterations: int | None = None) -> str:
        calls.append(password)
        return encode(self, password, salt, iterations)

    monkeypatch.setattr(PBKDF2PasswordHasher, "encode", counting)
    return calls


def envelope(answer: Any, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.content
    assert answer["Content-Type"].startswith("application/json"), answer["Content-Type"]
    error: dict[str, Any] = answer.json()["error"]
    assert error["code"] == code, error
    assert error["message"]
    return error


# --- throttles and lockouts, before the password hash ---------------------------------------------------


def test_token_exchanges_are_throttled_per_address_before_hashing(db, settings, hashes):
    settings.HALL_THROTTLE_RATES = {**settings.HALL_THROTTLE_RATES, "auth": "3/min"}
    client = APIClient(REMOTE_ADDR="203.0.113.7")
    for n in range(3):  # other usernames each time: the per-username lockout is not what stops this
        answer = client.post(TOKEN_URL, {"username": f"guess{n}", "password": "x"}, format="json")
        assert answer.status_code == 400
    assert len(hashes) == 3
    error = envelope(
        client.post(TOKEN_URL, {"username": "g", "password": "x"}, format="json"), 429, "throttled"
    )
    assert "too many" in error["message"].lower()
    assert len(hashes) == 3  # refused before the password was looked at
    # A client's own X-Forwarded-For does not make it someone else.
    spoofed = client.post(
        TOKEN_URL, {"username": "g", "password": "x"}, format="json", HTTP_X_FORWARDED_FOR="198.51.100.1"
    )
    assert spoofed.status_code == 429
    # Another address is served.
    other = APIClient(REMOTE_ADDR="203.0.113.8")
    assert other.post(TOKEN_URL, {"username": "g", "password": "x"}, format="json").status_code == 400


def test_five_wrong_passwords_lock_the_username_out_even_for_the_right_one(db, caller, hashes):
    client = APIClient(REMOTE_ADDR="203.0.113.9")
    for _ in range(4):
        wrong = client.post(TOKEN_URL, {"username": "caller", "password": "wrong"}, format="json")
        refused(wrong, 400, "invalid")
    fifth = client.post(TOKEN_URL, {"username": "caller", "password": "wrong"}, format="json")
    envelope(fifth, 429, "locked_out")
    assert len(hashes) == 5
    hashed = len(hashes)
    right = client.post(TOKEN_URL, {"username": "caller", "password": "pw-caller"}, format="json")
    envelope(right, 429, "locked_out")
    assert len(hashes) == hashed  # the lockout is checked before the password hash
    # The same username from another address, and the right password, still gets its token.
    elsewhere = APIClient(REMOTE_ADDR="203.0.113.10")
    answer = elsewhere.post(TOKEN_URL, {"username": "caller", "password": "pw-caller"}, format="json")
    assert answer.status_code == 200 and answer.json()["token"]


@pytest.mark.parametrize("login_url", ["/accounts/login/", "/admin/login/"])
def test_the_login_pages_lock_a_username_out_after_five_wrong_passwords(db, login_url, hashes):
    user = make_user("boss")
    user.is_staff = user.is_superuser = True
    user.save()
    client = Client(REMOTE_ADDR="203.0.113.11")
    for _ in range(4):
        answer = client.post(login_url, {"username": "boss", "password": "wrong"})
        assert answer.status_code == 200  # the form again, with its error
    assert client.post(login_url, {"username": "boss", "password": "wrong"}).status_code == 429
    hashed = len(hashes)
    locked = client.post(login_url, {"username": "boss", "password": "pw-boss"})
    assert locked.status_code == 429
    assert "too many failed logins" in locked.content.decode().lower()
    assert len(hashes) == hashed
    assert "_auth_user_id" not in client.session


def test_login_page_posts_are_throttled_per_address_before_hashing(db, settings, hashes):
    settings.HALL_THROTTLE_RATES = {**settings.HALL_THROTTLE_RATES, "login": "2/min"}
    client = Client(REMOTE_ADDR="203.0.113.12")
    for n in range(2):
        assert client.post("/accounts/login/", {"username": f"u{n}", "password": "x"}).status_code == 200
    hashed = len(hashes)
    answer = client.post("/admin/login/", {"username": "u9", "password": "x"})
    assert answer.status_code == 429 and answer["Retry-After"]
    assert len(hashes) == hashed
    assert client.get("/accounts/login/").status_code == 200  # reading the page is not limited


def test_wrong_device_tokens_are_counted_and_then_refused_before_the_lookup(settings, venue, operator):
    settings.HALL_THROTTLE_RATES = {**settings.HALL_THROTTLE_RATES, "device_failures": "3/min"}
    machine, token = register(venue, operator)
    batch: dict[str, list[Any]] = {"messages": []}
    url = "/api/gateway/messages/"
    attacker = APIClient(REMOTE_ADDR="203.0.113.13")
    good: dict[str, Any] = {"HTTP_AUTHORIZATION": f"Device {machine.asset_number}:{token}"}
    bad: dict[str, Any] = {"HTTP_AUTHORIZATION": f"Device {machine.asset_number}:not-{token}"}
    # Good tokens are never counted.
    for _ in range(5):
        assert attacker.post(url, batch, format="json", **good).status_code == 200
    for _ in range(3):
        envelope(attacker.post(url, batch, format="json", **bad), 401, "bad_device_token")
    envelope(attacker.post(url, batch, format="json", **bad), 429, "throttled")
    envelope(attacker.post(url, batch, format="json", **good), 429, "throttled")
    # The machines at other addresses go on.
    assert APIClient(REMOTE_ADDR="203.0.113.14").post(url, batch, format="json", **good).status_code == 200


def test_unknown_screen_tokens_are_counted_and_then_refused(settings, screen: Screen):
    settings.HALL_THROTTLE_RATES = {**settings.HALL_THROTTLE_RATES, "screen_failures": "3/min"}
    client = Client(REMOTE_ADDR="203.0.113.15")
    for _ in range(5):
        assert client.get(f"/screens/{screen.token}/snapshot/").status_code == 200
    for n in range(3):
        assert client.get(f"/screens/guess-{n}/snapshot/").status_code == 404
    refusal = client.get(f"/screens/{screen.token}/snapshot/")
    envelope(refusal, 429, "throttled")
    assert client.get(f"/screens/{screen.token}/").status_code == 429
    assert Client(REMOTE_ADDR="203.0.113.16").get(f"/screens/{screen.token}/").status_code == 200


# --- every /api/ error is the JSON envelope -------------------------------------------------------------


@pytest.fixture
def operator_api(operator) -> APIClient:
    client = APIClient()
    client.force_authenticate(operator)
    return client


@pytest.mark.parametrize(
    "url",
    [
        "/api/no-such-thing/",
        "/api/games/abc/",
        "/api/games/-1/",
        "/api/games/99999999999999999999/",
        "/api/pools/9223372036854775808/members/",
        "/api/series/1/cards/99999999999999999999/",
    ],
)
def test_unknown_urls_and_malformed_or_huge_ids_are_a_json_404(operator_api, url):
    envelope(operator_api.get(url), 404, "not_found")


def test_a_body_over_the_limit_is_a_json_413(db, settings, operator_api):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    body = json.dumps({"username": "x" * 20_000, "password": "y"})
    envelope(APIClient().post(TOKEN_URL, body, content_type="application/json"), 413, "too_large")
    envelope(operator_api.post("/api/games/", body, content_type="application/json"), 413, "too_large")


@pytest.mark.parametrize("levels", [33, 1_000, 100_000])
def test_json_nested_too_deep_is_a_400(db, hashes, levels):
    body = "[" * levels + "]" * levels
    answer = APIClient().post(TOKEN_URL, body, content_type="application/json")
    error = envelope(answer, 400, "too_deep")
    assert "nested" in error["message"]
    assert hashes == []


def test_json_within_the_depth_limit_is_read(db, caller):
    nested: Any = "deep"
    for _ in range(30):
        nested = [nested]
    body = {"username": "caller", "password": "pw-caller", "extra": nested}
    assert APIClient().post(TOKEN_URL, body, format="json").status_code == 200


def test_a_body_that_is_not_json_is_a_400(db):
    envelope(APIClient().post(TOKEN_URL, "{nope", content_type="application/json"), 400, "parse_error")


def test_a_server_error_under_the_api_is_the_json_envelope(db, operator, monkeypatch):
    from halls import api

    def broken(self: Any, request: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(api.VenueListView, "get", broken)
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(operator)
    error = envelope(client.get("/api/venues/"), 500, "server_error")
    assert "boom" not in error["message"]


def test_pages_outside_the_api_keep_their_html_errors(db):
    answer = Client().get("/no-such-page/")
    assert answer.status_code == 404 and "json" not in answer["Content-Type"]


def test_the_venue_list_still_answers(operator_api, venue: Venue):
    assert [v["name"] for v in operator_api.get("/api/venues/").json()] == [venue.name]
