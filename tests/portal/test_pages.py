"""The authority's portal pages: who may read them (the authority's staff on the regulator's node only), and
what each shows from the messages received."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from halls.models import Role
from halls.regulator.models import Alarm, AlarmKind, FeedRefusal, Installation
from tests.conftest import make_user
from tests.portal.support import Sender, accept, anchor_line, anchor_payload, authority_user, register

pytestmark = pytest.mark.django_db

PAGES = ["map", "live", "pools", "anchors", "alarms", "refusals", "taxes", "reconciliations"]
VENUE = "ML-B-0001"


@pytest.fixture(autouse=True)
def _regulator(settings: Any) -> None:
    settings.HALL_ROLE = "regulator"


@pytest.fixture
def authority() -> Client:
    client = Client()
    client.force_login(authority_user())
    return client


@pytest.fixture
def venue() -> Sender:
    return register("Bingo Melilla Centro", uid="a1" * 8, licence=VENUE)


@pytest.mark.parametrize("page", PAGES)
def test_a_visitor_is_sent_to_the_login_and_anyone_not_of_the_authority_is_refused(
    page: str, venue: Any
) -> None:
    url = reverse(f"regulator:{page}")
    answer = Client().get(url)
    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")
    # A venue's operator (as a venue's staff would be), a plain user: 403, nothing of the node shown.
    hall_venue = venue_row()
    for user in (make_user("operador", hall_venue, Role.OPERATOR), make_user("alguien")):
        client = Client()
        client.force_login(user)
        refused = client.get(url)
        assert refused.status_code == 403
        assert b"Bingo Melilla Centro" not in refused.content


def venue_row() -> Any:
    from halls.models import HallCategory, Jurisdiction, Venue

    return Venue.objects.create(
        name="Sala",
        licence_number="ML-B-0009",
        jurisdiction=Jurisdiction.ML,
        hall_category=HallCategory.FIRST,
    )


def test_the_portal_does_not_exist_off_the_regulators_node(authority: Client, settings: Any) -> None:
    settings.HALL_ROLE = "venue"
    assert authority.get(reverse("regulator:map")).status_code == 404
    settings.HALL_ROLE = "central"
    assert authority.get(reverse("regulator:alarms")).status_code == 404


@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_on_a_node_with_no_installation_yet(page: str, authority: Client) -> None:
    answer = authority.get(reverse(f"regulator:{page}"))
    assert answer.status_code == 200
    assert answer.headers["X-Open-Alarms"] == "0"


def test_the_home_of_the_node_is_the_portal(authority: Client) -> None:
    assert authority.get("/")["Location"] == reverse("regulator:map")


def test_the_map_shows_each_installation_live_silent_or_never_heard(authority: Client, venue: Sender) -> None:
    accept(venue, "heartbeat", {"last_sequence": 0})
    silent = register(
        "Bingo Ceuta", uid="b2" * 8, licence="CE-B-0001", latitude="35.8894", longitude="-5.3213"
    )
    accept(silent, "heartbeat", {"last_sequence": 0})
    Installation.objects.filter(pk=silent.installation.pk).update(
        last_message_at=timezone.now() - timedelta(minutes=10)
    )
    register("Central", uid="c3" * 8, kind="central", latitude=None, longitude=None)
    page = authority.get(reverse("regulator:map")).content.decode()
    assert f'<g class="rg-pin is-live" data-installation="{venue.uid}" data-state="live"' in page
    assert f'<g class="rg-pin is-silent" data-installation="{silent.uid}" data-state="silent"' in page
    assert f'data-installation="{"c3" * 8}" data-state="never"' in page  # in the table, off the map
    assert 'id="sum-live">1<' in page and 'id="sum-silent">1<' in page and 'id="sum-never">1<' in page


def test_the_live_page_shows_a_games_balls_in_order_and_its_prizes(authority: Client, venue: Sender) -> None:
    game = {"venue": VENUE, "room": "Sala 1", "game": "electronic-40"}
    accept(venue, "game.committed", {**game, "commitment": "ab" * 32, "committed_at": "2026-12-06T20:00:00Z"})
    for ordinal, number in ((1, 17), (2, 5), (3, 88)):
        accept(venue, "game.ball", {**game, "ordinal": ordinal, "number": number})
    accept(venue, "game.prize", {
        **game, "prize": "L", "name": "Línea", "amount": "12.50", "ordinal": 3, "cards": ["000123"],
        "pool": None, "where": VENUE,
    })  # fmt: skip
    answer = authority.get(reverse("regulator:live"), {"fragment": "1"})
    page = answer.content.decode()
    assert "<html" not in page  # the fragment alone
    assert 'data-game="electronic-40"' in page and 'data-balls="3"' in page
    balls = [page.index(f'data-ball="{n}"') for n in (17, 5, 88)]
    assert balls == sorted(balls)
    assert "Línea" in page and "000123" in page and "12.50" in page.replace(",", ".")
    # Filtered by another installation: not shown.
    other = register("Bingo Ceuta", uid="b2" * 8)
    assert (
        b"electronic-40" not in authority.get(reverse("regulator:live"), {"installation": other.uid}).content
    )


def test_a_pools_history_is_a_table_and_a_line_chart(authority: Client, venue: Sender) -> None:
    start = timezone.now() - timedelta(minutes=30)
    for n, amount in enumerate(("100.00", "150.00", "90.00")):
        accept(venue, "pool.amounts", {"venue": VENUE, "pools": [
            {"pool": "BOLSA", "name": "Bolsa", "family": "bingo", "levels": [{"level": 1, "amount": amount}]},
        ]}, at=start + timedelta(minutes=10 * n))  # fmt: skip
    listed = authority.get(reverse("regulator:pools")).content.decode()
    assert 'data-pool="BOLSA"' in listed and 'data-amount="90.00"' in listed
    page = authority.get(reverse("regulator:pool", args=[venue.uid, "BOLSA"])).content.decode()
    assert page.count('data-amount="') == 3
    assert (
        '<polyline class="rg-line rg-line--1" data-level="1" points="0.0,100.0 600.0,0.0 1200.0,120.0"/>'
        in page
    )
    assert authority.get(reverse("regulator:pool", args=[venue.uid, "NONE"])).status_code == 404


def test_an_alarm_is_listed_and_cleared_with_who_cleared_it(authority: Client, venue: Sender) -> None:
    accept(
        venue,
        "game.ball",
        {"venue": VENUE, "room": "Sala 1", "game": "electronic-40", "ordinal": 1, "number": 7},
    )
    alarm = Alarm.objects.get(kind=AlarmKind.NO_COMMITMENT)
    page = authority.get(reverse("regulator:alarms")).content.decode()
    assert f'data-alarm="{alarm.pk}"' in page
    assert (
        "Game electronic-40 of ML-B-0001: its sales or balls arrived without its commitment (message 1)."
        in page
    )
    cleared = authority.post(reverse("regulator:clear-alarm", args=[alarm.pk]))
    assert cleared.status_code == 302
    alarm.refresh_from_db()
    assert alarm.cleared_by == "inspectora" and alarm.cleared_at is not None
    again = authority.post(reverse("regulator:clear-alarm", args=[alarm.pk]))
    assert again.status_code == 409 and b"already cleared by inspectora" in again.content
    assert authority.post(reverse("regulator:clear-alarm", args=[999999])).status_code == 404


def test_verify_now_shows_each_installation_verified_or_not(authority: Client, venue: Sender) -> None:
    accept(venue, "anchor", anchor_payload(venue, [anchor_line(venue, seq=5)]))
    heads = authority.get(reverse("regulator:anchors")).content.decode()
    assert f'data-installation="{venue.uid}" data-chain="venue-1"' in heads
    page = authority.post(reverse("regulator:anchors")).content.decode()
    assert f'data-installation="{venue.uid}" data-verified="yes"' in page


def test_the_refused_messages_and_the_tax_returns_received_are_listed(
    authority: Client, venue: Sender
) -> None:
    FeedRefusal.objects.create(
        installation=venue.installation, sequence=9, kind="game.ball", reason="bad_signature",
        detail="the signature does not hold", received_at=timezone.now(),
    )  # fmt: skip
    FeedRefusal.objects.create(claimed_installation="ffff", reason="unknown", received_at=timezone.now())
    page = authority.get(reverse("regulator:refusals")).content.decode()
    assert 'data-reason="bad_signature"' in page and "Unknown (ffff)" in page
    assert ">Bad signature</span>" in page and ">unknown</span>" in page  # a code it does not know: as is
    accept(venue, "tax.return", {
        "venue": VENUE, "jurisdiction": "ML", "period": "2026-11",
        "bases": [{"game_type": "traditional", "base": "12000.00"}], "rate_table": "BOME 2014, art. 5",
        "due": "1440.00", "digest": "cd" * 32,
    })  # fmt: skip
    taxes = authority.get(reverse("regulator:taxes")).content.decode()
    assert 'data-period="2026-11"' in taxes and 'data-due="1440.00"' in taxes and "BOME 2014, art. 5" in taxes


def test_the_portal_speaks_spanish(authority: Client, venue: Sender, settings: Any) -> None:
    accept(
        venue,
        "game.ball",
        {"venue": VENUE, "room": "Sala 1", "game": "electronic-40", "ordinal": 1, "number": 7},
    )
    authority.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    page = authority.get(reverse("regulator:map")).content.decode()
    assert "Instalaciones de la región" in page and "Mapa" in page
    alarms = authority.get(reverse("regulator:alarms")).content.decode()
    assert "Partida sin su compromiso" in alarms
    assert "llegaron sin su compromiso" in alarms


def test_the_live_page_shows_sessions_with_their_checks_and_games_ended_or_void(
    authority: Client, venue: Sender
) -> None:
    room = {"venue": VENUE, "room": "Sala 1", "session": "S-1"}
    checks = [{"check": "blower", "ok": True}, {"check": "reader", "ok": False}]
    opened = {**room, "family": "traditional", "opened_at": "2026-12-06T19:00:00Z", "checks": checks}
    accept(venue, "session.opened", opened)
    accept(
        venue,
        "game.ball",
        {"venue": VENUE, "room": "Sala 1", "game": "traditional-3", "ordinal": 1, "number": 2},
    )
    accept(venue, "game.ended", {"venue": VENUE, "room": "Sala 1", "game": "traditional-3", "state": "void",
                                 "balls": 1, "seed": None})  # fmt: skip
    accept(
        venue,
        "game.ball",
        {"venue": VENUE, "room": "Sala 1", "game": "traditional-4", "ordinal": 1, "number": 9},
    )
    page = authority.get(reverse("regulator:live"), {"fragment": "1"}).content.decode()
    assert '<tr data-session="S-1">' in page and "Failed" in page and "Open" in page
    assert "<td>Traditional bingo</td>" in page  # the family named, not its code
    assert 'data-game="traditional-3" data-installation="' + venue.uid + '" data-state="void"' in page
    assert page.index('data-game="traditional-4"') < page.index(
        'data-game="traditional-3"'
    )  # open ones first
    closed = {**room, "closed_at": "2026-12-06T23:00:00Z", "games": 2, "sales": "300.00", "prizes": "150.00"}
    accept(venue, "session.closed", closed)
    page = authority.get(reverse("regulator:live"), {"fragment": "1"}).content.decode()
    assert "Closed" in page and "300.00" in page.replace(",", "")
    # Silent for longer than the live window: left out of every installation's page.
    Installation.objects.filter(pk=venue.installation.pk).update(
        last_message_at=timezone.now() - timedelta(days=1)
    )
    assert b"traditional-4" not in authority.get(reverse("regulator:live")).content
