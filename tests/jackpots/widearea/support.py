"""A wide-area network for the service tests: one installation playing the central and three venues (the
link's loopback: each venue's outbox delivered to the central's inbox, the central's network stream
applied here), machines in venues A and B, a poker table in venue C, on a central Grand level (and a local
Mini level at A and B)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone

from halls.link.services import loopback
from halls.link.services.inbox import Accepted
from halls.models import Jurisdiction, Network, Role, StaffRole, Venue
from jackpots.models import Pool, PoolLevel
from jackpots.services import contributions, folding, pools
from jackpots.services.pools import LevelSpec
from jackpots.sources import PoolSource
from jackpots.widearea import metrics
from jackpots.widearea.models import WideAreaMirror, WideAreaPool
from jackpots.widearea.services import central, venue
from machines import protocol
from machines.models import LinkGroup, Machine
from machines.services import gateway, links, registry

D = Decimal
GRAND_RATE = D("0.01")
MINI_RATE = D("0.002")
SEED = D("1000")
STREAM = "network.WAN"
_serial = itertools.count(1)


@dataclass
class Net:
    network: Network
    a: Venue
    b: Venue
    c: Venue
    operator: User
    pool: Pool
    wide: WideAreaPool
    mirrors: dict[str, WideAreaMirror]
    groups: dict[str, LinkGroup]
    machines: dict[str, Machine]

    def mirror(self, name: str) -> WideAreaMirror:
        return WideAreaMirror.objects.get(pk=self.mirrors[name].pk)


def venue_row(licence: str) -> Venue:
    return Venue.objects.create(
        name=f"Casino {licence}", licence_number=licence, jurisdiction=Jurisdiction.AN10
    )


def build(*, offline_action: str = "unavailable", second_hit: str = "reset", mixed: bool = True) -> Net:
    a, b, c = venue_row("WA-A"), venue_row("WA-B"), venue_row("WA-C")
    network = Network.objects.create(name="Red WAN", code="WAN", jurisdiction=Jurisdiction.AN10)
    network.venues.set([a, b, c])
    operator = User.objects.create_user(username="wa-operator", password="pw-wa-operator")
    for v in (a, b, c):
        StaffRole.objects.create(user=operator, venue=v, role=Role.OPERATOR)
    pool = pools.create_pool(
        name="Gran Progresivo WAN",
        code="WAN-GRAND",
        jurisdiction=Jurisdiction.AN10,
        authorisation_ref="AUT-WAN/2026/1",
        rule_pack="",
        network=network,
        levels=[LevelSpec(name="Grand", seed=SEED, contribution_rate=GRAND_RATE)],
        carousel_bet=None,
        actor=operator,
    )
    wide = central.make_wide_area(
        pool=pool,
        actor=operator,
        offline_after_seconds=30,
        offline_action=offline_action,
        second_hit=second_hit,
        mixed_sources_authorised=mixed,
    )
    for v in (a, b, c):
        central.add_venue(wide_area=wide, venue=v, actor=operator)
    mirrors, groups, machines = {}, {}, {}
    grand = [LevelSpec(name="Grand", seed=D(0), contribution_rate=GRAND_RATE)]
    mini = [LevelSpec(name="Mini", seed=D("10"), contribution_rate=MINI_RATE)]
    for name, v in (("a", a), ("b", b)):
        mirrors[name] = venue.join(
            venue=v,
            network=network,
            central_code="WAN-GRAND",
            levels=grand,
            local_levels=mini,
            authorisation_ref="AUT-WAN/2026/1",
            actor=operator,
        )
        groups[name] = links.create_link_group(
            venue=v, code="WAN", name="Isla WAN", pool=mirrors[name].pool, actor=operator
        )
        machine, _token = registry.register_machine(
            venue=v,
            asset_number=f"WA{next(_serial)}",
            machine_type="C",
            modality="individual",
            manufacturer="Novomatic",
            model="Gaminator",
            serial=f"SN-WA-{next(_serial)}",
            denomination=D("0.20"),
            paytable_id="PT-92",
            software_version="4.1.0",
            location="Sala",
            positions=1,
            actor=operator,
        )
        links.join_link(group=groups[name], machine=machine, actor=operator)
        machines[name] = machine
    mirrors["c"] = venue.join(
        venue=c,
        network=network,
        central_code="WAN-GRAND",
        levels=grand,
        authorisation_ref="AUT-WAN/2026/1",
        actor=operator,
    )
    pools.add_member(pool=mirrors["c"].pool, source_type="table", source_id="1", venue=c, actor=operator)
    return Net(network, a, b, c, operator, pool, wide, mirrors, groups, machines)


def plays(machine: Machine, first_seq: int, bets: list[str]) -> list[dict[str, Any]]:
    messages = [
        protocol.Play(seq=first_seq + i, game_id=f"g-{first_seq + i}", bet=D(bet), win=D("0"))
        for i, bet in enumerate(bets)
    ]
    return gateway.receive(machine_id=machine.pk, messages=messages)


def table_hand(net: Net, hand: int, bet: str) -> None:
    contributions.contribute(
        pool=net.mirrors["c"].pool,
        source=PoolSource.of("table", 1).at("hand", hand),
        bet=D(bet),
        idempotency_key=f"table-1-hand-{hand}",
        actor="croupier",
    )


def deliver(*venues: Venue) -> list[Accepted]:
    answers: list[Accepted] = []
    for v in venues:
        answers += loopback.deliver(venue_id=v.pk)
    return answers


def forward_all() -> int:
    return venue.forward_all()


def publish_and_follow(force: bool = True) -> None:
    central.publish_levels(wide_area=WideAreaPool.objects.get(), force=force)
    loopback.follow(stream=STREAM)


def sync(net: Net) -> list[Accepted]:
    """Every venue forwards and delivers; the central's levels and decisions come back."""
    forward_all()
    answers = deliver(net.a, net.b, net.c)
    publish_and_follow()
    answers += deliver(net.a, net.b, net.c)  # what the entries made the venues send (reconciliations)
    loopback.follow(stream=STREAM)
    return answers


def silence(mirror: WideAreaMirror, seconds: int = 60) -> None:
    """The venue has not heard the central for `seconds` (its link cut)."""
    WideAreaMirror.objects.filter(pk=mirror.pk).update(heard_at=timezone.now() - timedelta(seconds=seconds))


def central_grand() -> Decimal:
    pool = Pool.objects.get(code="WAN-GRAND")
    folding.fold(pool.pk)
    return PoolLevel.objects.get(pool=pool, name="Grand").amount


def refused_count(side: str, reason: str) -> float:
    return float(metrics.REFUSED.labels(side=side, reason=reason)._value.get())
