"""Every word Spanish (issue 26), in a real browser with the hall's Spanish: the caller console's claim
verdicts and the inspection-draw refusal, the admin's model names, a screen whose address shows no room,
the error pages, dates and amounts; and a sweep that logs in as each role, opens each staff page and fails
on any English a person would read there (tests/e2e/spanish_support.py).

Screenshots left in /tmp for a look: es-console-verdict.png, es-console-inspection.png, es-admin-index.png,
es-admin-venue.png, es-admin-cashier-settings.png, es-screen-unavailable.png, es-404.png,
es-inspector-game.png, and es-sweep-<page>.png for each page of the sweep.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from playwright.async_api import Page, expect

from bingo.cards import CardGrid
from bingo.traditional.models import Card, Game
from bingo.traditional.services import claims, draw, games, sales
from bingo.traditional.services import series as series_services
from halls.cashier.models import CashierSettings
from halls.models import Role, Room, Screen, Venue
from halls.services import sessions
from jackpots.rulepacks import PACKS
from jackpots.tables.services import tables
from tests.cashier_support import on_shift
from tests.conftest import ALL_BALLS, SEED, make_user
from tests.e2e.browser_support import call, log_in
from tests.e2e.spanish_support import english_on

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"
NBSP = "\u00a0"


@pytest.fixture(autouse=True)
def _spanish(settings: Any) -> None:
    """The hall's default (Spanish), as a venue runs it: what no person chose is Spanish."""
    settings.LANGUAGE_CODE = "es"


@dataclass
class Hall:
    venue: Venue
    room: Room
    screen: Screen
    game: Game
    session_id: int
    short_card: int  # a sold card with no complete line at the last ball
    table_id: int


def staff(venue: Venue) -> None:
    """Staff named in Spanish (a username is shown on the pages, and "operator" is an English word)."""
    make_user("operadora", venue, Role.OPERATOR)
    make_user("locutor", venue, Role.CALLER)
    cajera = make_user("cajera", venue, Role.CASHIER)
    on_shift(cajera, venue, float=Decimal("0"))
    make_user("inspectora", venue, Role.INSPECTOR)
    get_user_model().objects.create_superuser("gerente", password="pw-gerente")


def hall_in_play(venue: Venue, room: Room, screen: Screen) -> Hall:
    """A game drawing with 30 cards sold and six balls out, a Line claimed, checked and paid."""
    staff(venue)
    users = {u.username: u for u in get_user_model().objects.all()}
    operadora, locutor, cajera = users["operadora"], users["locutor"], users["cajera"]
    series_services.create_ball_set(venue=venue, name="Juego 1", actor=operadora)
    series = series_services.create_series(
        venue=venue, code="A", face_value=Decimal("2.00"), strips=10, actor=operadora, seed=SEED
    )
    session = sessions.open_session(
        room=room, actor=locutor, blower_ok=True, reserve_ok=True, reader_ok=True, inspection_balls=ALL_BALLS
    )
    game = games.create_game(room=room, actor=locutor, draw_source="manual")
    game = games.open_sales(game=game, actor=locutor)
    sales.sell_range(game=game, series=series, first=1, last=30, actor=cajera)
    game = games.close_sales(game=game, actor=locutor)
    game = games.start_draw(game=game, actor=locutor)
    top = sorted(n for n in CardGrid.from_json(Card.objects.get(series=series, serial=9).grid).rows[0] if n)
    for number in top:
        draw.enter_ball(game=game, number=number, actor=locutor)
    claims.file_claim(game=game, kind="line", series_code="A", serial=9, actor=locutor)
    claims.confirm_claims(game=game, kind="line", actor=locutor)
    drawn = set(top)
    short = next(
        serial
        for serial in range(1, 31)
        if not any(
            row <= drawn
            for row in CardGrid.from_json(Card.objects.get(series=series, serial=serial).grid).row_numbers
        )
    )
    pack = PACKS["ML_PSD_CARRUSEL"]
    table = tables.create_table(
        venue=venue, number=1, name="Mesa 1", game=pack.game, table_minimum=Decimal("10.00"),
        rule_pack=pack.code, actor=operadora,
    )  # fmt: skip
    return Hall(venue, room, screen, Game.objects.get(pk=game.pk), session.pk, short, table.pk)


async def no_english(page: Page, where: str) -> None:
    found = await english_on(page)
    assert not found, f"English on the Spanish page {where}:\n" + "\n".join(found)


# --- the console: claim verdicts and the inspection refusal -------------------------------------------------


async def test_a_line_claim_refused_as_incomplete_reads_spanish(
    page: Page, server_url: str, venue: Venue, room: Room, screen: Screen
) -> None:
    """Before any Line is won: the refusal of an incomplete line, its row and missing numbers in Spanish."""
    await call(staff, venue)
    hall = await call(_drawing_without_line, venue, room)
    await log_in(page, server_url, "locutor", f"/console/rooms/{room.pk}/")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await page.check('#claim-form input[name="kind"][value="line"]')
    await page.fill("#claim-series", "A")
    await page.fill("#claim-serial", "16")
    await page.click("#claim-form button[type=submit]")
    await expect(page.locator("#verdict-reason")).to_have_text(
        re.compile(r"^El cartón 16 no tiene ninguna línea completa: en la fila \d faltan aún: [\d, y]+$")
    )
    text = await page.locator("#verdict-reason").text_content()
    assert text is not None and hall in text  # the missing numbers, joined the Spanish way
    # The API still carries the stable code and its figures.
    answer = await page.evaluate(
        "(url) => fetch(url, {credentials: 'same-origin'}).then((r) => r.json())",
        f"/api/rooms/{room.pk}/console/",
    )
    claim = answer["game"]["claims"][-1]
    assert claim["code"] == "line_incomplete"
    assert claim["facts"]["serial"] == 16 and claim["facts"]["missing"]
    assert claim["reason"].startswith("Card 16 has no complete line: row ")  # the audit's English
    await page.screenshot(path="/tmp/es-console-verdict.png", full_page=True)
    await no_english(page, "console (an incomplete line refused)")


def _drawing_without_line(venue: Venue, room: Room) -> str:
    """A game drawing three balls out (no line possible); returns how the console lists card 16's missing
    numbers of its closest row ("25, 35 y 75")."""
    users = {u.username: u for u in get_user_model().objects.all()}
    operadora, locutor, cajera = users["operadora"], users["locutor"], users["cajera"]
    series_services.create_ball_set(venue=venue, name="Juego 1", actor=operadora)
    series = series_services.create_series(
        venue=venue, code="A", face_value=Decimal("2.00"), strips=10, actor=operadora, seed=SEED
    )
    sessions.open_session(
        room=room, actor=locutor, blower_ok=True, reserve_ok=True, reader_ok=True, inspection_balls=ALL_BALLS
    )
    game = games.create_game(room=room, actor=locutor, draw_source="manual")
    game = games.open_sales(game=game, actor=locutor)
    sales.sell_range(game=game, series=series, first=1, last=30, actor=cajera)
    game = games.close_sales(game=game, actor=locutor)
    game = games.start_draw(game=game, actor=locutor)
    grid = CardGrid.from_json(Card.objects.get(series=series, serial=16).grid)
    first_row = sorted(n for n in grid.rows[0] if n)
    for number in first_row[:3]:
        draw.enter_ball(game=game, number=number, actor=locutor)
    missing = first_row[3:]
    return f"{', '.join(map(str, missing[:-1]))} y {missing[-1]}"


async def test_the_inspection_refusal_reads_spanish(
    page: Page, server_url: str, venue: Venue, room: Room
) -> None:
    await call(staff, venue)
    await log_in(page, server_url, "locutor", f"/console/rooms/{room.pk}/")
    await expect(page.locator("#session-badge")).to_have_text("Ninguna sesión abierta")
    for check in ("#check-blower", "#check-reserve", "#check-reader"):
        await page.check(check)
        await expect(page.locator(f"{check}-done")).to_contain_text("locutor")
    await page.fill("#inspect-paste", " ".join(str(n) for n in [*range(1, 89), 7]))
    await page.click("#inspect-paste-add")
    await page.click("#session-open-btn")
    message = page.locator("#session-msg")
    await expect(message).to_contain_text(
        "La extracción de comprobación debe mostrar las 90 bolas, cada una una vez: "
        "repetidas: [7]; faltan: [89, 90]."
    )
    await page.screenshot(path="/tmp/es-console-inspection.png", full_page=True)
    await no_english(page, "console (the inspection draw refused)")


# --- the admin --------------------------------------------------------------------------------------------


async def test_the_admin_names_every_model_in_spanish(
    page: Page, server_url: str, venue: Venue, room: Room
) -> None:
    await call(staff, venue)
    await call(CashierSettings.objects.get_or_create, venue=venue)
    await log_in(page, server_url, "gerente", "/admin/")
    main = page.locator("#content-main")
    names = {
        "bingo-ballset": "Juegos de bolas",
        "bingo-claim": "Cantos",
        "cashier-cashiersettings": "Ajustes de caja",
        "halls-venue": "Locales",
        "machines-machine": "Máquinas",
        "jackpots-pool": "Acumulados",
    }
    for model, name in names.items():
        await expect(main.locator(f"#{model} a")).to_have_text(name)
    await page.screenshot(path="/tmp/es-admin-index.png", full_page=True)
    await no_english(page, "admin index")

    await page.goto(f"{server_url}/admin/halls/venue/{venue.pk}/change/")
    await page.screenshot(path="/tmp/es-admin-venue.png", full_page=True)
    await expect(page.locator("#content-main")).to_contain_text("Agregar Función del personal adicional")
    await page.screenshot(path="/tmp/es-admin-venue.png", full_page=True)
    await no_english(page, "admin: a venue")

    await page.goto(f"{server_url}/admin/cashier/cashiersettings/")
    await expect(page.locator("h1")).to_contain_text("ajustes de caja")
    await page.screenshot(path="/tmp/es-admin-cashier-settings.png", full_page=True)
    await no_english(page, "admin: cashier settings")


# --- a screen address that shows no room, and the error pages ---------------------------------------------


async def test_a_wrong_screen_address_shows_a_spanish_page_that_retries(
    page: Page, server_url: str, screen: Screen
) -> None:
    answer = await page.goto(f"{server_url}/screens/not-a-token/")
    assert answer is not None and answer.status == 404
    await expect(page.locator("h1")).to_have_text("Pantalla no disponible")
    await expect(page.locator("#unavailable")).to_contain_text(
        "La sala no reconoce la dirección de esta pantalla"
    )
    await expect(page.locator("#unavailable-retry")).to_have_text(
        "Vuelve a intentarlo sola cada 30 segundos."
    )
    assert await page.locator('meta[http-equiv="refresh"]').get_attribute("content") == "30"
    await page.screenshot(path="/tmp/es-screen-unavailable.png")
    await no_english(page, "a screen with a wrong token")

    # It comes back by itself: the page reloads, and a page whose address is now right shows the room.
    await page.evaluate("(url) => { document.querySelector('meta[http-equiv=refresh]').remove(); }", None)
    await page.goto(f"{server_url}/screens/{screen.token}/")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")

    # A screen switched off: its venue's language, English here.
    await call(Screen.objects.filter(pk=screen.pk).update, active=False)
    await call(Venue.objects.filter(pk=screen.venue_id).update, language="en")
    await page.goto(f"{server_url}/screens/{screen.token}/")
    await expect(page.locator("h1")).to_have_text("Screen not available")
    await expect(page.locator("#unavailable")).to_contain_text("switched off")


async def test_a_missing_page_is_spanish_for_people_and_json_for_the_api(page: Page, server_url: str) -> None:
    answer = await page.goto(f"{server_url}/no-such-page/")
    assert answer is not None and answer.status == 404
    await expect(page.locator("h1")).to_have_text("Página no encontrada")
    await expect(page.locator("#error-page")).to_have_attribute("data-status", "404")
    await page.screenshot(path="/tmp/es-404.png")
    await no_english(page, "a missing page")
    api = await page.request.get(f"{server_url}/api/no-such-thing/")
    assert api.status == 404
    assert (await api.json())["error"]["code"] == "not_found"


# --- the sweep: every staff page, as each role ------------------------------------------------------------

PAGES_BY_ROLE = {
    "operadora": [
        "/",
        "/setup/",
        "/paper/",
        "/machines/floor/",
        "/tables/",
        "/tables/{table}/console/",
        "/regions/",
    ],
    "locutor": ["/console/", "/console/rooms/{room}/", "/tables/"],
    "cajera": ["/machines/handpays/", "/machines/floor/"],
    "inspectora": [
        "/inspector/",
        "/inspector/sessions/{session}/",
        "/inspector/games/{game}/",
        "/inspector/venues/{venue}/statistics/",
        "/inspector/venues/{venue}/audit/",
    ],
    "gerente": ["/admin/", "/admin/halls/venue/{venue}/change/", "/admin/bingo/game/{game}/change/"],
}


async def sweep(page: Page, server_url: str, pages: dict[str, list[str]], ids: dict[str, Any]) -> list[str]:
    """Each role logged in with the Spanish cookie, each of its pages opened, screenshotted and read."""
    found: list[str] = []
    for username, paths in pages.items():
        await page.context.clear_cookies()
        await page.context.add_cookies(
            [{"name": "django_language", "value": "es", "domain": "127.0.0.1", "path": "/"}]
        )
        first = paths[0].format(**ids)
        await log_in(page, server_url, username, first)
        for path in paths:
            url = path.format(**ids)
            answer = await page.goto(f"{server_url}{url}")
            assert answer is not None and answer.status == 200, (username, url, answer and answer.status)
            await page.wait_for_load_state("networkidle")
            await page.wait_for_timeout(500)  # the pages' scripts fill their tables from the API
            slug = re.sub(r"\W+", "-", url).strip("-") or "home"
            await page.screenshot(path=f"/tmp/es-sweep-{username}-{slug}.png", full_page=True)
            found += [f"{username} {url}: {text}" for text in await english_on(page)]
    return found


async def test_no_english_reaches_a_spanish_page(
    page: Page, server_url: str, venue: Venue, room: Room, screen: Screen
) -> None:
    hall = await call(hall_in_play, venue, room, screen)
    ids = {
        "room": room.pk,
        "session": hall.session_id,
        "game": hall.game.pk,
        "venue": venue.pk,
        "table": hall.table_id,
    }
    found = await sweep(page, server_url, PAGES_BY_ROLE, ids)
    # The public screen, in its venue's Spanish.
    await page.goto(f"{server_url}/screens/{screen.token}/")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await page.screenshot(path="/tmp/es-sweep-screen.png")
    found += [f"screen: {text}" for text in await english_on(page)]
    assert not found, "English on Spanish pages:\n" + "\n".join(found)


# --- the sweep at the central: the network's pages --------------------------------------------------------

CENTRAL_PAGES = {
    "jefa-red": [
        "/network/",
        "/central/pools/",
        "/central/games/",
        "/central/reports/",
        "/central/reports/?by=region",
        "/central/reports/?by=operator",
    ],
    "locutora-red": ["/simultaneous/{hall_game}/", "/console/rooms/{sb_room}/"],
    "inspectora-red": ["/inspector/", "/inspector/sessions/{sb_session}/"],
}


def _network_staff(scene: Any) -> dict[str, int]:
    """Staff of hall 1 named in Spanish; the ids of its simultaneous game's pages."""
    hall = scene.net.halls[0]
    make_user("jefa-red", hall.venue, Role.OPERATOR)
    make_user("locutora-red", hall.venue, Role.CALLER)
    make_user("inspectora-red", hall.venue, Role.INSPECTOR)
    hall_game = scene.net.hall_game(hall, scene.game)
    return {"hall_game": hall_game.pk, "sb_room": hall.room.pk, "sb_session": hall.session.pk}


async def test_no_english_reaches_the_central_network_pages(
    page: Page, server_url: str, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The central's pages of the interconnected prize and the simultaneous game, and a member venue's page
    of the simultaneous game, read in Spanish."""
    from tests.bingo.network.interconnected.central_pages_support import build_scene

    settings.HALL_ROLE = "central"
    scene = await call(build_scene, monkeypatch)
    ids = await call(_network_staff, scene)
    found = await sweep(page, server_url, CENTRAL_PAGES, ids)
    # Every amount with its currency (the simultaneous game's prizes, a decision's share, a remainder).
    await log_in(page, server_url, "jefa-red", "/central/pools/")
    await expect(page.locator("h1")).to_have_text("Premios de la red y sus marcadores")
    await expect(page.locator('#game-prizes [data-game="SB-1"]')).to_contain_text(f"5,85{NBSP}€")
    await expect(page.locator('[data-decision="1"]')).to_contain_text(f"59,00{NBSP}€")
    await page.screenshot(path="/tmp/es-central-pools.png", full_page=True)
    await page.goto(f"{server_url}/central/games/")
    await expect(page.locator('[data-game="SB-1"] h2')).to_contain_text(f"cartón 1,00{NBSP}€")
    await expect(page.locator('[data-game="SB-1"] [data-decision="bingo"]').first).to_contain_text(
        f"0,00{NBSP}€"
    )
    await page.goto(f"{server_url}/central/reports/?by=region")
    await expect(page.locator('[data-row="ML"]')).to_contain_text(f"14,00{NBSP}€")
    await expect(page.locator("#report-table")).not_to_contain_text("000000")
    await page.screenshot(path="/tmp/es-central-report.png", full_page=True)
    # A member venue's page of the game: its price, sales and prizes with their currency too.
    await page.context.clear_cookies()
    await page.context.add_cookies(
        [{"name": "django_language", "value": "es", "domain": "127.0.0.1", "path": "/"}]
    )
    await log_in(page, server_url, "locutora-red", f"/simultaneous/{ids['hall_game']}/")
    await expect(page.locator("main")).to_contain_text(f"1,00{NBSP}€ cada uno")
    await expect(page.locator("main")).to_contain_text(f"Bingo de la red 5,85{NBSP}€")
    assert not found, "English on the central's Spanish pages:\n" + "\n".join(found)


# --- the sweep of electronic bingo: the terminal, the screen, the staff pages ----------------------------


def _electronic_hall(venue: Venue) -> dict[str, Any]:
    """An electronic room running, with a terminal, its session verified, a game on sale and cards bought;
    the staff of the sweep."""
    from bingo.electronic.services import games as egames
    from tests.bingo.electronic.support import buy, funded_card, make_speciality, make_terminal
    from tests.bingo.electronic.support import open_verified_session as open_electronic
    from tests.bingo.electronic.test_game_known_balls import C1, C2

    staff(venue)
    users = {u.username: u for u in get_user_model().objects.all()}
    operadora, cajera = users["operadora"], users["cajera"]
    speciality = make_speciality(venue, operadora, code="SALA-E")
    terminal, token = make_terminal(speciality, operadora, "Terminal 1")
    session = open_electronic(speciality, operadora)
    egames.set_running(speciality=speciality, running=True, actor=operadora)
    buy(speciality.games.get(), terminal, funded_card(venue, cajera), [C1, C2], "k1")
    screen = Screen.objects.create(venue=venue, room=speciality.room, name="Pantalla electrónica")
    return {
        "eroom": speciality.room_id,
        "esession": session.pk,
        "venue": venue.pk,
        "terminal": f"{terminal.device_id}:{token}",
        "screen": screen.token,
    }


ELECTRONIC_PAGES = {
    "locutor": ["/console/", "/console/rooms/{eroom}/"],
    "operadora": ["/", "/setup/", "/tables/"],
    "inspectora": ["/inspector/", "/inspector/venues/{venue}/statistics/"],
}


async def test_no_english_reaches_the_electronic_bingo_pages(
    page: Page, server_url: str, venue: Venue
) -> None:
    from tests.bingo.electronic.support import enqueued

    with enqueued():
        ids = await call(_electronic_hall, venue)
        found = await sweep(page, server_url, ELECTRONIC_PAGES, ids)
        # The player's terminal, in the hall's Spanish whatever the browser asks.
        await page.context.clear_cookies()
        await page.goto(f"{server_url}/electronic/terminal/#{ids['terminal']}")
        await expect(page.locator("#sales-line")).to_contain_text("a la venta")
        await page.wait_for_timeout(500)
        await page.screenshot(path="/tmp/es-sweep-terminal.png", full_page=True)
        found += [f"terminal: {text}" for text in await english_on(page)]
        # The electronic room's hall screen.
        await page.goto(f"{server_url}/screens/{ids['screen']}/")
        await expect(page.locator("#electronic")).to_be_visible()
        await page.screenshot(path="/tmp/es-sweep-electronic-screen.png")
        found += [f"electronic screen: {text}" for text in await english_on(page)]
    assert not found, "English on the electronic Spanish pages:\n" + "\n".join(found)
