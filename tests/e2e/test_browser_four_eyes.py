"""Four eyes in a real browser: operator A takes a table out of its carrusel on the setup page, which only
proposes it; operator B logs in, finds it on the four-eyes page and approves it with B's own password;
the table leaves the pool, and the audit names A as proposer and B as approver.

Screenshot left in /tmp for a look: four-eyes-pending.png.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import BrowserContext, Page, expect

from halls.models import AuditEntry, Proposal, Role
from jackpots.tables.models import CasinoTable
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in
from tests.jackpots.tables.conftest import Casino, make_pool, make_table

pytestmark = pytest.mark.e2e

PACK = "AN10_PSD_CARRUSEL"  # AN10: a carrusel of some tables, so one may leave


def _house() -> dict[str, Any]:
    house = Casino("AN10")
    pool = make_pool(house.venue, house.operator, PACK)
    one, two = (make_table(house.venue, house.operator, PACK, pool=pool) for _ in range(2))
    second = make_user("bea", house.venue, Role.OPERATOR)
    return {"a": house.operator.username, "b": second.username, "one": one, "two": two, "pool": pool.pk}


def _state(table_id: int) -> tuple[int | None, list[tuple[str, str]], dict[str, Any] | None]:
    pool = CasinoTable.objects.get(pk=table_id).pool_id
    proposal = Proposal.objects.filter(kind="table.leave_pool").first()
    if proposal is None:
        return pool, [], None
    entries = AuditEntry.objects.filter(object_type="halls.proposal", object_id=str(proposal.pk)).order_by(
        "pk"
    )
    left = AuditEntry.objects.filter(action="table.left_pool", object_id=str(table_id)).first()
    return (
        pool,
        [(e.action, e.actor_label) for e in entries],
        {"status": proposal.status, "left_by": left.actor_label if left else None, "pk": proposal.pk},
    )


async def test_a_proposal_made_by_one_operator_is_approved_by_another_with_their_password(
    page: Page, context: BrowserContext, server_url: str
) -> None:
    made = await call(_house)
    two: CasinoTable = made["two"]
    await log_in(page, server_url, made["a"], "/setup/")
    await page.locator(f'[data-member="{two.number}"] button[type="submit"]').click()
    await expect(page.locator("#carrusel-proposals [data-proposal]")).to_have_count(1)
    pool, _names, proposal = await call(_state, two.pk)
    assert pool == made["pool"] and proposal is not None and proposal["status"] == "proposed"

    # A cannot approve their own proposal, even with their password.
    await page.goto(f"{server_url}/proposals/")
    card = page.locator(f'[data-proposal="{proposal["pk"]}"]')
    await card.locator('.approve-form input[name="password"]').fill(f"pw-{made['a']}")
    await card.locator('.approve-form button[type="submit"]').click()
    await expect(page.locator('[data-message="error"]')).to_be_visible()
    assert (await call(_state, two.pk))[0] == made["pool"]

    # B logs in (A's session gone) and approves with B's own password.
    await context.clear_cookies()
    await log_in(page, server_url, made["b"], "/proposals/")
    card = page.locator(f'[data-proposal="{proposal["pk"]}"]')
    await expect(card).to_contain_text(made["a"])
    await page.screenshot(path="/tmp/four-eyes-pending.png", full_page=True)
    await card.locator('.approve-form input[name="password"]').fill("wrong")
    await card.locator('.approve-form button[type="submit"]').click()
    await expect(page.locator('[data-message="error"]')).to_be_visible()
    assert (await call(_state, two.pk))[0] == made["pool"]
    card = page.locator(f'[data-proposal="{proposal["pk"]}"]')
    await card.locator('.approve-form input[name="password"]').fill(f"pw-{made['b']}")
    await card.locator('.approve-form button[type="submit"]').click()
    await expect(page.locator('[data-message="success"]')).to_be_visible()
    await expect(page.locator(f'[data-decided="{proposal["pk"]}"]')).to_have_attribute(
        "data-status", "applied"
    )

    pool, names, decided = await call(_state, two.pk)
    assert pool is None  # the table left the carrusel
    assert decided is not None and decided["status"] == "applied" and decided["left_by"] == made["b"]
    assert names == [("foureyes.proposed", made["a"]), ("foureyes.approved", made["b"])]
