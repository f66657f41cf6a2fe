"""The till issues a player card to the person showing their document, in Spanish, in a real browser: refused
while the person has not been admitted at the door today (the venue's cards need it), issued once they were;
the document number does not stay on the screen.

Screenshot left in /tmp for a look: till-player-es.png (1280×900).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from playwright.async_api import Page, expect

from halls.cashier.models import PlayerCard, Till
from halls.door.services import admission
from halls.models import Role, Venue
from tests.cashier_support import on_shift
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"
NUMBER = "31000001A"  # a DNI, its check letter right


def cashier_on_shift(venue: Venue) -> None:
    till = Till.objects.create(venue=venue, name="Caja Norte")
    on_shift(make_user("cajera", venue, Role.CASHIER), venue, float=Decimal("0"), till=till)


def admit(venue: Venue) -> None:
    admission.admit(
        venue=venue,
        door="Puerta 1",
        document=admission.document_from("DNI", NUMBER),
        birth_date=date(1980, 5, 17),
        actor="test",
    )


def cards_of_people() -> list[int | None]:
    return list(PlayerCard.objects.values_list("player_id", flat=True))


async def test_a_card_for_the_person_admitted_today(
    page: Page, server_url: str, venue: Venue, settings: Any
) -> None:
    settings.HALL_DOOR_CARDS_NEED_ADMISSION = True
    await call(cashier_on_shift, venue)
    await page.set_viewport_size({"width": 1280, "height": 900})
    await log_in(page, server_url, "cajera", "/cashier/")
    await expect(page.locator("#head-state")).to_have_text("Turno abierto")
    await page.click("#tab-cards")
    await expect(page.locator("#card-person-form h3")).to_have_text(
        "Una tarjeta para un jugador admitido hoy"
    )

    await page.fill("#person-number", NUMBER)
    await page.click("#card-person-form button[type=submit]")
    await expect(page.locator("#card-msg")).to_contain_text("no ha sido admitido hoy")
    await expect(page.locator("#person-number")).to_have_value("")
    assert await call(cards_of_people) == []

    await call(admit, venue)
    await page.fill("#person-number", NUMBER)
    await page.click("#card-person-form button[type=submit]")
    await expect(page.locator("#card-view")).to_be_visible()
    await expect(page.locator("#card-title")).to_contain_text("Tarjeta")
    await expect(page.locator("#card-state")).to_have_text("Activa")
    (player,) = await call(cards_of_people)
    assert player is not None
    assert NUMBER not in await page.content()
    await page.screenshot(path="/tmp/till-player-es.png", full_page=True)
