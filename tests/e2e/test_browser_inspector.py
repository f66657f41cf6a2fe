"""The inspector in a real browser, in Spanish (issue 15): logs in, opens a session's minutes and a game's
printable record (and their PDFs), the statistics, and verifies the audit chain; the session's writes are
refused to them.

Screenshots left in /tmp for a look: inspector-home.png, inspector-index.png, inspector-minutes.png,
inspector-game.png, inspector-game-print.png, inspector-statistics.png, inspector-audit.png.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.conf import settings
from playwright.async_api import BrowserContext, Page, expect
from pypdf import PdfReader

from halls.models import Role
from tests.bingo.traditional.inspector_support import play_session
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e


def pdf_text(content: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


async def test_an_inspector_reads_the_minutes_and_a_game_record_and_verifies_the_audit(
    page: Page,
    context: BrowserContext,
    server_url: str,
    venue: Any,
    room: Any,
    session: Any,
    card_series: Any,
    ball_set: Any,
    caller: Any,
    cashier: Any,
) -> None:
    played = await call(
        play_session, session=session, room=room, series=card_series, caller=caller, cashier=cashier
    )
    await call(make_user, "inspectora", venue, Role.INSPECTOR)
    spanish = {"name": settings.LANGUAGE_COOKIE_NAME, "value": "es", "domain": "127.0.0.1", "path": "/"}
    await context.add_cookies([spanish])  # type: ignore[list-item]
    await log_in(page, server_url, "inspectora", "/")
    await expect(page.locator(f'[data-venue="{venue.pk}"] .badge')).to_have_text("Inspector")
    await page.screenshot(path="/tmp/inspector-home.png", full_page=True)

    await page.click('[data-link="inspection"]')
    await expect(page.locator("h1")).to_have_text("Inspección")
    row = page.locator(f'[data-session="{session.pk}"]')
    await expect(row).to_contain_text("Sala 1")
    await page.screenshot(path="/tmp/inspector-index.png", full_page=True)

    # The session's minutes.
    await row.get_by_role("link", name="Acta").click()
    await expect(page.locator("h1")).to_have_text("Acta de la sesión")
    await expect(page.locator('[data-section="checks"]')).to_contain_text("Funciona")
    await expect(page.locator('[data-section="inspection"] span')).to_have_count(90)
    await expect(page.locator('[data-game="1"]')).to_contain_text("60,00 €")
    await expect(page.locator('[data-game="2"]')).to_contain_text("Anulada")
    incidents = page.locator('[data-section="incidents"]')
    await expect(incidents).to_contain_text("Bola 1 corregida")
    switched = "Cambio de Bombo 1 a Bombo reserva tras la bola 3: Turbine stopped"
    await expect(incidents).to_contain_text(switched)
    await expect(page.locator('[data-section="log"]')).to_contain_text("Premio confirmado")
    await page.screenshot(path="/tmp/inspector-minutes.png", full_page=True)
    minutes_pdf = await page.request.get(f"{server_url}/inspector/sessions/{session.pk}/minutes.pdf")
    assert minutes_pdf.headers["content-type"] == "application/pdf"
    body = await minutes_pdf.body()
    with open("/tmp/inspector-minutes.pdf", "wb") as out:  # for a look (pdftoppm)
        out.write(body)
    text = pdf_text(body)
    assert "Acta de la sesión" in text and "Quién hizo qué" in text and "36,00 €" in text, text[:300]

    # A game's printable record, on screen and as paper would take it.
    await page.locator('[data-game="1"] a').click()
    await expect(page.locator("h1")).to_have_text("Registro de la partida 1")
    await expect(page.locator('[data-fact="device"]')).to_contain_text("Bombo reserva")
    await expect(page.locator('[data-fact="ball-set"]')).to_contain_text(ball_set.name)
    await expect(page.locator('[data-prize="bingo"] [data-confirmed-by]')).to_have_text("caller")
    await expect(page.locator('[data-section="switches"]')).to_contain_text("Turbine stopped")
    await expect(page.locator('[data-section="balls"] [data-ball]')).to_have_count(played.played.balls_drawn)
    await page.screenshot(path="/tmp/inspector-game.png", full_page=True)
    await page.emulate_media(media="print")
    await expect(page.locator(".topbar")).to_be_hidden()
    await page.screenshot(path="/tmp/inspector-game-print.png", full_page=True)
    await page.emulate_media(media="screen")
    record_pdf = await page.request.get(f"{server_url}/inspector/games/{played.played.pk}/record.pdf")
    body = await record_pdf.body()
    with open("/tmp/inspector-game.pdf", "wb") as out:
        out.write(body)
    text = pdf_text(body)
    assert "Registro de la partida" in text and "Premios y quién los confirmó" in text, text[:300]

    # The statistics.
    await page.goto(f"{server_url}/inspector/venues/{venue.pk}/statistics/")
    await expect(page.locator('[data-row="Sala 1|traditional"]')).to_contain_text("Bingo tradicional")
    await expect(page.locator("[data-total]")).to_contain_text("60,00 %")
    await page.screenshot(path="/tmp/inspector-statistics.png", full_page=True)

    # The audit verification.
    await page.goto(f"{server_url}/inspector/")
    await page.locator(f'[data-venue="{venue.pk}"] [data-link="audit"]').click()
    await page.click('[data-action="verify"]')
    result = page.locator('[data-section="result"]')
    await expect(result).to_have_attribute("data-ok", "yes")
    await expect(result.locator("[data-verdict]")).to_contain_text("todas las cadenas están intactas")
    await expect(result.locator(f'[data-chain="venue-{venue.pk}"]')).to_contain_text("Intacta")
    await page.screenshot(path="/tmp/inspector-audit.png", full_page=True)

    # And nothing written through the browser's session: a write is refused with 403.
    token = await page.locator('meta[name="csrf-token"]').get_attribute("content")
    refused = await page.request.post(
        f"{server_url}/api/sessions/{session.pk}/close/", headers={"X-CSRFToken": token or ""}
    )
    assert refused.status == 403 and (await refused.json())["error"]["code"] == "read_only"
