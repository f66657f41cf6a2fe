"""The machine floor and the cashier's hand-pays in a real browser (Debian's chromium via Playwright).

The floor refreshes itself every second: a machine that reports a progressive hit turns up locked (hand
pay, pending amount) and one whose connection drops turns up offline, without a reload; each machine
links to its reconciliation. At the cashier, "Pagar" pays a pending hit through the API with the CSRF
token: the hit leaves the list, the payment is recorded (who, when, reference) and the machine unlocks.
A hall screen announces a machine's hit by its asset number ("Máquina SALA-102"), level and amount.

Screenshots at 1920×1080 are left in /tmp: machines-floor.png (a locked and an offline machine),
machines-handpays.png (a hit waiting to be paid), machines-screen-hit.png (a machine's hit on a hall screen).
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from playwright.async_api import Page, expect

from halls.models import Screen, Venue
from machines import protocol
from machines.models import Machine, ProgressiveHit
from machines.services import gateway
from tests.cashier_support import on_shift
from tests.e2e.browser_support import call, log_in, open_screen
from tests.e2e.machines_support import Floor, link_floor
from tests.e2e.test_browser_meters import money

# The floor, hand-pay and reconciliation pages are read here in Spanish, the hall's default.
ACCEPT_LANGUAGE = "es"

pytestmark = pytest.mark.e2e

D = Decimal

PAYING_FLOAT = Decimal("10000.00")


def plays(machine: Machine, first: int, count: int, bet: str = "1.00") -> list[dict[str, object]]:
    messages = [
        protocol.Play(seq=first + n, game_id=f"g-{first + n}", bet=D(bet), win=D("0.00"))
        for n in range(count)
    ]
    return gateway.receive(machine_id=machine.pk, messages=messages)


def meters(machine: Machine, seq: int, coin_in: str, games: int) -> None:
    message = protocol.Meters(
        seq=seq,
        coin_in=D(coin_in),
        coin_out=D("0.00"),
        jackpots_paid=D("0.00"),
        credits=D("25.00"),
        games_played=games,
    )
    gateway.receive(machine_id=machine.pk, messages=[message])


def floor_in_play(venue: Venue, operator: User) -> Floor:
    """Three machines online: the first two have played (with a meter snapshot), the third only said hello."""
    floor = link_floor(venue, operator, 3, code="SALA")
    for machine in floor.machines:
        gateway.hello(machine_id=machine.pk)
    plays(floor.machines[0], 1, 4)
    meters(floor.machines[0], 5, "4.00", 4)
    plays(floor.machines[1], 1, 2, "0.60")
    return floor


def report_hit(machine: Machine, seq: int, level: str = "Menor") -> ProgressiveHit:
    replies = gateway.receive(
        machine_id=machine.pk, messages=[protocol.Hit(seq=seq, level=level, game_id=f"g-{seq}")]
    )
    assert replies[0]["status"] == "accepted", replies
    return ProgressiveHit.objects.select_related("level").get(machine=machine, seq=seq)


def reload_machine(machine: Machine) -> Machine:
    machine.refresh_from_db()
    return machine


def reload_hit(hit: ProgressiveHit) -> ProgressiveHit:
    hit.refresh_from_db()
    return hit


async def test_the_floor_shows_machines_going_locked_and_offline(
    page: Page, server_url: str, venue: Venue, operator: User
) -> None:
    floor = await call(floor_in_play, venue, operator)
    first, second, third = floor.machines
    await log_in(page, server_url, "operator", "/machines/floor/")

    rows = page.locator("#floor-table tbody tr")
    await expect(rows).to_have_count(3)
    row = {m.pk: page.locator(f"#machine-{m.pk}") for m in floor.machines}
    for machine in floor.machines:
        await expect(row[machine.pk]).to_have_attribute("data-online", "true")
        await expect(row[machine.pk]).to_have_attribute("data-state", "in_service")
    await expect(row[first.pk].locator(".mf-asset strong")).to_have_text(first.asset_number)
    await expect(row[first.pk].locator(".mf-plays")).to_have_text("4")
    await expect(row[first.pk].locator(".mf-games")).to_have_text("4")
    await expect(row[first.pk].locator(".mf-coin-in")).to_have_text(re.compile(r"4,00"))
    await expect(row[first.pk]).to_contain_text("Isla A · puesto 1")
    await expect(row[first.pk]).to_contain_text("SALA")
    await expect(row[second.pk].locator(".mf-plays")).to_have_text("2")
    await expect(page.locator("#sum-online")).to_have_text("3")
    await expect(page.locator("#sum-locked")).to_have_text("0")

    # A progressive hit locks the first machine; the second's connection drops. No reload.
    hit = await call(report_hit, first, 6)
    await call(gateway.disconnected, machine_id=second.pk)
    await expect(row[first.pk]).to_have_attribute("data-state", "locked")
    await expect(row[first.pk]).to_have_attribute("data-lock-reason", "hand_pay")
    await expect(row[first.pk]).to_have_class(re.compile(r"\bis-locked\b"))
    await expect(row[first.pk].locator(".mf-reason")).to_have_text("Pago manual")
    await expect(row[first.pk].locator(".mf-pending")).to_contain_text("1 ·")
    await expect(row[first.pk].locator(".mf-pending")).to_contain_text(money(hit.amount))
    await expect(row[second.pk]).to_have_attribute("data-online", "false")
    await expect(row[second.pk]).to_have_class(re.compile(r"\bis-offline\b"))
    await expect(row[second.pk].locator(".mf-link")).to_have_text("Sin conexión")
    await expect(row[third.pk]).not_to_have_class(re.compile(r"\bis-(offline|locked)\b"))
    await expect(page.locator("#sum-offline")).to_have_text("1")
    await expect(page.locator("#sum-locked")).to_have_text("1")
    await expect(page.locator("#sum-pending")).to_have_text("1")
    await page.screenshot(path="/tmp/machines-floor.png", full_page=True)

    # The machine's reconciliation: the first snapshot, and the plays since.
    await row[first.pk].locator("a.mf-reconcile").click()
    await page.wait_for_url(f"{server_url}/machines/{first.pk}/reconciliation/")
    await expect(page.locator("h1")).to_have_text(f"Conciliación · Máquina {first.asset_number}")
    statuses = page.locator("#reconciliation-table tbody tr")
    await expect(statuses).to_have_count(2)
    await expect(statuses.nth(0)).to_have_attribute("data-status", "first")
    await expect(statuses.nth(1)).to_have_attribute("data-status", "open")


@pytest.mark.cashier_off_shift  # on shift below, with cash in the drawer to pay the hit
async def test_the_cashier_pays_a_hand_pay(
    page: Page, server_url: str, venue: Venue, operator: User, cashier: User
) -> None:
    await call(on_shift, cashier, venue, float=PAYING_FLOAT)  # hand pays are cash from the drawer
    floor = await call(floor_in_play, venue, operator)
    winner = floor.machines[0]
    hit = await call(report_hit, winner, 6, "Mayor")
    assert (await call(reload_machine, winner)).state == "locked"
    await log_in(page, server_url, "cashier", "/machines/handpays/")

    row = page.locator(f"#hit-{hit.pk}")
    await expect(row).to_be_visible()
    await expect(page.locator("#hits-table tbody tr")).to_have_count(1)
    await expect(row).to_contain_text(winner.asset_number)
    await expect(row).to_contain_text("Mayor")
    await expect(row.locator(".hp-amount")).to_have_text(money(hit.amount))
    await expect(page.locator("#hits-count")).to_have_text("1 pendiente")
    await page.screenshot(path="/tmp/machines-handpays.png", full_page=True)

    # The reference typed survives the list's refreshes; "Pagar" pays with it.
    await row.locator(".hp-ref").fill("VALE-0007")
    loaded = int(await page.locator("#handpays").get_attribute("data-loaded") or "0")
    await page.wait_for_function(  # the list refreshed (rebuilt) while the reference was there
        f"Number(document.getElementById('handpays').getAttribute('data-loaded')) > {loaded}"
    )
    await expect(row.locator(".hp-ref")).to_have_value("VALE-0007")
    await row.locator("button.hp-pay").click()
    await expect(page.locator("#page-msg")).to_contain_text(f"Pagado: máquina {winner.asset_number}")
    await expect(page.locator("#hits-table tbody tr")).to_have_count(0)
    await expect(page.locator("#hits-empty")).to_be_visible()

    paid = await call(reload_hit, hit)
    assert paid.paid_at is not None
    assert (paid.paid_by_id, paid.payment_ref) == (cashier.pk, "VALE-0007")
    machine = await call(reload_machine, winner)
    assert (machine.state, machine.lock_reason) == ("in_service", "")


async def test_a_machine_hit_is_announced_on_the_hall_screen(
    page: Page, server_url: str, venue: Venue, operator: User, screen: Screen
) -> None:
    floor = await call(floor_in_play, venue, operator)
    winner = floor.machines[1]
    await open_screen(page, server_url, screen.token)
    await expect(page.locator("#jp-meters .jp-meter")).to_have_count(2)  # the pool's two levels

    hit = await call(report_hit, winner, 3, "Menor")
    overlay = page.locator("#jp-hit")
    await expect(overlay).to_be_visible()
    await expect(overlay).to_have_attribute("data-machine", winner.asset_number)
    await expect(page.locator("#jp-hit-title")).to_have_text("¡Menor!")
    await expect(page.locator("#jp-hit-pool")).to_have_text("Progresivo Isla A")
    await expect(page.locator("#jp-hit-amount")).to_have_text(money(hit.amount))
    await expect(page.locator("#jp-hit-where")).to_have_text(f"Máquina {winner.asset_number}")
    await page.screenshot(path="/tmp/machines-screen-hit.png")
