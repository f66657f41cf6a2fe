"""A venue's meters reconciled against the central's own records of it (issue 31): what the venue says it
forwarded, the central's running record of its batches, the batches the link accepted from it and the pool's
ledger rows attributed to it. Each difference recorded by the check that found it, on both sides, answered
to the venue, audited and counted on /metrics, and never twice for the same meters message; the list of
reconciliations through the API and the page, to the operator and the venue's inspector only."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone

from halls.link.models import InboxMessage
from halls.link.services import inbox, outbox
from halls.models import AuditEntry, Role, StaffRole
from jackpots.models import Contribution, PoolLevel
from jackpots.widearea import metrics
from jackpots.widearea.models import WideAreaDifference, WideAreaReconciliation
from jackpots.widearea.services import central, venue
from tests.api_support import api_client
from tests.conftest import make_user
from tests.jackpots.widearea.support import (
    Net,
    build,
    deliver,
    forward_all,
    plays,
    publish_and_follow,
    silence,
    sync,
    table_hand,
)

pytestmark = pytest.mark.django_db
D = Decimal


@pytest.fixture
def net() -> Net:
    return build()


def counted(side: str, state: str) -> float:
    return float(metrics.RECONCILIATIONS.labels(side=side, state=state)._value.get())


def found(side: str, check: str) -> float:
    return float(metrics.RECONCILE_DIFFERENCES.labels(side=side, check=check)._value.get())


def reconcile(net: Net, name: str) -> InboxMessage:
    """The venue `name` sends its meters; the central answers; the venue hears the answer."""
    venue.send_meters(mirror=net.mirror(name))
    deliver(getattr(net, name))
    publish_and_follow()
    return InboxMessage.objects.filter(venue=getattr(net, name), kind="wa.meters").latest("sequence")


def a_stray_ledger_row(net: Net) -> None:
    """A row in the central pool's ledger attributed to venue A that no batch of A's put there."""
    grand = PoolLevel.objects.get(pool=net.pool, name="Grand")
    Contribution.objects.create(
        pool=net.pool,
        level=grand,
        source=f"venue:{net.a.pk}",
        bet=D("2.00"),
        to_meter=D("0.02"),
        to_reserve=D("0"),
        house=D("1.98"),
        idempotency_key="stray",
        actor="test",
        created_at=timezone.now(),
    )


def test_every_record_agrees_after_play_and_the_reconciliation_is_kept_on_both_sides(net: Net) -> None:
    plays(net.machines["a"], 1, ["1.00", "0.60", "2.40"])
    table_hand(net, 1, "5.00")
    sync(net)
    before = counted("central", "agreed"), counted("venue", "agreed")
    meters = reconcile(net, "a")
    assert meters.answer["state"] == "agreed" and meters.answer["differences"] == 0
    assert meters.answer["by_check"] == {"received": 0, "batches": 0, "ledger": 0}
    mine = WideAreaReconciliation.objects.get(side="central", venue=net.a)
    assert mine.key == meters.sequence and mine.state == "agreed"
    grand = {name: D(str(mine.stated["Grand"][name])) for name in ("count", "bet", "to_meter")}
    assert grand == {"count": 3, "bet": D("4.00"), "to_meter": D("0.04")}
    assert mine.stated == mine.received == mine.applied
    assert D(mine.ledger["Grand"]["bet"]) == D("4.00") and mine.ledger["Grand"]["count"] == 0  # money only
    theirs = WideAreaReconciliation.objects.get(side="venue", venue=net.a)
    assert (theirs.key, theirs.state, theirs.differences) == (meters.sequence, "agreed", 0)
    assert venue.last_reconciliation(net.mirror("a")) == theirs
    assert (counted("central", "agreed"), counted("venue", "agreed")) == (before[0] + 1, before[1] + 1)
    assert AuditEntry.objects.filter(venue=net.a, action="widearea.meters_reconciled").count() == 2


def test_a_ledger_row_no_batch_explains_is_found_answered_and_recorded_on_both_sides(net: Net) -> None:
    plays(net.machines["a"], 1, ["1.00"])
    sync(net)
    a_stray_ledger_row(net)
    before = found("central", "ledger"), found("venue", "ledger")
    meters = reconcile(net, "a")
    assert meters.answer["state"] == "differs"
    assert meters.answer["by_check"] == {"received": 0, "batches": 0, "ledger": 3}  # bet, to_meter, house
    rows = sorted(
        WideAreaDifference.objects.filter(kind="ledger").values_list(
            "side", "level", "field", "venue_value", "central_value"
        )
    )
    assert rows == [
        (side, "Grand", field, applied, applied + stray)
        for side in ("central", "venue")
        for field, applied, stray in (
            ("bet", D("1.00"), D("2.00")),
            ("house", D("0.99"), D("1.98")),
            ("to_meter", D("0.01"), D("0.02")),
        )
    ]
    assert (found("central", "ledger"), found("venue", "ledger")) == (before[0] + 3, before[1] + 3)
    shown = Client().get("/metrics").content.decode()
    line = 'hall_widearea_reconcile_differences_total{check="ledger",side="central"} '
    assert any(row.startswith(line) and float(row[len(line) :]) >= 3 for row in shown.splitlines())
    assert "hall_widearea_reconciliations_total{" in shown
    entry = AuditEntry.objects.filter(venue=net.a, action="widearea.meters_reconciled").order_by("pk").first()
    assert entry is not None and len(entry.data["differences"]) == 3
    assert {d["check"] for d in entry.data["differences"]} == {"ledger"}
    # The pool's balancing report sees it too, and names the venue.
    report = central.balance(wide_area=net.wide)
    assert not report["holds"]
    assert sorted(report["ledger_by_venue"]) == ["WA-A"]
    assert {d["field"] for d in report["ledger_by_venue"]["WA-A"]} == {"bet", "to_meter", "house"}


def test_a_batch_the_central_refused_shows_in_the_received_and_the_batches_checks() -> None:
    net = build(mixed=False)
    plays(net.machines["a"], 1, ["1.00"])
    forward_all()
    deliver(net.a)
    table_hand(net, 1, "5.00")
    forward_all()
    (refused,) = deliver(net.c)
    assert refused.status == "refused"
    meters = reconcile(net, "c")
    # The venue says it forwarded the hand (count, bet, to_meter, house; no reserve): the central neither
    # received nor accepted it. Its ledger holds what the batches accepted said: nothing of C.
    assert meters.answer["by_check"] == {"received": 4, "batches": 4, "ledger": 0}
    fields = sorted(
        WideAreaDifference.objects.filter(side="central", venue=net.c).values_list(
            "kind", "field", "venue_value", "central_value"
        )
    )
    parts = [("bet", D("5")), ("count", D("1")), ("house", D("4.95")), ("to_meter", D("0.05"))]
    assert fields == [(kind, f, v, D(0)) for kind in ("batches", "received") for f, v in parts]


def test_a_meters_message_delivered_again_is_not_reconciled_twice(net: Net) -> None:
    plays(net.machines["a"], 1, ["1.00"])
    sync(net)
    a_stray_ledger_row(net)
    meters = reconcile(net, "a")
    rows = WideAreaDifference.objects.count(), WideAreaReconciliation.objects.count()
    audits = AuditEntry.objects.filter(action="widearea.meters_reconciled").count()
    before = counted("central", "differs"), found("central", "ledger")
    # The venue's link sends it again (its acknowledgement lost): the inbox answers as the first time.
    again = inbox.accept(
        venue_id=net.a.pk, sequence=meters.sequence, kind=meters.kind, payload=meters.payload
    )
    assert again.status == "duplicate" and again.answer == meters.answer
    # The service itself, asked again for the same message: the first answer, nothing recorded or counted.
    twice = central.accept_meters(venue_id=net.a.pk, payload=meters.payload, sequence=meters.sequence)
    assert twice == meters.answer
    # The central's answer applied again at the venue: nothing more either.
    told = WideAreaReconciliation.objects.get(side="central", venue=net.a)
    venue.reconciled(
        {
            "pool": told.pool_code,
            "venue": net.a.licence_number,
            "sequence": told.key,
            "levels": told.received,
            "applied": told.applied,
            "ledger": told.ledger,
        }
    )
    assert (WideAreaDifference.objects.count(), WideAreaReconciliation.objects.count()) == rows
    assert AuditEntry.objects.filter(action="widearea.meters_reconciled").count() == audits
    assert (counted("central", "differs"), found("central", "ledger")) == before
    # A new meters message is a new reconciliation: it carries on from the last one (the batches and the
    # ledger rows since), and the stray row it found is still there.
    plays(net.machines["a"], 2, ["3.00"])
    forward_all()
    later = reconcile(net, "a")
    assert (later.answer["state"], later.answer["by_check"]["ledger"]) == ("differs", 3)
    first, second = WideAreaReconciliation.objects.filter(side="central", venue=net.a).order_by("key")
    assert second.ledger_through > first.ledger_through > 0
    assert D(second.applied["Grand"]["bet"]) == D(first.applied["Grand"]["bet"]) + D("3.00") == D("4.00")
    assert D(second.ledger["Grand"]["bet"]) == D("6.00")  # with the stray 2.00


def test_batches_and_meters_accepted_in_one_transaction_are_compared_like_with_like(net: Net) -> None:
    plays(net.machines["a"], 1, ["1.00", "3.00"])
    forward_all()
    venue.send_meters(mirror=net.mirror("a"))
    plays(net.machines["a"], 3, ["2.00"])
    forward_all()
    venue.send_meters(mirror=net.mirror("a"))
    pending = [
        {"sequence": m.sequence, "kind": m.kind, "payload": m.payload}
        for m in outbox.pending(venue_id=net.a.pk)
    ]
    assert [m["kind"] for m in pending] == ["wa.contributions", "wa.meters"] * 2
    batch = inbox.accept_many(venue_id=net.a.pk, messages=pending)
    assert [a.status for a in batch.accepted] == ["applied"] * 4
    answers = [a.answer for a in batch.accepted if "by_check" in a.answer]
    assert [(a["state"], a["differences"]) for a in answers] == [("agreed", 0), ("agreed", 0)]
    applied = list(
        WideAreaReconciliation.objects.filter(side="central")
        .order_by("key")
        .values_list("applied", flat=True)
    )
    assert [D(a["Grand"]["bet"]) for a in applied] == [D("4.00"), D("6.00")]


def test_the_list_to_the_operator_and_each_venues_inspector_only(net: Net, client) -> None:
    plays(net.machines["a"], 1, ["1.00"])
    plays(net.machines["b"], 1, ["2.00"])
    sync(net)
    a_stray_ledger_row(net)
    reconcile(net, "a")
    reconcile(net, "b")
    operator = api_client(net.operator)
    listed = operator.get("/api/widearea/reconciliations/").json()
    assert listed["side"] == "central"  # this installation is a wide-area pool's central
    assert [(r["venue"]["licence"], r["state"]) for r in listed["reconciliations"]] == [
        ("WA-B", "agreed"),
        ("WA-A", "differs"),
    ]  # newest first
    differs = listed["reconciliations"][1]
    assert {(d["check"], d["field"], D(d["delta"])) for d in differs["differences"]} == {
        ("ledger", "bet", D("-2.00")),
        ("ledger", "to_meter", D("-0.02")),
        ("ledger", "house", D("-1.98")),
    }
    only_b = operator.get(f"/api/widearea/reconciliations/?venue={net.b.pk}&pool=WAN-GRAND").json()
    assert [r["venue"]["licence"] for r in only_b["reconciliations"]] == ["WA-B"]
    at_venue = operator.get("/api/widearea/reconciliations/?side=venue").json()
    assert {r["side"] for r in at_venue["reconciliations"]} == {"venue"}
    # The inspector of venue B reads B's, not A's; a cashier of B reads none.
    inspector = make_user("inspector-b", net.b, Role.INSPECTOR)
    theirs = api_client(inspector).get("/api/widearea/reconciliations/").json()
    assert [r["venue"]["licence"] for r in theirs["reconciliations"]] == ["WA-B"]
    cashier = make_user("cashier-b", net.b, Role.CASHIER)
    assert api_client(cashier).get("/api/widearea/reconciliations/").status_code == 403
    assert api_client(None).get("/api/widearea/reconciliations/").status_code == 401
    # The page: the same list, per pool, for the inspector; refused to the cashier.
    client.force_login(inspector)
    page = client.get("/widearea/reconciliations/")
    assert page.status_code == 200
    body = page.content.decode()
    assert 'data-pool="WAN-GRAND"' in body and 'data-venue="WA-B"' in body and 'data-venue="WA-A"' not in body
    client.force_login(cashier)
    assert client.get("/widearea/reconciliations/").status_code == 403
    # The venue's mirror tells its own last reconciliation.
    mirror = operator.get(f"/api/widearea/mirrors/{net.mirrors['a'].pk}/").json()
    assert mirror["last_reconciliation"]["side"] == "venue"
    assert mirror["last_reconciliation"]["state"] == "differs"
    assert StaffRole.objects.filter(user=inspector, role=Role.INSPECTOR).exists()


def test_a_cut_venue_restored_is_reconciled_once_on_each_side(net: Net) -> None:
    plays(net.machines["b"], 1, ["1.00"] * 2)
    sync(net)
    silence(net.mirror("b"))
    venue.watch()
    plays(net.machines["b"], 3, ["1.00"])
    forward_all()
    publish_and_follow()  # the line is back: B's batch, then its meters
    deliver(net.a, net.b, net.c)
    publish_and_follow()
    publish_and_follow()
    rows = list(WideAreaReconciliation.objects.values_list("side", "venue_id", "state", "differences"))
    assert sorted(rows) == [("central", net.b.pk, "agreed", 0), ("venue", net.b.pk, "agreed", 0)]


def test_the_venue_checks_the_answer_against_the_totals_it_sent_not_what_it_forwarded_since(net: Net) -> None:
    plays(net.machines["a"], 1, ["1.00"])
    sync(net)
    venue.send_meters(mirror=net.mirror("a"))
    deliver(net.a)  # reconciled at the central
    plays(net.machines["a"], 2, ["5.00"])
    forward_all()  # forwarded before the central's answer reaches the venue
    publish_and_follow()
    theirs = WideAreaReconciliation.objects.get(side="venue", venue=net.a)
    assert (theirs.state, theirs.differences) == ("agreed", 0)
    assert theirs.through < net.mirror("a").forwarded_through
    assert D(theirs.stated["Grand"]["bet"]) == D("1.00")
