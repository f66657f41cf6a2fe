"""The wide-area reconciliations on the gaming authority's feed and portal (issue 31): each reconciliation
recorded on either side is told to the regulator's node (widearea.reconciled) when the feed is on for the
venue's jurisdiction, with the totals and differences the operator's page shows; the node's portal lists
them, newest first, to the authority's staff only. A venue of another authority (its jurisdiction's feed
off) is never told, so never shown."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from halls import anchor_lines
from halls.feed.kinds import FeedKind
from halls.feed.schema import validate_payload
from halls.link.models import Destination, OutboxMessage
from halls.link.services import feed_outbox
from halls.models import Jurisdiction, Role, Venue
from halls.regulator.models import FeedMessage, FeedRefusal
from halls.regulator.services import intake, portal, registry
from halls.services import anchor_key, installation
from jackpots.widearea.models import WideAreaReconciliation
from jackpots.widearea.services import reconciliations
from tests.conftest import make_user
from tests.jackpots.widearea.support import Net, build, plays, sync
from tests.jackpots.widearea.test_reconciliation import a_stray_ledger_row, reconcile
from tests.portal.support import accept, authority_user, register

pytestmark = pytest.mark.django_db
D = Decimal
KIND = FeedKind.WIDE_AREA_RECONCILED.value


@pytest.fixture
def net(settings: Any) -> Net:
    settings.HALL_FEED_BY_JURISDICTION = {Jurisdiction.AN10: {"enabled": True}}
    built = build()
    # Venue B is of another authority's region: its jurisdiction's feed is off.
    Venue.objects.filter(pk=built.b.pk).update(jurisdiction=Jurisdiction.ML)
    return built


@dataclass
class Told:
    venue_id: int | None
    at: datetime
    payload: dict[str, Any]


def told() -> list[Told]:
    """The messages owed to the regulator's node of this kind, in order (the outbox keeps the fact's time
    beside its payload)."""
    rows = OutboxMessage.objects.filter(destination=Destination.REGULATOR, kind=KIND).order_by("sequence")
    return [Told(m.venue_id, datetime.fromisoformat(m.payload["at"]), m.payload["payload"]) for m in rows]


def played_and_reconciled(net: Net) -> None:
    plays(net.machines["a"], 1, ["1.00", "3.00"])
    plays(net.machines["b"], 1, ["2.00"])
    sync(net)
    a_stray_ledger_row(net)
    reconcile(net, "a")
    reconcile(net, "b")


def test_each_side_of_a_fed_venues_reconciliation_is_told_as_the_read_model_shows_it(net: Net) -> None:
    played_and_reconciled(net)
    messages = told()
    assert [(m.venue_id, m.payload["side"]) for m in messages] == [(net.a.pk, "central"), (net.a.pk, "venue")]
    for message in messages:
        validate_payload(KIND, message.payload)
        row = WideAreaReconciliation.objects.get(side=message.payload["side"], venue=net.a)
        api = reconciliations.of(row).as_payload()
        assert message.payload == {**{k: v for k, v in api.items() if k != "id"}, "venue": "WA-A"}
        assert message.payload["state"] == "differs" and message.payload["sequence"] == row.key
        assert {(d["check"], d["field"], D(d["delta"])) for d in message.payload["differences"]} == {
            ("ledger", "bet", D("-2.00")),
            ("ledger", "to_meter", D("-0.02")),
            ("ledger", "house", D("-1.98")),
        }
    # B's were recorded on both sides all the same: only never told to this authority.
    assert WideAreaReconciliation.objects.filter(venue=net.b).count() == 2


def test_nothing_is_told_with_the_feed_off(net: Net, settings: Any) -> None:
    settings.HALL_FEED_BY_JURISDICTION = {}
    played_and_reconciled(net)
    assert told() == [] and WideAreaReconciliation.objects.count() == 4


def on_the_node(messages: list[Told]) -> None:
    """The messages as the regulator's node accepts them (this test database playing the node too): the
    central's records from the central's installation, a venue's from its own."""
    senders = {
        "central": register("Central WAN", uid="c3" * 8, kind="central", jurisdiction="AN10"),
        "venue": register("Casino A", uid="a1" * 8, licence="WA-A", jurisdiction="AN10"),
    }
    for message in messages:
        accept(senders[message.payload["side"]], KIND, message.payload, at=message.at)


def test_the_authority_reads_them_on_its_portal_newest_first_and_no_one_else(net: Net, settings: Any) -> None:
    played_and_reconciled(net)
    on_the_node(told())
    settings.HALL_ROLE = "regulator"
    authority = Client()
    authority.force_login(authority_user())
    url = reverse("regulator:reconciliations")
    answer = authority.get(url)
    assert answer.status_code == 200
    page = answer.content.decode()
    assert 'data-pool="WAN-GRAND"' in page and 'data-venue="WA-A"' in page
    assert 'data-venue="WA-B"' not in page  # another authority's venue: never told, never shown
    sides = [page.index(f'data-side="{side}"') for side in ("venue", "central")]
    assert sides == sorted(sides)  # newest first: the venue's record came after the central's
    assert page.count('data-check="ledger" data-level="Grand" data-field="bet"') == 2
    assert page.count('data-delta="-2.000000"') == 2 and 'data-delta="-0.020000"' in page
    assert 'data-level="Grand" data-part="to_meter"' in page
    assert f'href="{url}"' in page  # in the portal's navigation
    only = authority.get(url, {"side": "central", "pool": "WAN-GRAND", "venue": "WA-A"}).content.decode()
    assert only.count('class="wa-reconciliation"') == 1 and 'data-side="central"' in only
    assert 'class="wa-reconciliation"' not in authority.get(url, {"venue": "WA-B"}).content.decode()
    fragment = authority.get(url, {"fragment": "1"}).content.decode()
    assert "<html" not in fragment and 'data-venue="WA-A"' in fragment
    # The venue's operator and inspector (rights in the hall, none on the node) and a plain user: refused.
    for user in (
        net.operator,
        make_user("inspector-a", net.a, Role.INSPECTOR),
        make_user("nobody"),
    ):
        client = Client()
        client.force_login(user)
        refused = client.get(url)
        assert refused.status_code == 403 and b"WA-A" not in refused.content
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")


def test_the_portal_speaks_spanish(net: Net, settings: Any) -> None:
    played_and_reconciled(net)
    on_the_node(told())
    settings.HALL_ROLE = "regulator"
    authority = Client()
    authority.force_login(authority_user())
    authority.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    page = authority.get(reverse("regulator:reconciliations")).content.decode()
    # The operator's page's words, already translated: the checks, the parts, the records.
    assert "Lotes aceptados frente al libro del fondo" in page
    for english in ("Batches accepted against the pool's ledger", "Venue's totals", "Every record agrees"):
        assert english not in page


def test_the_nodes_intake_accepts_them_as_sent_signed(net: Net, settings: Any) -> None:
    """What the installation owes, signed as its sender sends it, passes the node's own checks (envelope,
    signature, schema, sequence): every message accepted, none refused."""
    played_and_reconciled(net)
    public = anchor_lines.raw_public(anchor_key.signing_key().public_key()).hex()
    node = registry.register(
        uid=installation.identity(), name="Red WAN", kind="central", licence_number="",
        jurisdiction="AN10", public_key=public, actor="test",
    )  # fmt: skip
    settings.HALL_ROLE = "regulator"
    batch = feed_outbox.next_batch(limit=1000)
    received = intake.receive(messages=batch)
    assert FeedRefusal.objects.count() == 0, list(FeedRefusal.objects.values_list("reason", "detail"))
    assert FeedMessage.objects.filter(installation=node).count() == len(batch) == received.stored
    stored = FeedMessage.objects.filter(installation=node, kind=KIND).order_by("sequence")
    assert [(m.payload["venue"], m.payload["side"]) for m in stored] == [
        ("WA-A", "central"),
        ("WA-A", "venue"),
    ]
    listed = portal.reconciliations()
    assert [(r.venue, r.side, r.state, len(r.shown)) for r in listed] == [
        ("WA-A", "venue", "differs", 3),
        ("WA-A", "central", "differs", 3),
    ]
    grand = listed[0].levels[0]
    assert grand.level == "Grand" and grand.totals["ledger"] == {
        "count": D(0), "bet": D("6.00"), "to_meter": D("0.06"), "to_reserve": D(0), "house": D("5.94"),
    }  # fmt: skip
