"""Wide-area progressives through their services and the link's loopback (the central and three venues in
one installation): contributions forwarded exactly once and the central's level back on every venue's
machines; a simultaneous hit decided once; a venue cut off and restored, its meters reconciled; the
balancing reports to the cent at the central and in every venue. Bad input refused and counted once."""

from __future__ import annotations

from decimal import Decimal

import pytest

from halls import money
from halls.cashier.models import Payable
from halls.errors import Conflict, InvalidInput
from halls.link.models import InboxMessage
from halls.link.services import inbox, outbox
from jackpots.models import Contribution
from jackpots.widearea.models import (
    WideAreaClaim,
    WideAreaDifference,
    WideAreaHit,
    WideAreaMirror,
    WideAreaVenue,
)
from jackpots.widearea.services import central, venue
from machines import protocol
from machines.models import LockReason, MachineState, ProgressiveHit
from machines.services import broadcast, gateway
from tests.jackpots.widearea.support import (
    GRAND_RATE,
    SEED,
    Net,
    build,
    central_grand,
    deliver,
    forward_all,
    plays,
    publish_and_follow,
    refused_count,
    silence,
    sync,
    table_hand,
)

pytestmark = pytest.mark.django_db
D = Decimal


@pytest.fixture
def net() -> Net:
    return build()


def shown(net: Net, name: str) -> broadcast.LinkLevels | None:
    group = net.groups[name]
    return next((item for item in broadcast.link_levels() if item.group_id == group.pk), None)


def balances_hold(net: Net) -> None:
    report = central.balance(wide_area=net.wide)
    assert report["holds"], report
    for name in ("a", "b", "c"):
        mine = venue.balance(mirror=net.mirror(name))
        assert mine["holds"], (name, mine)


def test_contributions_cross_once_and_the_level_comes_back(net: Net) -> None:
    plays(net.machines["a"], 1, ["1.00", "0.40", "2.20"])
    plays(net.machines["b"], 1, ["0.60"] * 5)
    for hand in range(1, 4):
        table_hand(net, hand, "5.00")
    bets = D("3.60") + D("3.00") + D("15.00")
    sync(net)
    assert central_grand() == SEED + bets * GRAND_RATE
    # Exactly once: nothing new to forward, a delivery again is answered as a duplicate, nothing counted.
    assert forward_all() == 0
    before = Contribution.objects.filter(pool=net.pool).count()
    message = outbox.pending(venue_id=net.a.pk).first()
    assert message is None
    first = InboxMessage.objects.filter(venue_id=net.a.pk, kind="wa.contributions").first()
    assert first is not None
    again = inbox.accept(venue_id=net.a.pk, sequence=first.sequence, kind=first.kind, payload=first.payload)
    assert again.status == "duplicate"
    assert Contribution.objects.filter(pool=net.pool).count() == before
    # Every venue's machines hear the central's Grand, and their own Mini.
    for name in ("a", "b"):
        item = shown(net, name)
        assert item is not None
        levels = dict(item.levels)
        assert levels["Grand"] == money.cents_down(SEED + bets * GRAND_RATE)  # shown to the cent, down
        assert levels["Mini"] == D("10.00")  # its own local level (a few tenths of a cent up)
        assert item.unavailable == ()
        assert "unavailable" not in broadcast.payload(item, 0)
    assert WideAreaVenue.objects.get(venue=net.c).received["Grand"]["bet"] == "15.00"
    balances_hold(net)


def hit_at(net: Net, name: str, seq: int) -> list[dict[str, object]]:
    return gateway.receive(
        machine_id=net.machines[name].pk, messages=[protocol.Hit(seq=seq, level="Grand", game_id=f"g-{seq}")]
    )


def test_a_simultaneous_hit_is_decided_once_and_paid_where_it_won(net: Net) -> None:
    plays(net.machines["a"], 1, ["10.00"] * 10)
    plays(net.machines["b"], 1, ["10.00"] * 10)
    sync(net)
    meter = central_grand()
    assert meter == SEED + D("200") * GRAND_RATE
    # Both hit in the same instant: each venue locks its machine and sends the hit.
    for name in ("a", "b"):
        (reply,) = hit_at(net, name, 11)
        assert reply["status"] == "accepted" and reply["lock"] == "hand_pay"
    deliver(net.a)
    deliver(net.b)
    hits = {h.venue_id: h for h in WideAreaHit.objects.all()}
    assert hits[net.a.pk].outcome == "won" and hits[net.a.pk].amount == D("1002.00")
    assert hits[net.b.pk].outcome == "redecided" and hits[net.b.pk].amount == SEED  # the reset level
    # A second delivery of B's hit (its outbox rewound): the same answer, nothing decided twice.
    message = InboxMessage.objects.get(venue_id=net.b.pk, kind="wa.hit")
    assert (
        inbox.accept(
            venue_id=net.b.pk, sequence=message.sequence, kind=message.kind, payload=message.payload
        ).status
        == "duplicate"
    )
    assert WideAreaHit.objects.count() == 2
    publish_and_follow()
    # Each venue pays its own at its cashier: a hand pay of its machine; the level reset everywhere.
    for name, amount in (("a", D("1002.00")), ("b", SEED)):
        hit = ProgressiveHit.objects.get(machine=net.machines[name])
        assert hit.amount == amount
        payable = Payable.objects.get(venue_id=net.machines[name].venue_id)
        assert payable.amount == amount
        claim = WideAreaClaim.objects.get(mirror__venue=net.machines[name].venue)
        assert claim.amount == amount
    for name in ("a", "b"):
        item = shown(net, name)
        assert item is not None and dict(item.levels)["Grand"] == SEED
    balances_hold(net)


def test_a_simultaneous_hit_without_a_prize_unlocks_its_machine() -> None:
    net = build(second_hit="nothing")
    plays(net.machines["a"], 1, ["10.00"] * 3)
    sync(net)
    hit_at(net, "a", 4)
    hit_at(net, "b", 1)
    deliver(net.a, net.b)
    publish_and_follow()
    assert {h.outcome for h in WideAreaHit.objects.all()} == {"won", "lost"}
    b = net.machines["b"]
    b.refresh_from_db()
    assert b.state == MachineState.IN_SERVICE and b.lock_reason == LockReason.NONE
    assert not ProgressiveHit.objects.filter(machine=b).exists()
    assert Payable.objects.filter(venue_id=net.b.pk).count() == 0
    balances_hold(net)


def test_a_venue_cut_off_withdraws_the_level_keeps_its_contributions_and_reconciles(net: Net) -> None:
    plays(net.machines["b"], 1, ["1.00"] * 4)
    sync(net)
    # B's line is cut: what its machines play is kept (batched into its outbox, not delivered).
    silence(net.mirror("b"))
    plays(net.machines["b"], 5, ["2.00"] * 6)
    plays(net.machines["a"], 1, ["1.00"] * 2)
    forward_all()
    deliver(net.a)
    assert outbox.backlog(venue_id=net.b.pk) >= 1
    assert venue.watch() == 1
    assert net.mirror("b").state == "unavailable"
    item = shown(net, "b")
    assert item is not None
    assert [name for name, _ in item.levels] == ["Mini"] and item.unavailable == ("Grand",)
    assert broadcast.payload(item, 0)["unavailable"] == ["Grand"]
    # Its machines go on with their local level; a hit on the wide-area level is refused, counted once.
    before = refused_count("venue", "level_unavailable")
    (refusal,) = hit_at(net, "b", 11)
    assert (refusal["status"], refusal["code"]) == ("rejected", "level_unavailable")
    (retry,) = hit_at(net, "b", 11)
    assert retry["code"] == "level_unavailable"
    assert refused_count("venue", "level_unavailable") == before + 2  # two messages, each refused once
    assert not WideAreaClaim.objects.exists()
    # A's machines still offer it.
    a_item = shown(net, "a")
    assert a_item is not None and "Grand" in dict(a_item.levels)
    # The line returns: B's batches go, its level is offered again and its meters reconciled.
    deliver(net.b)
    publish_and_follow()
    assert net.mirror("b").state == "available"
    deliver(net.a, net.b, net.c)  # the reconciliation B sent
    publish_and_follow()
    assert central_grand() == SEED + D("18.00") * GRAND_RATE
    assert not WideAreaDifference.objects.exists()
    assert InboxMessage.objects.filter(venue_id=net.b.pk, kind="wa.meters").get().answer["differences"] == 0
    balances_hold(net)


def test_locking_setting_silences_the_group() -> None:
    net = build(offline_action="lock")
    sync(net)
    silence(net.mirror("a"))
    assert shown(net, "a") is None  # no broadcast: the machines lock themselves (their link heartbeat)
    assert shown(net, "b") is not None
    venue.watch()
    assert net.mirror("a").state == "locked"


def test_a_difference_is_reported_on_both_sides(net: Net) -> None:
    plays(net.machines["a"], 1, ["1.00"])
    sync(net)
    member = WideAreaVenue.objects.get(venue=net.a)
    member.received = {**member.received, "Grand": {**member.received["Grand"], "count": 2}}
    member.save(update_fields=["received"])
    silence(net.mirror("a"))
    venue.watch()
    publish_and_follow()  # A hears the central again: it sends its meters
    deliver(net.a)
    loopback_rows = WideAreaDifference.objects.order_by("side")
    publish_and_follow()
    sides = sorted(WideAreaDifference.objects.values_list("side", "level", "field"))
    assert sides == [("central", "Grand", "count"), ("venue", "Grand", "count")]
    assert loopback_rows.exists()


def test_bad_input_is_refused_named_and_counted_once(net: Net) -> None:
    plays(net.machines["a"], 1, ["1.00"])
    sync(net)
    # A venue that left the pool: its batch is refused, nothing written; delivered again: not counted twice.
    central.remove_venue(wide_area=net.wide, venue=net.c, actor=net.operator)
    table_hand(net, 1, "5.00")
    forward_all()
    before, rows = (
        refused_count("central", "venue_not_in_pool"),
        Contribution.objects.filter(pool=net.pool).count(),
    )
    (answer,) = deliver(net.c)
    assert answer.status == "refused"
    assert answer.answer["refused"]["code"] == "venue_not_in_pool"
    assert "WAN-GRAND" in answer.answer["refused"]["message"]
    message = InboxMessage.objects.get(venue_id=net.c.pk, kind="wa.contributions", answer__has_key="refused")
    again = inbox.accept(
        venue_id=net.c.pk, sequence=message.sequence, kind=message.kind, payload=message.payload
    )
    assert again.status == "duplicate" and again.answer == answer.answer
    assert refused_count("central", "venue_not_in_pool") == before + 1
    assert Contribution.objects.filter(pool=net.pool).count() == rows
    # A hit for a level the member is not linked to.
    with pytest.raises(InvalidInput) as not_linked:
        venue.report_hit(mirror=net.mirror("c"), source="table:1", level="Mini", key="t-1", actor="croupier")
    assert not_linked.value.code == "level_not_linked"
    # A hit reported twice: refused at the venue; sent twice to the central, decided once.
    claim = venue.report_hit(
        mirror=net.mirror("a"),
        source=f"machine:{net.machines['a'].pk}",
        level="Grand",
        key="k-1",
        actor="test",
    )
    with pytest.raises(Conflict) as twice:
        venue.report_hit(
            mirror=net.mirror("a"),
            source=f"machine:{net.machines['a'].pk}",
            level="Grand",
            key="k-1",
            actor="test",
        )
    assert twice.value.code == "duplicate_hit"
    deliver(net.a)
    payload = outbox.pending(venue_id=net.a.pk).first()
    assert payload is None
    sent = InboxMessage.objects.get(venue_id=net.a.pk, kind="wa.hit")
    before = refused_count("central", "duplicate_hit")
    with pytest.raises(Conflict) as decided_twice:
        central.accept_hit(venue_id=net.a.pk, payload=sent.payload)
    assert decided_twice.value.code == "duplicate_hit"
    assert refused_count("central", "duplicate_hit") == before + 1
    assert WideAreaHit.objects.filter(key=claim.key).count() == 1
    # A level the central's pool has not; a hit from a venue that had not heard the central in its window.
    with pytest.raises(InvalidInput) as unknown:
        central.accept_hit(venue_id=net.b.pk, payload={**sent.payload, "key": "k-2", "level": "Mini"})
    assert unknown.value.code == "unknown_level"
    late = {**sent.payload, "key": "k-3", "heard_at": "2026-01-01T00:00:00+00:00"}
    with pytest.raises(Conflict) as offline:
        central.accept_hit(venue_id=net.b.pk, payload=late)
    assert offline.value.code == "venue_offline"
    assert WideAreaHit.objects.count() == 1
    publish_and_follow()
    balances_hold(net)


def test_tables_and_machines_together_need_the_authorisation() -> None:
    net = build(mixed=False)
    plays(net.machines["a"], 1, ["1.00"])
    forward_all()
    deliver(net.a)
    table_hand(net, 1, "5.00")
    forward_all()
    (answer,) = deliver(net.c)
    assert answer.answer["refused"]["code"] == "mixed_sources_not_authorised"
    # The venue's meters still say what it forwarded: the reconciliation reports the difference.
    silence(net.mirror("c"))
    venue.watch()
    publish_and_follow()
    deliver(net.c)
    assert WideAreaDifference.objects.filter(side="central", venue=net.c).exists()
    assert WideAreaMirror.objects.get(pk=net.mirrors["c"].pk).state == "available"


def test_a_cut_shorter_than_the_window_is_reconciled_too(net: Net) -> None:
    plays(net.machines["a"], 1, ["1.00"] * 3)
    sync(net)
    # A's line was down 15 s: past two heartbeats, inside the pool's 30 s window (the level never withdrawn).
    silence(net.mirror("a"), seconds=15)
    assert venue.watch() == 0 and net.mirror("a").state == "available"
    publish_and_follow()
    deliver(net.a, net.b, net.c)
    publish_and_follow()
    (meters,) = InboxMessage.objects.filter(kind="wa.meters")
    assert (meters.venue_id, meters.answer["differences"], meters.answer["state"]) == (net.a.pk, 0, "agreed")
    # Heard on time: nothing more to reconcile.
    publish_and_follow()
    deliver(net.a, net.b, net.c)
    assert InboxMessage.objects.filter(kind="wa.meters").count() == 1


def test_the_central_cut_off_reconciles_every_venue_and_reports_each_difference(net: Net) -> None:
    plays(net.machines["a"], 1, ["1.00"] * 2)
    plays(net.machines["b"], 1, ["2.00"] * 2)
    table_hand(net, 1, "5.00")
    sync(net)
    # The central is silent for every venue past the window; meanwhile the central's meter of B is wrong.
    member = WideAreaVenue.objects.get(venue=net.b)
    member.received = {**member.received, "Grand": {**member.received["Grand"], "count": 3}}
    member.save(update_fields=["received"])
    for name in ("a", "b", "c"):
        silence(WideAreaMirror.objects.get(venue=getattr(net, name)))
    assert venue.watch() == 3
    publish_and_follow()  # the central is back: every venue sends its meters
    deliver(net.a, net.b, net.c)
    publish_and_follow()
    answers = {
        venue_id: (answer["differences"], answer["by_check"])
        for venue_id, answer in InboxMessage.objects.filter(kind="wa.meters").values_list(
            "venue_id", "answer"
        )
    }
    agreed = {"received": 0, "batches": 0, "ledger": 0}
    assert answers == {
        net.a.pk: (0, agreed),
        net.b.pk: (1, {**agreed, "received": 1}),  # the batches accepted and the ledger agree with B
        net.c.pk: (0, agreed),
    }
    found = sorted(
        WideAreaDifference.objects.values_list(
            "side", "venue_id", "level", "field", "venue_value", "central_value"
        )
    )
    assert found == [
        ("central", net.b.pk, "Grand", "count", D(2), D(3)),
        ("venue", net.b.pk, "Grand", "count", D(2), D(3)),
    ]


def test_meters_sent_on_demand_are_reconciled_after_every_batch_before_them(net: Net) -> None:
    plays(net.machines["a"], 1, ["1.00"] * 2)
    forward_all()
    venue.send_meters(mirror=net.mirror("a"))  # behind the batch in the outbox: compared like with like
    deliver(net.a)
    publish_and_follow()
    (meters,) = InboxMessage.objects.filter(kind="wa.meters")
    assert (meters.venue_id, meters.answer["differences"], meters.answer["state"]) == (net.a.pk, 0, "agreed")
    assert not WideAreaDifference.objects.exists()
