"""The inspector's records (issue 15): a session's minutes, a game's record and the statistics, as pages,
PDFs (their text read back with pypdf) and CSV; only for the venue's inspector (or operator)."""

from __future__ import annotations

import csv
import importlib
import io
from datetime import timedelta
from decimal import Decimal

import pytest
from django.apps import apps as django_apps
from django.test import Client
from django.utils import timezone
from pypdf import PdfReader

from bingo.venuewide import records
from halls.errors import InvalidInput
from halls.models import GameSession, Role, SessionCheck
from halls.services import sessions
from tests.api_support import api_client, refused
from tests.bingo.traditional.inspector_support import PlayedSession, play_session
from tests.conftest import make_user


@pytest.fixture
def played(session, room, card_series, caller, cashier, ball_set) -> PlayedSession:
    return play_session(session=session, room=room, series=card_series, caller=caller, cashier=cashier)


@pytest.fixture
def inspector_client(venue) -> Client:
    client = Client()
    client.force_login(make_user("inspector", venue, Role.INSPECTOR))
    return client


def pdf_text(content: bytes) -> str:
    assert content.startswith(b"%PDF-")
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


def test_the_minutes_hold_checks_inspection_games_sales_prizes_incidents_and_who_did_what(played, caller):
    m = records.session_minutes(played.session)
    assert [(c["check"], c["ok"], c["by"]) for c in m["checks"]] == [
        ("blower", True, "caller"),
        ("reserve", True, "caller"),
        ("reader", True, "caller"),
        ("inspection", True, "caller"),
    ]
    assert sorted(m["inspection_balls"]) == list(range(1, 91))
    assert [g["number"] for g in m["games"]] == [1, 2]
    game, void = m["games"]
    assert (void["state"], void["void_reason"]) == ("void", "Blower failure before the sale")
    assert (game["state"], game["cards_sold"], game["sales_total"]) == ("closed", 30, Decimal("60.00"))
    assert [(s["first"], s["last"], s["cashier"]) for s in game["sales"]] == [
        (1, 20, "cashier"),
        (31, 40, "cashier"),
    ]
    assert [(p["kind"], p["winners"], p["confirmed_by"]) for p in game["prizes"]] == [
        ("Line", ["A #7"], "caller"),
        ("Bingo", ["A #7"], "caller"),
    ]
    assert game["paid"] == Decimal("36.00")  # 10 % + 50 % of 60.00
    assert m["totals"] == {
        "games": 2, "played": 1, "void": 1, "cards_sold": 30,
        "sales_total": Decimal("60.00"), "paid": Decimal("36.00"),
    }  # fmt: skip
    what = [i["what"] for i in m["incidents"]]
    assert any("corrected" in w and "Mis-keyed at the reader" in w for w in what), what
    assert any("Line claim of card A #7 refused" in w for w in what), what
    assert any("Blower failure before the sale" in w for w in what), what
    assert any("Switched from Bombo 1 to Bombo reserva after ball 3: Turbine stopped" in w for w in what), (
        what
    )
    assert any("Ball 12 chipped" in w for w in what), what
    assert ("caller", "game.device_switched") in [(e["actor"], e["action"]) for e in m["log"]]
    actions = [(e["actor"], e["action"]) for e in m["log"]]
    assert actions[0] == ("caller", "session.opened") and actions[-1] == ("caller", "session.closed")
    assert ("cashier", "sales.sold") in actions and ("caller", "prize.awarded") in actions
    assert all(action != "ball.drawn" for _actor, action in actions)
    times = [e["at"] for e in m["log"]]
    assert times == sorted(times)


def test_the_game_record_adds_who_confirmed_each_prize_the_ball_set_and_the_device(played, ball_set):
    r = records.game_record(played.played)
    assert [(c["kind"], c["confirmed_by"], c["cards"]) for c in r["confirmations"]] == [
        ("line", "caller", ["A #7"]),
        ("bingo", "caller", ["A #7"]),
    ]
    assert r["device"] == "Bombo reserva (Air-turbine blower, reserve)"  # where it ended, after the switch
    assert r["ball_set"]["name"] == ball_set.name and r["ball_set"]["games_played"] == 1
    assert (
        r["balls"][0]["corrected_from"] is not None and r["ball_corrections"][0]["corrected_by"] == "caller"
    )
    assert r["claims_made"] == 3 and r["claims_refused"] == 1
    [switch] = r["switches"]
    assert switch["switched_by"] == "caller" and switch["at_ordinal"] == 3
    assert switch["text"] == "Switched from Bombo 1 to Bombo reserva after ball 3: Turbine stopped"
    [incident] = r["ball_set_notes"]
    assert incident["text"] == "Incident (12): Ball 12 chipped" and incident["recorded_by"] == "caller"


def test_the_minutes_and_the_record_print_as_pages_and_as_real_pdfs(played, inspector_client, venue):
    session, game = played.session, played.played
    page = inspector_client.get(f"/inspector/sessions/{session.pk}/")
    assert page.status_code == 200
    assert b"Mis-keyed at the reader" in page.content and b"Blower failure before the sale" in page.content
    text = pdf_text(inspector_client.get(f"/inspector/sessions/{session.pk}/minutes.pdf").content)
    for words in ("Session minutes", venue.name, "Opening checks", "Inspection draw", "Who did what"):
        assert words in text, words
    assert "Mis-keyed at the reader" in text and "€36.00" in text and "cashier" in text  # English: € first
    record = inspector_client.get(f"/inspector/games/{game.pk}/")
    assert (
        record.status_code == 200
        and b"Bombo reserva" in record.content
        and b"Turbine stopped" in record.content
    )
    text = pdf_text(inspector_client.get(f"/inspector/games/{game.pk}/record.pdf").content)
    for words in (
        "Game record",
        "Bombo reserva",
        "Turbine stopped",
        "Ball 12 chipped",
        "Prizes and who confirmed them",
        "A #7",
        "caller",
    ):
        assert words in text, words


def test_the_pdfs_speak_spanish(played, inspector_client, settings):
    inspector_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    text = pdf_text(inspector_client.get(f"/inspector/sessions/{played.session.pk}/minutes.pdf").content)
    assert "Acta de la sesión" in text and "36,00 €" in text, text[:400]
    text = pdf_text(inspector_client.get(f"/inspector/games/{played.played.pk}/record.pdf").content)
    assert "Registro de la partida" in text and "Bombo de turbina de aire" in text, text[:400]


def test_statistics_per_day_and_month_per_room_and_game_type(played, venue, inspector_client):
    today = timezone.now().astimezone(timezone.get_current_timezone()).date()
    report = records.statistics(
        venue=venue, period="day", first=today - timedelta(days=1), last=today + timedelta(days=1)
    )
    [row] = report.rows
    assert (row.room, row.game_type, row.games, row.void, row.cards) == ("Sala 1", "traditional", 1, 1, 30)
    assert (row.amount, row.prizes, row.return_percent) == (
        Decimal("60.00"),
        Decimal("36.00"),
        Decimal("60.00"),
    )
    month = records.statistics(venue=venue, period="month", first=today, last=today)
    assert month.first.day == 1 and [r.games for r in month.rows] == [1]
    url = f"/inspector/venues/{venue.pk}/statistics"
    query = f"?period=day&from={today - timedelta(days=1)}&to={today + timedelta(days=1)}"
    page = inspector_client.get(f"{url}/{query}")
    assert page.status_code == 200 and b"Traditional bingo" in page.content
    rows = list(csv.reader(io.StringIO(inspector_client.get(f"{url}.csv{query}").content.decode())))
    assert rows[0][:3] == ["Period", "Room", "Game type"]
    assert rows[1][1:] == ["Sala 1", "Traditional bingo", "1", "1", "30", "60.00", "36.00", "60.00"]
    assert rows[-1][0] == "Total"
    text = pdf_text(inspector_client.get(f"{url}.pdf{query}").content)
    assert "Daily statistics" in text and "Sala 1" in text and "60.00 %" in text


def test_statistics_refuse_a_bad_range(venue, inspector_client):
    today = timezone.now().date()
    with pytest.raises(InvalidInput) as refused:
        records.statistics(venue=venue, period="day", first=today, last=today - timedelta(days=1))
    assert refused.value.code == "bad_range"
    with pytest.raises(InvalidInput):
        records.statistics(venue=venue, period="day", first=today - timedelta(days=200), last=today)
    page = inspector_client.get(f"/inspector/venues/{venue.pk}/statistics/?period=week")
    assert page.status_code == 400


def test_only_the_venues_inspector_or_operator_reads_the_records(played, other_venue, caller, operator):
    foreign = Client()
    foreign.force_login(make_user("foreign", other_venue, Role.INSPECTOR))
    assert foreign.get(f"/inspector/sessions/{played.session.pk}/").status_code == 404
    assert foreign.get(f"/inspector/games/{played.played.pk}/record.pdf").status_code == 404
    calling = Client()
    calling.force_login(caller)
    assert calling.get(f"/inspector/sessions/{played.session.pk}/").status_code == 403
    running = Client()
    running.force_login(operator)
    assert running.get(f"/inspector/sessions/{played.session.pk}/minutes.pdf").status_code == 200


def test_each_check_names_who_ran_it_and_old_sessions_are_given_their_opener(
    venue, room, caller, operator, session
):
    """A check recorded before the opening (by whoever ran it) is the session's with its own actor; the
    opener's for the rest; a failed check and its repeat both show. Sessions from before the check rows
    get theirs from the migration: the opener, when it opened."""
    sessions.close_session(session=session, actor=caller)
    tech = make_user("tecnico", venue, Role.CALLER)
    client = api_client(tech)
    failed = client.post(f"/api/rooms/{room.pk}/checks/", {"check": "reserve", "ok": False, "note": "Motor"})
    assert failed.status_code == 201 and failed.json()["checked_by"] == "tecnico", failed.content
    assert client.post(f"/api/rooms/{room.pk}/checks/", {"check": "reserve", "ok": True}).status_code == 201
    refused(
        client.post(f"/api/rooms/{room.pk}/checks/", {"check": "lights", "ok": True}), 400, "invalid", "check"
    )
    opened = api_client(caller).post(
        f"/api/rooms/{room.pk}/sessions/",
        {"blower_ok": True, "reserve_ok": True, "reader_ok": True, "inspection_balls": list(range(1, 91))},
        format="json",
    )
    assert opened.status_code == 201, opened.content
    checks = [(c["check"], c["ok"], c["checked_by"]) for c in opened.json()["checks"]]
    assert checks == [
        ("reserve", False, "tecnico"),
        ("reserve", True, "tecnico"),
        ("blower", True, "caller"),
        ("reader", True, "caller"),
        ("inspection", True, "caller"),
    ]
    new = GameSession.objects.get(pk=opened.json()["id"])
    m = records.session_minutes(new)
    assert [(c["check"], c["by"], c["note"]) for c in m["checks"]][:2] == [
        ("reserve", "tecnico", "Motor"),
        ("reserve", "tecnico", ""),
    ]
    # A check while a session is open is refused; nothing is written.
    refused(
        client.post(f"/api/rooms/{room.pk}/checks/", {"check": "blower", "ok": True}),
        409,
        "session_already_open",
    )
    assert SessionCheck.objects.filter(session__isnull=True).count() == 0

    # The migration's rows for a session from before: each check by the opener.
    SessionCheck.objects.filter(session=session).delete()
    migration = importlib.import_module("halls.migrations.0009_session_checks")
    SessionCheck.objects.exclude(session=session).delete()
    migration.checks_of_old_sessions(django_apps, None)
    old = records.session_minutes(session)["checks"]
    assert [(c["check"], c["ok"], c["by"], c["at"]) for c in old] == [
        (name, True, "caller", session.opened_at) for name in ("blower", "reserve", "reader", "inspection")
    ]


def test_checks_ticked_by_two_people_are_theirs_in_the_minutes_and_the_opening_uses_them(
    venue, room, caller, inspector_client
):
    """The console records each check as it is ticked (POST /api/rooms/{id}/checks/, by whoever ticks it);
    the opening sends the inspection draw only and takes the checks recorded: the minutes name, for each
    check, who ran it and when, and the opener only for the inspection draw."""
    tech = make_user("tecnico", venue, Role.CALLER)
    for client, check in (
        (api_client(tech), "blower"),
        (api_client(caller), "reserve"),
        (api_client(tech), "reader"),
    ):
        assert client.post(f"/api/rooms/{room.pk}/checks/", {"check": check, "ok": True}).status_code == 201
    recorded = api_client(caller).get(f"/api/rooms/{room.pk}/checks/")
    assert [(c["check"], c["ok"], c["checked_by"]) for c in recorded.json()] == [
        ("blower", True, "tecnico"),
        ("reserve", True, "caller"),
        ("reader", True, "tecnico"),
    ]
    times = {c.check_name: c.checked_at for c in SessionCheck.objects.filter(session__isnull=True)}
    opened = api_client(caller).post(
        f"/api/rooms/{room.pk}/sessions/", {"inspection_balls": list(range(1, 91))}, format="json"
    )
    assert opened.status_code == 201, opened.content
    new = GameSession.objects.get(pk=opened.json()["id"])
    m = records.session_minutes(new)
    assert [(c["check"], c["ok"], c["by"]) for c in m["checks"]] == [
        ("blower", True, "tecnico"),
        ("reserve", True, "caller"),
        ("reader", True, "tecnico"),
        ("inspection", True, "caller"),
    ]
    assert [c["at"] for c in m["checks"][:3]] == [times["blower"], times["reserve"], times["reader"]]
    assert m["checks"][3]["at"] == new.opened_at and max(times.values()) <= new.opened_at
    assert api_client(caller).get(f"/api/rooms/{room.pk}/checks/").json() == []  # the session's now
    page = inspector_client.get(f"/inspector/sessions/{new.pk}/").content.decode()
    assert '<tr data-check="blower">' in page
    shown = {
        name: page.split(f'<tr data-check="{name}">')[1].split("</tr>")[0]
        for name in ("blower", "reserve", "reader")
    }
    assert "<td data-checked-by>tecnico</td>" in shown["blower"] and "tecnico" in shown["reader"]
    assert "<td data-checked-by>caller</td>" in shown["reserve"]


def test_the_minutes_and_the_record_say_stored_codes_in_spanish(played, inspector_client, settings):
    """Codes kept in rows (check names and results, claim refusals, ball colours, the remainder's
    destination, the log's actions) read in Spanish on a Spanish page and PDF: labels, not the stored
    English words."""
    inspector_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    english = [
        "Ball blower", "Working", "has no complete line", "had no complete line", "house:",
        "rounding residue", "Line claim", "refused", "Session opened", "Prize confirmed", ">red<",
        "Incident (",
    ]  # fmt: skip
    page = inspector_client.get(f"/inspector/sessions/{played.session.pk}/").content.decode()
    text = pdf_text(inspector_client.get(f"/inspector/sessions/{played.session.pk}/minutes.pdf").content)
    for shown in (page, " ".join(text.split())):  # a PDF's table cells wrap
        spanish = (
            "Bombo de turbina de aire, de reserva",
            "Funciona",
            "Tirada de inspección",
            "Canto de Línea del cartón A #7 rechazado",
        )
        for words in spanish:
            assert words in shown, words
        assert "El cartón 7 no tenía línea completa en la bola 3" in shown, shown[:3000]
        for words in english:
            assert words not in shown, words
    record = inspector_client.get(f"/inspector/games/{played.played.pk}/").content.decode()
    text = pdf_text(inspector_client.get(f"/inspector/games/{played.played.pk}/record.pdf").content)
    for shown in (record, " ".join(text.split())):
        assert "la casa (residuo del redondeo" in shown, shown[:3000]
        assert "El cartón 7 tiene línea: fila" in shown and "El cartón 7 tiene bingo" in shown, shown[:3000]
        assert any(colour in shown for colour in ("rojo", "amarillo", "verde", "azul", "morado"))
        for words in english:
            assert words not in shown, words
