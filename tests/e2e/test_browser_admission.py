"""The door's reception page in Spanish, in a real browser against the served app (issue 27): the door
admits an adult, refuses a minor, refuses a person on a register loaded from a file, records a
self-exclusion and then refuses the same person as self-excluded; the override refused without a second
person and admitted with one; the exit; the live count moves (also when another door admits).

Screenshot left in /tmp for a look: admission-es.png (1440×1000).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest
from playwright.async_api import Page, expect

from halls.door.services import admission, registers
from halls.models import Role, Venue
from halls.services import venueclock
from tests.conftest import make_user
from tests.door.register_support import dni, register_file, stream
from tests.e2e.browser_support import call, log_in
from tests.e2e.spanish_support import english_on

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"
LISTED = dni(60_000_001)
ADULT = dni(60_000_002)
MINOR = dni(60_000_003)
SELF_EXCLUDED = dni(60_000_004)
OTHER_DOOR = dni(60_000_005)
DAMAGED = "6000006O"  # a number the door cannot validate


def setup(venue: Venue) -> date:
    make_user("portero", venue, Role.DOOR)
    make_user("encargada", venue, Role.OPERATOR)
    data = register_file([("DNI", LISTED, "ES")], code="RGIAJ")
    registers.load_register_file(stream=stream(data), actor="test", create_name="RGIAJ")
    return venueclock.today(venue)


def admit_elsewhere(venue: Venue) -> Any:
    document = admission.document_from("DNI", OTHER_DOOR)
    return admission.admit(
        venue=venue, door="Puerta 2", document=document, birth_date=date(1970, 1, 1), actor="test"
    )


async def check(page: Page, number: str, birth: str) -> None:
    await page.fill("#number", number)
    await page.fill("#birth", birth)
    await page.press("#number", "Enter")  # a scanner ends with Enter


async def test_the_door_in_spanish(page: Page, server_url: str, venue: Venue) -> None:
    today = await call(setup, venue)
    await page.set_viewport_size({"width": 1440, "height": 1000})
    await log_in(page, server_url, "portero", "/admission/")
    await expect(page.locator("h1")).to_have_text("Admisión")
    await expect(page.locator("#door")).to_have_attribute("data-ready", "true")
    await expect(page.locator("#inside")).to_have_text("0")
    # The door's menu: the admission page, no till, no machines.
    nav = page.locator(".topbar nav")
    await expect(nav).to_contain_text("Admisión")
    await expect(nav).not_to_contain_text("Caja")
    await expect(nav).not_to_contain_text("Máquinas")
    await page.fill("#door-name", "Puerta 1")

    # An adult: admitted, the count moves, the focus is back on the number for the next scan.
    await expect(page.locator("#birth")).to_have_attribute("placeholder", "dd/mm/aaaa")
    await check(page, ADULT, "17/05/1980")  # as a Spanish door types it
    decision = page.locator("#decision")
    await expect(decision).to_have_attribute("data-decision", "admitted")
    await expect(page.locator("#decision-title")).to_have_text("Admitido")
    await expect(page.locator("#inside")).to_have_text("1")
    await expect(page.locator("#number")).to_be_focused()
    await expect(page.locator("#number")).to_have_value("")

    # A date that is none: said, nothing sent. A minor: refused.
    await check(page, MINOR, "31/02/2015")
    await expect(page.locator("#admit-msg")).to_contain_text("dd/mm/aaaa")
    ten = today.replace(year=today.year - 10).isoformat()
    await check(page, MINOR, ten)
    await expect(decision).to_have_attribute("data-decision", "minor")
    await expect(page.locator("#decision-title")).to_have_text("Denegado: menor de edad")

    # On the register loaded from a file: refused, the register named, never a reason.
    await check(page, LISTED, "1975-03-02")
    await expect(decision).to_have_attribute("data-decision", "prohibited")
    await expect(page.locator("#decision-title")).to_have_text("Denegado: en un registro de prohibidos")
    await expect(page.locator("#decision-detail")).to_contain_text("RGIAJ")

    # A self-exclusion, then the same person at the door.
    await page.fill("#selfex-number", SELF_EXCLUDED)
    await page.fill("#selfex-until", (today + timedelta(days=365)).strftime("%d/%m/%Y"))
    await page.click("#selfex-submit")
    await expect(page.locator("#selfex-msg")).to_contain_text("Autoexclusión registrada")
    await check(page, SELF_EXCLUDED, "1980-05-17")
    await expect(decision).to_have_attribute("data-decision", "self_excluded")
    await expect(page.locator("#decision-title")).to_have_text("Denegado: autoexcluido en esta sala")
    await expect(page.locator("#inside")).to_have_text("1")

    # A document the door cannot read: refused, the override offered; without a second person refused.
    await check(page, DAMAGED, "1980-05-17")
    await expect(page.locator("#admit-msg")).to_have_attribute("data-code", "bad_format")
    await expect(page.locator("#override")).to_have_attribute("open", "")
    await page.fill("#birth", "1980-05-17")
    await page.click("#override-submit")
    await expect(page.locator("#admit-msg")).to_have_attribute("data-code", "second_person_required")
    await expect(page.locator("#admit-msg")).to_contain_text("segunda persona")
    # The door cannot confirm their own override.
    await page.fill("#second-username", "portero")
    await page.fill("#second-password", "pw-portero")
    await page.click("#override-submit")
    await expect(page.locator("#admit-msg")).to_have_attribute("data-code", "second_person_same")
    await expect(page.locator("#inside")).to_have_text("1")
    # With the operator's own password: admitted by override.
    await page.fill("#second-username", "encargada")
    await page.fill("#second-password", "pw-encargada")
    await page.click("#override-submit")
    await expect(decision).to_have_attribute("data-decision", "admitted")
    await expect(page.locator("#decision-detail")).to_contain_text("Por excepción")
    await expect(page.locator("#inside")).to_have_text("2")
    await expect(page.locator("#recent tr")).to_have_count(5)
    await expect(page.locator("#recent")).not_to_contain_text(ADULT)

    # Another door admits: the count moves here without a reload, by the door stream (the page polls only
    # every 30 s while its socket is live).
    await expect(page.locator("body")).to_have_attribute("data-door-stream", "live")
    await call(admit_elsewhere, venue)
    await expect(page.locator("#inside")).to_have_text("3")
    await page.screenshot(path="/tmp/admission-es.png")
    assert await english_on(page) == []

    # The exit: the same document scanned at "Salida".
    await page.click("label:has(#mode-exit)")
    await expect(page.locator("#birth-field")).to_be_hidden()
    await page.fill("#number", ADULT)
    await page.press("#number", "Enter")
    await expect(decision).to_have_attribute("data-decision", "left")
    await expect(page.locator("#decision-title")).to_have_text("Salida registrada")
    await expect(page.locator("#inside")).to_have_text("2")
    await page.fill("#number", ADULT)
    await page.press("#number", "Enter")
    await expect(decision).to_have_attribute("data-decision", "replayed_left")
    await expect(page.locator("#inside")).to_have_text("2")

    # The door's home page: the admission tile, no machine floor, no till.
    await page.goto(f"{server_url}/")
    tiles = page.locator(".tiles")
    await expect(tiles.locator('[data-link="admission"]')).to_contain_text("Admisión")
    await expect(tiles.locator("a")).to_have_count(1)
    assert await english_on(page) == []
    await page.screenshot(path="/tmp/admission-home-es.png")
