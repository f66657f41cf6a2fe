"""An admitted person is a player (issue 27): the admission makes or finds the venue's player; a card is
issued, loaded and used at a terminal only for a player admitted today (where the venue's cards need it);
a register version listing a player inside, or their self-exclusion, blocks their cards and alerts the door.
Refusals write nothing; no document, digest or birth date in audit rows, events or logs."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.test import override_settings
from django.utils import timezone

from bingo.electronic import provisioning
from bingo.electronic.services import messages, sales
from halls import events
from halls.cashier.models import LedgerTransaction, Player, PlayerCard, PlayerCardState
from halls.cashier.services import admitted, player_cards
from halls.door.documents import Document
from halls.door.models import AlertKind, Decision, DoorAlert, SelfExclusion, Visit
from halls.door.services import admission, doorday, players, presence, registers, till
from halls.errors import Conflict
from halls.eventtypes import EventType
from halls.models import AuditEntry, Role, Venue
from halls.services import venueclock
from tests.api_support import api_client, refused
from tests.bingo.electronic.sales_support import OnSale, on_sale
from tests.bingo.electronic.support import make_speciality
from tests.conftest import make_user
from tests.door.register_support import dni, people, register_file, stream

pytestmark = pytest.mark.django_db

ADULT = date(1980, 5, 17)
PERSON = ("DNI", dni(31_000_001), "")
OTHER = ("DNI", dni(31_000_002), "")


@pytest.fixture
def need_admission(settings: Any) -> None:
    settings.HALL_DOOR_CARDS_NEED_ADMISSION = True


def doc(person: tuple[str, str, str]) -> Document:
    return admission.document_from(*person)


def admit(venue: Venue, person: tuple[str, str, str], **kwargs: Any) -> Visit:
    return admission.admit(
        venue=venue, door="Puerta 1", document=doc(person), birth_date=ADULT, actor="test", **kwargs
    )


def load(lines: list[tuple[str, str, str]], version: int = 1) -> None:
    registers.load_register_file(
        stream=stream(register_file(lines, version=version, issued=date(2026, 12, version))),
        actor="test",
        create_name="RGIAJ",
    )


def written() -> tuple[int, int, int, int]:
    return (
        PlayerCard.objects.count(),
        LedgerTransaction.objects.count(),
        AuditEntry.objects.count(),
        Player.objects.count(),
    )


@contextmanager
def nothing_written() -> Iterator[None]:
    before = written()
    yield
    assert written() == before


def not_admitted(call: Any) -> Conflict:
    with nothing_written(), pytest.raises(Conflict) as refusal:
        call()
    assert refusal.value.code == "player_not_admitted"
    return refusal.value


def next_day(venue: Venue) -> None:
    """The venue's clock moved to the start of its next door day (HALL_DOOR_DAY_START_HOUR; the lab clock:
    never in production)."""
    venueclock.move(venue=venue, to=doorday.door_day(venue, venueclock.now(venue.pk))[2], actor="test")


# --- an admission is a player ---------------------------------------------------------------------------


def test_an_admission_makes_or_finds_the_venues_player(venue: Venue) -> None:
    first = admit(venue, PERSON)
    assert first.decision == Decision.ADMITTED and first.player is not None
    player = first.player
    assert bytes(player.digest or b"") == bytes(first.digest or b"") and player.name == ""
    # Admitted until the door day's end (the hour it begins, the next morning): not at midnight.
    _day, _start, end = doorday.door_day(venue, first.at)
    assert player.admitted_until == end and timezone.localtime(end, ZoneInfo(venue.time_zone)).hour == 6
    again = admit(venue, PERSON)
    assert again.player_id == player.pk and Player.objects.count() == 1
    minor = admission.admit(
        venue=venue, door="Puerta 1", document=doc(OTHER), birth_date=venueclock.today(venue), actor="test"
    )
    assert minor.decision == Decision.MINOR and minor.player is None and Player.objects.count() == 1
    assert players.is_admitted(player)


def test_the_purge_unlinks_a_visit_from_its_player(venue: Venue) -> None:
    visit = admit(venue, PERSON)
    admission.purge_visits(now=visit.keep_until)
    visit.refresh_from_db()
    assert visit.digest is None and visit.player is None
    assert Player.objects.count() == 1  # the player (the cashier's record) stays


# --- the cards need an admission today ------------------------------------------------------------------


@pytest.mark.usefixtures("need_admission")
def test_a_card_is_issued_loaded_and_spent_only_for_a_player_admitted_today(
    venue: Venue, cashier: User
) -> None:
    not_admitted(lambda: player_cards.issue_card(venue_id=venue.pk, actor=cashier))  # anonymous
    not_admitted(lambda: till.card_for(venue=venue, document=doc(PERSON), actor=cashier))  # never admitted
    player = admit(venue, PERSON).player
    card = till.card_for(venue=venue, document=doc(PERSON), actor=cashier)
    assert card.player == player
    player_cards.cash_in(card=card, amount=Decimal("10.00"), means="cash", key="in-1", actor=cashier)
    player_cards.spend(card=card, amount=Decimal("2.00"), key="spend-1", actor="T1")

    next_day(venue)  # the admission was yesterday's
    not_admitted(lambda: till.card_for(venue=venue, document=doc(PERSON), actor=cashier))
    refusal = not_admitted(
        lambda: player_cards.cash_in(card=card, amount=Decimal("5"), means="cash", key="in-2", actor=cashier)
    )
    assert "not been admitted" in str(refusal)
    not_admitted(lambda: player_cards.spend(card=card, amount=Decimal("1"), key="spend-2", actor="T1"))
    # A retry of a move made while admitted answers that move; the money can always go out.
    again = player_cards.spend(card=card, amount=Decimal("2.00"), key="spend-1", actor="T1")
    assert again.replayed
    out = player_cards.cash_out(card=card, amount=None, key="out-1", actor=cashier)
    assert out.amount == Decimal("8.00")

    admit(venue, PERSON)  # back at the door today: the same player, the same card
    player_cards.cash_in(card=card, amount=Decimal("5"), means="cash", key="in-3", actor=cashier)


@pytest.mark.usefixtures("need_admission")
def test_a_player_who_left_plays_again_only_once_admitted_again(venue: Venue, cashier: User) -> None:
    """An exit recorded at the door ends the day's admission: the card waits for the next one."""
    admit(venue, PERSON)
    card = till.card_for(venue=venue, document=doc(PERSON), actor=cashier)
    player_cards.cash_in(card=card, amount=Decimal("10.00"), means="cash", key="in-1", actor=cashier)
    presence.record_exit(venue=venue, door="Puerta 1", document=doc(PERSON), actor="test")
    not_admitted(lambda: player_cards.spend(card=card, amount=Decimal("1"), key="spend-1", actor="T1"))
    assert presence.recent_visits(venue)[0].left_at is not None
    admit(venue, PERSON)  # back in: the same player, the same card
    player_cards.spend(card=card, amount=Decimal("1"), key="spend-2", actor="T1")


def test_the_door_lists_the_register_that_refused(venue: Venue) -> None:
    load([(*PERSON[:2], "ES")])
    admit(venue, PERSON)
    (last,) = presence.recent_visits(venue)
    assert (last.decision, last.register) == (Decision.PROHIBITED, "RGIAJ")


def test_cards_need_admission_per_jurisdiction(venue: Venue, cashier: User, settings: Any) -> None:
    settings.HALL_DOOR_CARDS_NEED_ADMISSION = False
    assert player_cards.issue_card(venue_id=venue.pk, actor=cashier).player is None
    settings.HALL_DOOR_BY_JURISDICTION = {venue.jurisdiction: {"cards_need_admission": True}}
    not_admitted(lambda: player_cards.issue_card(venue_id=venue.pk, actor=cashier))
    settings.HALL_DOOR_BY_JURISDICTION = {"CT": {"cards_need_admission": True}}
    assert player_cards.issue_card(venue_id=venue.pk, actor=cashier).player is None
    # Without the need, the till's card for a document makes the person's player.
    card = till.card_for(venue=venue, document=doc(OTHER), actor=cashier)
    assert card.player is not None and not players.is_admitted(card.player)


@pytest.fixture
def sale(venue: Venue, operator: User, cashier: User) -> OnSale:
    return on_sale(venue, operator, cashier, balance=Decimal("20.00"))  # an anonymous card, funded


def test_a_terminal_sells_only_to_a_player_admitted_today(
    sale: OnSale, venue: Venue, cashier: User, settings: Any
) -> None:
    settings.HALL_DOOR_CARDS_NEED_ADMISSION = True
    anonymous = sale.card.number
    not_admitted(lambda: sales.purchase(terminal=sale.terminal, card_number=anonymous, cards=1, key="a1"))
    not_admitted(lambda: messages.insert_card(terminal=sale.terminal, card_number=anonymous))
    order = sales.prepare(terminal=sale.terminal, card_number=anonymous, cards=1, key="a2")
    assert isinstance(order, sales.Order)
    with nothing_written():
        (answer,) = sales._write_together([order])  # the group's path
    assert isinstance(answer, Conflict) and answer.code == "player_not_admitted"

    admit(venue, PERSON)
    card = till.card_for(venue=venue, document=doc(PERSON), actor=cashier)
    player_cards.cash_in(card=card, amount=Decimal("10.00"), means="cash", key="in", actor=cashier)
    assert messages.insert_card(terminal=sale.terminal, card_number=card.number)
    bought = sales.purchase(terminal=sale.terminal, card_number=card.number, cards=1, key="p1")
    assert not bought.replayed
    order = sales.prepare(terminal=sale.terminal, card_number=card.number, cards=1, key="p2")
    assert isinstance(order, sales.Order)
    (grouped,) = sales._write_together([order])
    assert isinstance(grouped, sales.Bought)


# --- barred while inside: cards blocked, the door alerted -----------------------------------------------


def test_a_register_listing_a_player_inside_blocks_their_cards_and_alerts_the_door(
    venue: Venue, cashier: User, settings: Any
) -> None:
    settings.HALL_DOOR_CARDS_NEED_ADMISSION = True
    visit = admit(venue, PERSON)
    card = till.card_for(venue=venue, document=doc(PERSON), actor=cashier)
    admit(venue, OTHER)
    other = till.card_for(venue=venue, document=doc(OTHER), actor=cashier)
    before = events.current_seq(doorday.door_stream(venue.pk))
    load([(*PERSON[:2], "ES"), *people(32_000_000, 3)])
    card.refresh_from_db()
    other.refresh_from_db()
    assert card.state == PlayerCardState.BLOCKED and other.state == PlayerCardState.ACTIVE
    assert card.blocked_reason == "Listed on a prohibited-access register."
    assert card.player is not None and not players.is_admitted(card.player)
    (alert,) = players.open_alerts(venue)
    assert (alert.kind, alert.visit, alert.door, alert.register, alert.register_version) == (
        AlertKind.REGISTER_LISTED,
        visit.pk,
        "Puerta 1",
        "RGIAJ",
        1,
    )
    assert alert.cards_blocked == 1 and alert.player == card.player_id
    assert events.current_seq(doorday.door_stream(venue.pk)) == before + 1
    with pytest.raises(Conflict) as blocked:
        player_cards.spend(card=card, amount=Decimal("1"), key="s", actor="T1")
    assert blocked.value.code == "card_blocked"
    not_admitted(lambda: till.card_for(venue=venue, document=doc(PERSON), actor=cashier))
    # At the door again: refused as prohibited, no second alert (no longer inside).
    assert admit(venue, PERSON).decision == Decision.PROHIBITED
    assert DoorAlert.objects.count() == 1
    # Acknowledged: off the open list, once.
    players.acknowledge_alert(venue=venue, alert_id=alert.id, actor=cashier)
    players.acknowledge_alert(venue=venue, alert_id=alert.id, actor=cashier)
    assert players.open_alerts(venue) == []
    assert AuditEntry.objects.filter(action="door.alert_acknowledged").count() == 1


def test_a_player_not_inside_is_not_alerted(venue: Venue, cashier: User) -> None:
    admit(venue, PERSON)
    next_day(venue)  # yesterday's admission: not inside
    load([(*PERSON[:2], "ES")])
    assert DoorAlert.objects.count() == 0


def test_a_self_exclusion_blocks_the_same_persons_card_at_a_terminal(
    sale: OnSale, venue: Venue, operator: User, cashier: User, settings: Any
) -> None:
    """The API's path: admitted at the door, a card issued by the document at the till and loaded, bought
    with at a terminal; the self-exclusion blocks the card, the terminal refuses it, the door is alerted."""
    settings.HALL_DOOR_CARDS_NEED_ADMISSION = True
    body = {"kind": PERSON[0], "number": PERSON[1], "country": ""}
    door = api_client(operator)
    answer = door.post(
        f"/api/venues/{venue.pk}/admissions/",
        {**body, "birth_date": ADULT.isoformat(), "door": "Puerta 1"},
        format="json",
    )
    assert answer.status_code == 201 and answer.json()["decision"] == "admitted"
    till_api = api_client(cashier)
    issued = till_api.post(f"/api/venues/{venue.pk}/players/cards/", body, format="json")
    assert issued.status_code == 201, issued.content
    number = issued.json()["number"]
    loaded = till_api.post(
        f"/api/cashier/venues/{venue.pk}/cards/{number}/cash-in/",
        {"amount": "10.00", "means": "cash"},
        format="json",
    )
    assert loaded.status_code == 201, loaded.content
    sales.purchase(terminal=sale.terminal, card_number=number, cards=1, key="before")

    until = (venueclock.today(venue) + timedelta(days=180)).isoformat()
    excluded = door.post(f"/api/venues/{venue.pk}/self-exclusions/", {**body, "until": until}, format="json")
    assert excluded.status_code == 201
    card = PlayerCard.objects.get(number=number)
    assert card.state == PlayerCardState.BLOCKED and card.blocked_reason == "Self-excluded."
    with pytest.raises(Conflict) as refusal:
        sales.purchase(terminal=sale.terminal, card_number=number, cards=1, key="after")
    assert refusal.value.code == "card_blocked"
    with pytest.raises(Conflict):
        messages.insert_card(terminal=sale.terminal, card_number=number)
    (alert,) = players.open_alerts(venue)
    assert alert.kind == AlertKind.SELF_EXCLUDED and alert.cards_blocked == 1
    found = till_api.post(f"/api/venues/{venue.pk}/players/find/", body, format="json").json()
    assert found["admitted_today"] is False and [c["state"] for c in found["cards"]] == ["blocked"]


# --- the API --------------------------------------------------------------------------------------------


def test_the_till_and_door_api(venue: Venue, operator: User, cashier: User, settings: Any) -> None:
    settings.HALL_DOOR_CARDS_NEED_ADMISSION = True
    settings.LANGUAGE_CODE = "es"
    body = {"kind": PERSON[0], "number": PERSON[1], "country": ""}
    till_api = api_client(cashier)
    url = f"/api/venues/{venue.pk}/players/cards/"
    with nothing_written():
        answer = till_api.post(url, body, format="json", HTTP_ACCEPT_LANGUAGE="es")
    error = refused(answer, 409, "player_not_admitted", "admitido")
    assert PERSON[1] not in json.dumps(error)
    wrong = "B" if PERSON[1][-1] != "B" else "C"  # another check letter
    bad = till_api.post(url, {**body, "number": PERSON[1][:-1] + wrong}, format="json")
    assert bad.status_code == 400 and PERSON[1][:-1] not in bad.content.decode()
    found = till_api.post(f"/api/venues/{venue.pk}/players/find/", body, format="json").json()
    assert found == {"player": None, "admitted_today": False, "cards": []}

    admit(venue, PERSON)
    assert till_api.post(url, body, format="json").status_code == 201
    found = till_api.post(f"/api/venues/{venue.pk}/players/find/", body, format="json").json()
    assert found["admitted_today"] is True and len(found["cards"]) == 1

    load([(*PERSON[:2], "ES")])
    doorman = make_user("doorman", venue, Role.DOOR)
    alerts = api_client(doorman).get(f"/api/venues/{venue.pk}/door-alerts/")
    assert alerts.status_code == 200
    (alert,) = alerts.json()
    assert (alert["kind"], alert["register"], alert["cards_blocked"]) == ("register_listed", "RGIAJ", 1)
    assert api_client(cashier).get(f"/api/venues/{venue.pk}/door-alerts/").status_code == 403
    done = api_client(doorman).post(f"/api/venues/{venue.pk}/door-alerts/{alert['id']}/acknowledge/")
    assert done.status_code == 200 and done.json()["acknowledged_by"] == "doorman"
    assert api_client(doorman).get(f"/api/venues/{venue.pk}/door-alerts/").json() == []
    missing = api_client(doorman).post(f"/api/venues/{venue.pk}/door-alerts/999999/acknowledge/")
    assert missing.status_code == 404


def test_no_document_or_digest_in_audit_events_or_logs(
    venue: Venue, cashier: User, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    published: list[Any] = []
    original = events.emit

    def spy(stream: str, type: EventType, data: Any) -> Any:
        published.append((stream, type, data))
        return original(stream, type, data)

    monkeypatch.setattr(events, "emit", spy)
    caplog.set_level(logging.DEBUG)
    before = AuditEntry.objects.count()
    visits = [admit(venue, PERSON), admit(venue, OTHER)]
    till.card_for(venue=venue, document=doc(PERSON), actor=cashier)
    till.card_for(venue=venue, document=doc(OTHER), actor=cashier)
    load([(*PERSON[:2], "ES")])
    admission.self_exclude(
        venue=venue, document=doc(OTHER), until=venueclock.today(venue) + timedelta(days=30), actor="test"
    )
    assert [t for _s, t, _d in published if t == EventType.DOOR_ALERT] == [EventType.DOOR_ALERT] * 2
    entries = list(AuditEntry.objects.order_by("pk")[before:])
    assert {"door.alert_raised", "cashier.card_blocked"} <= {e.action for e in entries}
    text = json.dumps([[e.data, e.object_id, e.actor_label] for e in entries], default=str)
    text += repr(published) + caplog.text
    for visit in visits:
        digest = bytes(visit.digest or b"")
        assert digest.hex() not in text and repr(digest) not in text
    for number in (PERSON[1], OTHER[1]):
        assert number[:-1] not in text
    assert "1980-05-17" not in text


# --- the simulated players (the demo, the terminal simulator, the benchmarks) ---------------------------


@pytest.mark.usefixtures("need_admission")
def test_the_simulators_players_pass_the_door_every_day(venue: Venue, operator: User) -> None:
    speciality = make_speciality(venue, operator)
    terminals = provisioning.ensure_terminals(speciality=speciality, names=["S1", "S2"], actor=operator)
    cashier = provisioning.robot_cashier(venue)
    with override_settings(HALL_DOOR_CARDS_NEED_ADMISSION=False):  # an older run's anonymous card
        old = player_cards.issue_card(venue_id=venue.pk, actor=cashier)
    cards = provisioning.ensure_cards(
        terminals=terminals, numbers={terminals[0].pk: old.number}, cashier=cashier
    )
    assert cards[terminals[0].pk] == old.number
    old.refresh_from_db()
    assert old.player is not None  # linked to the terminal's simulated player
    for number in cards.values():
        card = PlayerCard.objects.get(number=number)
        assert card.player is not None and players.is_admitted(card.player)
        admitted.check_card(card)
    assert Visit.objects.filter(door=provisioning.SIM_DOOR, decision=Decision.ADMITTED).count() == 2
    provisioning.admit_players(terminals=terminals, actor=cashier)  # admitted already: no new visit
    assert Visit.objects.filter(door=provisioning.SIM_DOOR).count() == 2

    next_day(venue)
    with pytest.raises(Conflict):
        admitted.check_card(old)
    provisioning.admit_players(terminals=terminals, actor=cashier)
    admitted.check_card(old)


def test_a_refusal_at_the_door_of_a_player_inside_blocks_their_cards(venue: Venue, cashier: User) -> None:
    """A barred person the door refuses while their admission of today stands (an online register's hit,
    a self-exclusion recorded elsewhere): their admission withdrawn, their cards blocked, the door alerted."""
    morning = admit(venue, PERSON)
    card = till.card_for(venue=venue, document=doc(PERSON), actor=cashier)
    today = venueclock.today(venue)
    SelfExclusion.objects.create(  # recorded past the service: as an authority's listing the door learns of
        venue=venue, digest=morning.digest, since=today, until=today, recorded_at=timezone.now()
    )
    assert admit(venue, PERSON).decision == Decision.SELF_EXCLUDED
    card.refresh_from_db()
    assert card.state == PlayerCardState.BLOCKED
    (alert,) = players.open_alerts(venue)
    assert (alert.kind, alert.visit) == (AlertKind.SELF_EXCLUDED, morning.pk)
    assert admit(venue, OTHER).decision == Decision.ADMITTED  # others pass as before


def test_a_player_not_admitted_within_the_retention_loses_the_document_digest(
    venue: Venue, settings: Any
) -> None:
    first = admit(venue, PERSON)
    player = first.player
    assert player is not None and player.admitted_until is not None
    assert players.purge_players(now=player.admitted_until + timedelta(days=364)) == 0
    settings.HALL_DOOR_BY_JURISDICTION = {venue.jurisdiction: {"player_retention_days": 30}}
    later = player.admitted_until + timedelta(days=31)
    assert players.purge_players(now=later) == 1
    player.refresh_from_db()
    assert player.digest is None and player.admitted_until is None  # the record (cards, ledger) stays
    entry = AuditEntry.objects.get(action="door.players_purged")
    assert entry.data["players"] == 1 and set(entry.data) == {"players", "before"}
    assert players.purge_players(now=later) == 0  # nothing left to clear
    assert admit(venue, PERSON).player_id != player.pk  # back afterwards: a new player
