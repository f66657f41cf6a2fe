"""What tests/e2e/test_widearea_network.py does inside the central and each venue installation (called by a
`link_support.Driver`, one long-lived shell of that installation, against its own database) through the
services its doors call: the machines' gateway, the table's contributions, the cashier. Plain JSON back."""

from __future__ import annotations

import itertools
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User

from halls import money
from halls.cashier.models import Payable, PayoutMethod, Till
from halls.cashier.services import payables
from halls.link.models import InboxMessage
from halls.link.services import credentials, outbox
from halls.models import Jurisdiction, Network, Role, StaffRole, Venue
from jackpots.models import Contribution, Pool, PoolLevel
from jackpots.services import contributions, folding, pools
from jackpots.services.pools import LevelSpec
from jackpots.sources import PoolSource
from jackpots.widearea.models import (
    WideAreaClaim,
    WideAreaDifference,
    WideAreaHit,
    WideAreaMirror,
    WideAreaPool,
)
from jackpots.widearea.services import central, venue
from machines import protocol
from machines.models import LinkGroup, Machine
from machines.services import broadcast, gateway, links, registry
from tests.cashier_support import on_shift

NETWORK = "WAN"
POOL = "WAN-GRAND"
SEED = Decimal("100")
RATE = Decimal("0.01")
WINDOW = 4  # seconds a venue offers the level without hearing the central
_seq = itertools.count(1)


def licence(n: int) -> str:
    return f"AN-WA-{n:04d}"


def _venue_row(n: int) -> Venue:
    return Venue.objects.create(name=f"Casino {n}", licence_number=licence(n), jurisdiction=Jurisdiction.AN10)


# --- the central -------------------------------------------------------------------------------------------


def setup_central(halls: list[int]) -> dict[str, Any]:
    venues = [_venue_row(n) for n in halls]
    network = Network.objects.create(name="Red WAN", code=NETWORK, jurisdiction=Jurisdiction.AN10)
    network.venues.set(venues)
    issued = {v.licence_number: credentials.issue(venue=v, actor="e2e") for v in venues}
    pool = pools.create_pool(
        name="Gran Progresivo WAN",
        code=POOL,
        jurisdiction=Jurisdiction.AN10,
        authorisation_ref="AUT-WAN/2026/1",
        rule_pack="",
        network=network,
        levels=[LevelSpec(name="Grand", seed=SEED, contribution_rate=RATE)],
        carousel_bet=None,
        actor="central-operator",
    )
    wide = central.make_wide_area(
        pool=pool, actor="central-operator", offline_after_seconds=WINDOW, mixed_sources_authorised=True
    )
    for v in venues:
        central.add_venue(wide_area=wide, venue=v, actor="central-operator")
    return {hall: {"key": i.key, "secret": i.secret} for hall, i in issued.items()}


def publish() -> bool:
    return central.publish_levels(wide_area=WideAreaPool.objects.get(), force=True)


def central_state() -> dict[str, Any]:
    wide = WideAreaPool.objects.get()
    folding.fold(wide.pool_id)
    grand = PoolLevel.objects.get(pool_id=wide.pool_id, name="Grand")
    report = central.balance(wide_area=wide)
    licences = dict(Venue.objects.values_list("pk", "licence_number"))
    return {
        "grand": str(grand.amount),
        "hits": sorted(
            [h.venue.licence_number, h.outcome, str(h.amount)]
            for h in WideAreaHit.objects.select_related("venue")
        ),
        "received": {m.venue.licence_number: m.received for m in wide.venues.select_related("venue")},
        "differences": WideAreaDifference.objects.count(),
        "meters": [
            [licences[i.venue_id], i.answer]
            for i in InboxMessage.objects.filter(kind="wa.meters").order_by("pk")
        ],
        "contributions": Contribution.objects.filter(pool_id=wide.pool_id).count(),
        "holds": report["holds"],
    }


# --- a venue ---------------------------------------------------------------------------------------------


def _venue() -> Venue:
    return Venue.objects.get()


def setup_venue(n: int, machines: int, table: bool) -> dict[str, Any]:
    """The venue, its cashier on shift, the network, its mirror of WAN-GRAND, and its members: `machines`
    linked machines, or a poker table."""
    v = _venue_row(n)
    operator = User.objects.create(username=f"operator{n}")
    StaffRole.objects.create(user=operator, venue=v, role=Role.OPERATOR)
    cashier = User.objects.create(username=f"cashier{n}")
    StaffRole.objects.create(user=cashier, venue=v, role=Role.CASHIER)
    on_shift(cashier, v, float=Decimal("5000.00"), till=Till.objects.create(venue=v, name="Caja 1"))
    network = Network.objects.create(name="Red WAN", code=NETWORK, jurisdiction=Jurisdiction.AN10)
    network.venues.add(v)
    mirror = venue.join(
        venue=v,
        network=network,
        central_code=POOL,
        levels=[LevelSpec(name="Grand", seed=Decimal(0), contribution_rate=RATE)],
        local_levels=[LevelSpec(name="Mini", seed=Decimal("10"), contribution_rate=Decimal("0.002"))]
        if machines
        else [],
        authorisation_ref="AUT-WAN/2026/1",
        actor=operator,
    )
    if machines:
        group = links.create_link_group(
            venue=v, code="WAN", name="Isla WAN", pool=mirror.pool, actor=operator
        )
        for i in range(machines):
            machine, _token = registry.register_machine(
                venue=v,
                asset_number=f"M{n}-{i + 1}",
                machine_type="C",
                modality="individual",
                manufacturer="Novomatic",
                model="Gaminator",
                serial=f"SN-{n}-{i + 1}",
                denomination=Decimal("0.20"),
                paytable_id="PT-92",
                software_version="4.1.0",
                location="Sala",
                positions=1,
                actor=operator,
            )
            links.join_link(group=group, machine=machine, actor=operator)
    if table:
        pools.add_member(pool=mirror.pool, source_type="table", source_id="1", venue=v, actor=operator)
    return {"venue_id": v.pk}


def play(plays: int, bet: str) -> str:
    """Every machine of the venue plays `plays` games of `bet` (through the gateway); the total bet."""
    total = Decimal(0)
    for machine in Machine.objects.order_by("pk"):
        first = machine.last_seq + 1
        messages = [
            protocol.Play(seq=first + i, game_id=f"g-{first + i}", bet=Decimal(bet), win=Decimal(0))
            for i in range(plays)
        ]
        replies = gateway.receive(machine_id=machine.pk, messages=messages)
        assert all(r["status"] == "accepted" for r in replies), replies
        total += Decimal(bet) * plays
    return str(total)


def table_hands(hands: int, bet: str) -> str:
    mirror = WideAreaMirror.objects.get()
    for _ in range(hands):
        hand = next(_seq)
        contributions.contribute(
            pool=mirror.pool_id,
            source=PoolSource.of("table", 1).at("hand", hand),
            bet=Decimal(bet),
            idempotency_key=f"t1-{hand}-{mirror.forwarded_through}",
            actor="croupier",
        )
    return str(Decimal(bet) * hands)


def forward() -> int:
    return venue.forward_all()


def watch() -> int:
    return venue.watch()


def hit(level: str = "Grand") -> dict[str, Any]:
    machine = Machine.objects.order_by("pk").first()
    assert machine is not None
    (reply,) = gateway.receive(
        machine_id=machine.pk, messages=[protocol.Hit(seq=machine.last_seq + 1, level=level, game_id="g-hit")]
    )
    return reply


def pay_waiting() -> list[str]:
    """The cashier pays every payable waiting at this venue (in cash): the amounts."""
    cashier = User.objects.get(username__startswith="cashier")
    paid = []
    for payable in Payable.objects.filter(venue=_venue(), paid_at__isnull=True).order_by("pk"):
        payables.pay_payable(
            payable=payable, method=PayoutMethod.CASH, actor=cashier, key=f"pay-{payable.pk}"
        )
        paid.append(str(payable.amount))
    return paid


def venue_state() -> dict[str, Any]:
    mirror = WideAreaMirror.objects.get()
    group = LinkGroup.objects.filter(pool_id=mirror.pool_id).first()
    item = next((i for i in broadcast.link_levels() if group and i.group_id == group.pk), None)
    report = venue.balance(mirror=mirror)
    machines = list(Machine.objects.order_by("pk").values_list("state", "lock_reason"))
    return {
        "state": mirror.state,
        "offered": venue.offered(mirror).value,
        "levels": {str(x["level"]): str(x["amount"]) for x in mirror.levels},
        "broadcast": None
        if item is None
        else {"levels": {n: str(a) for n, a in item.levels}, "unavailable": list(item.unavailable)},
        "backlog": outbox.backlog(venue_id=mirror.venue_id),
        "forwarded": mirror.forwarded,
        "claims": [[c.outcome, str(c.amount)] for c in WideAreaClaim.objects.order_by("pk")],
        "payables": [[str(p.amount), p.paid_at is not None] for p in Payable.objects.order_by("pk")],
        "differences": WideAreaDifference.objects.count(),
        "machines": [list(m) for m in machines],
        "holds": report["holds"],
        "mirror_grand": str(
            money.cents_down(Pool.objects.get(pk=mirror.pool_id).levels.get(name="Grand").amount)
        ),
    }
