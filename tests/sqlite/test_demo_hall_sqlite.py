"""The demo hall as a new user meets it (issue 26), on the embedded hall's SQLite: an inspector among its
staff who reads and writes nothing, each room with the drawing devices its caller's opening checks are about
("Sala 2", played by hand, said by its blower, never as RNG), and a banner that lists the inspector, setup,
machine floor and paper pages with every login."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from bingo.traditional.models import DrawDevice, DrawSource
from bingo.traditional.services import games
from demo.hall import AUTOPLAY_ROOM, DEVICES, MANUAL_ROOM, seed_bingo, seed_hall
from halls.models import AuditEntry, Role, StaffRole
from halls.services import sessions
from tests.conftest import ALL_BALLS
from tests.sqlite.demo_process import embedded_env

ROOT = Path(__file__).resolve().parents[2]


def _spanish(user: User) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="es")
    client.cookies["django_language"] = "es"
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_the_demo_seeds_an_inspector_and_each_rooms_drawing_devices_once() -> None:
    hall = seed_hall()
    seed_bingo(hall)
    again = seed_hall()
    seed_bingo(again)
    assert set(again.credentials) == {"operator", "caller", "cashier", "inspector", "door"}
    inspector = User.objects.get(username="inspector")
    assert list(StaffRole.objects.filter(user=inspector).values_list("role", flat=True)) == [Role.INSPECTOR]
    for name, wanted in DEVICES.items():
        room = hall.rooms[name]
        have = list(DrawDevice.objects.filter(room=room).order_by("reserve", "pk"))
        assert [(d.name, d.kind, d.reserve) for d in have] == [tuple(w) for w in wanted]
        assert [d.reserve for d in have].count(False) == 1 and [d.reserve for d in have].count(True) == 1
    # Registered through the service, audited once each whatever the starts.
    registered = AuditEntry.objects.filter(venue=hall.venue, action="draw_device.registered").count()
    assert registered == sum(len(w) for w in DEVICES.values())

    # "Sala 2" is played by hand: its games start with its blower; the self-playing room's with the RNG.
    caller = User.objects.get(username="caller")
    manual = hall.rooms[MANUAL_ROOM]
    sessions.open_session(
        room=manual, actor=caller, blower_ok=True, reserve_ok=True, reader_ok=True, inspection_balls=ALL_BALLS
    )
    game = games.create_game(room=manual, actor=caller, draw_source=DrawSource.MANUAL)
    assert game.draw_device is not None and game.draw_device.name == "Bombo 1"


@pytest.mark.django_db
def test_the_caller_reads_sala_2_by_its_blower_and_the_inspector_reads_without_writing() -> None:
    hall = seed_hall()
    seed_bingo(hall)
    caller = User.objects.get(username="caller")
    page = _spanish(caller).get("/console/").content.decode()
    tile = re.search(rf'data-room="{hall.rooms[MANUAL_ROOM].pk}">(.*?)</a>', page, re.S)
    assert tile, page
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", tile.group(1))).strip()
    assert text == "Sala 2 Bombo 1 (bombo neumático) · reserva: Bombo 2 (reserva)", text
    assert "RNG" not in text and "aleatori" not in text

    inspector = _spanish(User.objects.get(username="inspector"))
    assert inspector.get("/inspector/").status_code == 200
    assert inspector.get(f"/console/rooms/{hall.rooms[AUTOPLAY_ROOM].pk}/").status_code == 200
    refused = inspector.post(
        f"/api/rooms/{hall.rooms[MANUAL_ROOM].pk}/checks/",
        {"check": "blower", "ok": True, "note": ""},
        content_type="application/json",
    )
    assert refused.status_code == 403
    assert not AuditEntry.objects.filter(action="session.check_recorded").exists()


def test_the_banner_lists_the_pages_and_every_login(tmp_path: Path) -> None:
    """`manage.py demo --seed-only`, as `make demo` starts it (embedded, a database of its own)."""
    done = subprocess.run(
        [sys.executable, "manage.py", "demo", "--seed-only", "--port", "8765"],
        cwd=ROOT,
        env=embedded_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    banner = done.stdout
    for path in (
        "/console/",
        "/cashier/",
        "/paper/",
        "/setup/",
        "/machines/floor/",
        "/inspector/",
        "/admin/",
    ):
        assert f"http://localhost:8765{path}" in banner, banner
    logins = dict(re.findall(r"^  (operator|caller|cashier|inspector)\s+(\S+)$", banner, re.M))
    assert set(logins) == {"operator", "caller", "cashier", "inspector"}, banner
    assert "RNG" not in next(line for line in banner.splitlines() if "Sala 2" in line)
