"""The posted signage in a real browser: the hall screen shows the short digest of each prize program in
force (from the snapshot, then live on a change and a switch-off), the public page its QR code opens shows
the terms and recomputes their digest, and the pending page links the prize table to post.

Screenshots left in /tmp: screen-signage.png (the screen's footer with the digest), terms-page.png (the
public page), proposals-signage.png (the pending page's link); the PDF itself as /tmp/prize-table.pdf.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from playwright.async_api import Page, expect

from bingo.traditional.programs import terms
from bingo.traditional.services import programs
from bingo.traditional.services.four_eyes import PROGRAM_ACTIVATE
from halls.foureyes import target_of
from halls.models import Proposal, Role, Room
from halls.services import proposals
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in, open_screen

pytestmark = pytest.mark.e2e

AUTH = "ML-DGJ-2025/017"
PRIMA = {"funding_percent": "2.5", "amount": "30", "authorisation_ref": AUTH}


def activate(room: Room, operator: User) -> str:
    program = programs.activate_program(
        room=room, code="PRIMA", program_type="BA-1", params=PRIMA, name="Prima 30", actor=operator
    )
    return program.versions.get().digest


def change(room: Room, operator: User) -> str:
    found = room.prize_programs.get(code="PRIMA")
    return programs.change_program(program=found, params={**PRIMA, "amount": "50"}, actor=operator).digest


def switch_off(room: Room, operator: User) -> None:
    programs.deactivate_program(program=room.prize_programs.get(code="PRIMA"), actor=operator)


async def test_the_screen_shows_the_short_digest_of_the_program_in_force_and_follows_its_changes(
    page: Page, server_url, screen, room, operator
):
    first = await call(activate, room, operator)
    await open_screen(page, server_url, screen.token)
    digests = page.locator("#program-digests")
    await expect(digests).to_be_visible()
    await expect(digests).to_contain_text(f"Prima 30 {terms.short(first)}")
    await page.wait_for_timeout(300)
    await page.screenshot(path="/tmp/screen-signage.png")

    second = await call(change, room, operator)  # a new version in force now: live, no reload
    await expect(digests).to_contain_text(f"Prima 30 {terms.short(second)}")
    await expect(digests).not_to_contain_text(terms.short(first))

    await call(switch_off, room, operator)
    await expect(digests).to_be_hidden()
    await page.reload()
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await expect(digests).to_be_hidden()


def propose(room: Room, operator: User) -> Proposal:
    return proposals.propose(
        venue=room.venue,
        kind=PROGRAM_ACTIVATE,
        target=target_of("room", room.pk),
        params={"code": "PRIMA", "program_type": "BA-1", "params": PRIMA, "name": "Prima 30"},
        actor=operator,
    )


async def test_the_pending_page_links_the_sheet_and_its_qr_opens_the_public_terms(
    page: Page, server_url, room, operator
):
    proposal = await call(propose, room, operator)
    await call(make_user, "segunda", room.venue, Role.OPERATOR)
    await log_in(page, server_url, "segunda", "/proposals/")
    link = page.locator(f'[data-proposal="{proposal.pk}"] a[data-sheet]')
    await expect(link).to_be_visible()
    await page.screenshot(path="/tmp/proposals-signage.png", full_page=True)
    sheet = await page.request.get(f"{server_url}{await link.get_attribute('href')}")
    assert sheet.ok and sheet.headers["content-type"] == "application/pdf"
    with open("/tmp/prize-table.pdf", "wb") as out:
        out.write(await sheet.body())

    # The public page (no login) the sheet's QR code opens: proposed, its digest recomputed.
    await page.context.clear_cookies()
    await page.goto(f"{server_url}/t/{proposal.digest}/")
    await expect(page.locator("#terms")).to_have_attribute("data-status", "proposed")
    await expect(page.locator("[data-recomputed]")).to_have_attribute("data-recomputed", "ok")
    await expect(page.locator("[data-grouped]")).to_have_text(terms.grouped(proposal.digest))
    await expect(page.locator("h1")).to_have_text("Prima 30")
    await page.screenshot(path="/tmp/terms-page.png", full_page=True)
