"""The door's page and what it connects to, in Spanish, in a real browser against the served app (issue 27):

- the online register: the fake authority runs as a real process (tests/door/authority_support.py) and the
  server reads HALL_DOOR_ONLINE_REGISTERS pointing at it; the door refuses a person it lists and admits one
  it does not, the page saying the registers were consulted online; with the authority stopped, the last
  loaded file decides and the page says so; a new version of the file lists a person inside: the door's
  page shows the alert live (the register and its version), acknowledged there;
- a person admitted at the door gets a player card at the till ("a card for a person"), an electronic
  terminal accepts it; the door records their self-exclusion (the receipt's PDF offered), the door's page
  shows the alert live (cards blocked, no personal data) and the same card is refused at the terminal in
  Spanish; the door acknowledges the alert.

The app is served by a real process (gunicorn with the hall's uvicorn worker, as deployed) against the test's
committed database, its settings from its environment: HALL_DOOR_CARDS_NEED_ADMISSION on (its default, as in
production; the suite's autouse fixture turns it off only in this process) and HALL_DOOR_ONLINE_REGISTERS
naming the fake authority. Ports from this area's range (HALL_TEST_DOOR_PORTS, 8800-8899 by default).
Screenshots left in /tmp for a look: door-fallback-es.png and door-alert-es.png (1440×1000, full page).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from playwright.async_api import Browser, BrowserContext, Page, expect

from bingo.electronic.models import EGameState, Terminal
from bingo.electronic.services import games
from halls.cashier.models import PlayerCard, Till
from halls.cashier.services import player_cards
from halls.door.models import DoorAlert
from halls.door.services import registers
from halls.models import Role, Venue
from halls.services import venueclock
from tests.bingo.electronic.support import make_speciality, make_terminal, open_verified_session
from tests.cashier_support import on_shift
from tests.conftest import make_user
from tests.door import authority_support
from tests.door.authority_support import FakeAuthority
from tests.door.register_support import dni, register_file, stream
from tests.e2e.browser_support import call, log_in
from tests.e2e.celery_support import database_url, purge_queues
from tests.e2e.spanish_support import english_on
from tests.ports import free_port_in

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"
ON_FILE = dni(61_000_001)  # on the register's loaded file, not online
ONLINE = dni(61_000_002)  # listed online only
ADULT = dni(61_000_003)  # listed nowhere
PLAYER = dni(61_000_004)  # admitted, then self-excludes
NOT_ADMITTED = dni(61_000_005)  # never at the door
PORTS = os.environ.get("HALL_TEST_DOOR_PORTS", "8800-8899")  # this area's ports


def free_port() -> int:
    return free_port_in(PORTS)


@pytest.fixture
def serve(transactional_db: None, tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Start the app as a real process (gunicorn, the hall's uvicorn worker) against this test's database,
    with these settings in its environment; its base URL. Stopped, and its queued tasks purged, at teardown
    (before the test database is flushed)."""
    started: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(**environment: str) -> str:
        port = free_port()
        log_path = tmp_path / f"server-{port}.log"
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "HALL_AUDIT_ANCHOR_DIR": str(django_settings.HALL_AUDIT_ANCHOR_DIR),
            "PYTHONUNBUFFERED": "1",
            **environment,
        }
        env.pop("TEST_DATABASE_NAME", None)
        with log_path.open("wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "config.asgi:application", "-c", "config/gunicorn.py",
                 "--worker-class", "config.web_worker.HallUvicornWorker", "--workers", "1",
                 "--bind", f"127.0.0.1:{port}"],
                cwd=django_settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        started.append((proc, log_path))
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text(errors="replace")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=5) as answer:
                    if answer.status == 200:
                        return f"http://127.0.0.1:{port}"
            except OSError:
                time.sleep(0.2)

    try:
        yield start
    finally:
        for proc, _log in started:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        purge_queues()


@pytest.fixture
def authority(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthority]:
    monkeypatch.setattr(authority_support, "PORTS", PORTS)
    server = authority_support.start_fake_authority()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def steps() -> Iterator[None]:
    """The electronic game's ball steps are not sent to Celery (no ball is drawn here)."""
    games.register_draw_enqueuer(lambda game, ordinal, wait: None)
    yield
    from bingo.electronic import tasks

    games.register_draw_enqueuer(tasks.enqueue_draw)


@asynccontextmanager
async def other_page(browser: Browser) -> AsyncIterator[Page]:
    """A second person's browser (their own session), in Spanish."""
    context: BrowserContext = await browser.new_context(
        viewport={"width": 1280, "height": 900},
        locale="es-ES",
        timezone_id="Europe/Madrid",
        extra_http_headers={"Accept-Language": "es"},
    )
    await context.add_cookies(
        [{"name": "django_language", "value": "es", "domain": "127.0.0.1", "path": "/"}]
    )
    context.set_default_timeout(10_000)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield page
    finally:
        await context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


async def check(page: Page, number: str, birth: str = "17/05/1980") -> None:
    await page.fill("#number", number)
    await page.fill("#birth", birth)
    await page.press("#number", "Enter")  # a scanner ends with Enter


async def open_door(page: Page, server_url: str) -> None:
    await page.set_viewport_size({"width": 1440, "height": 1000})
    await log_in(page, server_url, "portero", "/admission/")
    await expect(page.locator("#door")).to_have_attribute("data-ready", "true")
    await expect(page.locator("body")).to_have_attribute("data-door-stream", "live")
    await page.fill("#door-name", "Puerta 1")


# --- the online register, and the file when the authority does not answer ----------------------------------


def a_register_on_file(venue: Venue) -> None:
    make_user("portero", venue, Role.DOOR)
    data = register_file([("DNI", ON_FILE, "ES")], code="RGIAJ")
    registers.load_register_file(stream=stream(data), actor="test", create_name="RGIAJ")


async def test_the_online_register_decides_and_the_file_stands_in_when_the_authority_is_down(
    page: Page, serve: Callable[..., str], venue: Venue, authority: FakeAuthority
) -> None:
    # Generous: the answer must arrive whatever the machine's load (the stopped service refuses at once).
    online = {"RGIAJ": {"url": f"{authority.url}/query", "timeout": 4.0}}
    server_url = serve(HALL_DOOR_ONLINE_REGISTERS=json.dumps(online), HALL_DOOR_ONLINE_BUDGET_SECONDS="5")
    authority.list_people([("DNI", ONLINE, "ES")])
    await call(a_register_on_file, venue)
    await open_door(page, server_url)
    decision = page.locator("#decision")
    consultation = page.locator("#consultation")

    # Listed online (not on the file): refused, the register named, consulted online.
    await check(page, ONLINE)
    await expect(decision).to_have_attribute("data-decision", "prohibited")
    await expect(page.locator("#decision-title")).to_have_text("Denegado: en un registro de prohibidos")
    await expect(page.locator("#decision-detail")).to_contain_text("RGIAJ")
    await expect(consultation).to_have_attribute("data-consultation", "online")
    await expect(consultation).to_have_text("Registros consultados en línea.")
    # Listed nowhere: admitted, online.
    await check(page, ADULT)
    await expect(decision).to_have_attribute("data-decision", "admitted")
    await expect(consultation).to_have_attribute("data-consultation", "online")
    assert authority.queries() == 2

    # The authority's service stops: the last loaded file decides, and the page says so.
    authority.stop()
    await check(page, ON_FILE)
    await expect(decision).to_have_attribute("data-decision", "prohibited")
    await expect(consultation).to_have_attribute("data-consultation", "file_fallback")
    await expect(consultation).to_contain_text("no respondió")
    await expect(consultation).to_be_visible()
    await page.screenshot(path="/tmp/door-fallback-es.png")
    # Who was listed online only is not on the file: admitted on the file's word, said again.
    await check(page, ONLINE)
    await expect(decision).to_have_attribute("data-decision", "admitted")
    await expect(consultation).to_have_attribute("data-consultation", "file_fallback")
    assert await english_on(page) == []
    assert ON_FILE not in await page.content()

    # A new version of the register's file lists the person admitted earlier: the door is alerted live (the
    # register and its version named, never a reason), and acknowledges it.
    await call(a_new_version_listing, ADULT)
    alert = page.locator(".door-alert[data-kind=register_listed]")
    await expect(alert).to_have_count(1)
    await expect(alert.locator(".door-alert__title")).to_have_text(
        "Un jugador que está dentro figura ahora en un registro de prohibidos"
    )
    await expect(alert).to_contain_text("Registro: RGIAJ, versión 2.")
    await expect(alert).to_contain_text("Puerta 1")
    await page.click(".door-alert__ack")
    await expect(page.locator("#alerts")).to_be_hidden()


def a_new_version_listing(number: str) -> None:
    data = register_file([("DNI", ON_FILE, "ES"), ("DNI", number, "ES")], version=2, issued=date(2026, 12, 2))
    registers.load_register_file(stream=stream(data), actor="test")


# --- the door, the till, the terminal ----------------------------------------------------------------------


def a_hall(venue: Venue, operator: Any) -> tuple[Terminal, str]:
    """The door's and the till's staff (the cashier on shift at a till) and an electronic speciality
    playing (game 1 on sale) with a terminal in service."""
    make_user("portero", venue, Role.DOOR)
    till = Till.objects.create(venue=venue, name="Caja Norte")
    on_shift(make_user("cajera", venue, Role.CASHIER), venue, float=Decimal("0"), till=till)
    speciality = make_speciality(venue, operator)
    terminal, token = make_terminal(speciality, operator, name="Terminal 7")
    open_verified_session(speciality, operator)
    games.set_running(speciality=speciality, running=True, actor=operator)
    assert speciality.games.filter(state=EGameState.SELLING).exists()
    return terminal, token


def the_card() -> PlayerCard:
    (card,) = PlayerCard.objects.filter(player__isnull=False)
    return card


def cash_in(card: PlayerCard) -> None:
    from django.contrib.auth.models import User

    cashier = User.objects.get(username="cajera")
    player_cards.cash_in(card=card, amount=Decimal("10.00"), means="cash", key="door-link-1", actor=cashier)


def card_state(card: PlayerCard) -> str:
    card.refresh_from_db()
    return str(card.state)


def alerts_open() -> list[tuple[str, int]]:
    return list(DoorAlert.objects.filter(acknowledged_at__isnull=True).values_list("kind", "cards_blocked"))


async def test_admitted_at_the_door_played_at_a_terminal_then_self_excluded_the_card_is_refused(
    page: Page,
    browser: Browser,
    serve: Callable[..., str],
    venue: Venue,
    operator: Any,
    settings: Any,
    steps: None,
) -> None:
    server_url = serve(HALL_DOOR_CARDS_NEED_ADMISSION="true")
    settings.HALL_DOOR_CARDS_NEED_ADMISSION = True  # here too: the test's own cash-in obeys it
    terminal, token = await call(a_hall, venue, operator)
    today: date = await call(venueclock.today, venue)
    await open_door(page, server_url)
    await expect(page.locator("#alerts")).to_be_hidden()

    # The door admits the person.
    await check(page, PLAYER)
    await expect(page.locator("#decision")).to_have_attribute("data-decision", "admitted")
    await expect(page.locator("#inside")).to_have_text("1")

    async with other_page(browser) as till:
        # The till issues their card by the document they show.
        await log_in(till, server_url, "cajera", "/cashier/")
        await expect(till.locator("#head-state")).to_have_text("Turno abierto")
        await till.click("#tab-cards")
        # The server's cards need an admission: a person the door has not admitted gets no card.
        await till.fill("#person-number", NOT_ADMITTED)
        await till.click("#card-person-form button[type=submit]")
        await expect(till.locator("#card-msg")).to_contain_text("no ha sido admitido hoy")
        await till.fill("#person-number", PLAYER)
        await till.click("#card-person-form button[type=submit]")
        await expect(till.locator("#card-state")).to_have_text("Activa")
        card = await call(the_card)
        await call(cash_in, card)

        # The terminal accepts the card.
        await till.goto(f"{server_url}/electronic/terminal/?lang=es#{terminal.device_id}:{token}")
        await expect(till.locator("body")).to_have_attribute("data-stream", "live")
        await till.fill("#card-input", card.number)
        await till.press("#card-input", "Enter")
        await expect(till.locator("#balance")).to_have_text("10,00 €")

        # The door records the person's self-exclusion: the receipt offered, the alert shown live.
        await page.fill("#selfex-number", PLAYER)
        await page.fill("#selfex-until", (today + timedelta(days=365)).strftime("%d/%m/%Y"))
        await page.click("#selfex-submit")
        await expect(page.locator("#selfex-msg")).to_contain_text("Autoexclusión registrada")
        receipt = page.locator("#selfex-receipt")
        await expect(receipt).to_be_visible()
        href = await receipt.get_attribute("href")
        assert href is not None and href.endswith("/receipt/")
        pdf = await page.request.get(f"{server_url}{href}")
        assert pdf.ok and pdf.headers["content-type"] == "application/pdf"

        panel = page.locator("#alerts")
        await expect(panel).to_be_visible()
        alert = panel.locator(".door-alert[data-kind=self_excluded]")
        await expect(alert).to_have_count(1)
        await expect(alert.locator(".door-alert__title")).to_have_text(
            "Un jugador que está dentro se ha autoexcluido"
        )
        await expect(alert).to_contain_text("Puerta 1")
        await expect(alert).to_contain_text("1 tarjeta bloqueada")
        assert await call(alerts_open) == [("self_excluded", 1)]
        assert PLAYER not in await page.content()
        assert await english_on(page) == []
        await page.screenshot(path="/tmp/door-alert-es.png", full_page=True)

        # The same card at the terminal: taken out and inserted again, refused in Spanish.
        await till.click("#eject")
        await till.fill("#card-input", card.number)
        await till.press("#card-input", "Enter")
        refusal = till.locator("#player-msg")
        await expect(refusal).to_be_visible()
        await expect(refusal).to_contain_text("bloqueada")
        assert await call(card_state, card) == "blocked"

    # The door acknowledges the alert: it leaves the panel.
    await page.click(".door-alert__ack")
    await expect(page.locator("#alerts")).to_be_hidden()
    assert await call(alerts_open) == []
