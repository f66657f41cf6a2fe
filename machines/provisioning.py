"""Provisioning of simulated machines, shared by the demo (demo.machines), ``simulate_machines --register``
and the benchmark: a link group on a new pool, machines registered and linked, new tokens with their
simulator profiles resumed. Everything through the services, and only what is missing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count, Sum

from halls.actors import Actor
from halls.models import Venue
from jackpots.models import Pool
from jackpots.services import pools
from jackpots.services.pools import LevelSpec
from machines import simulator
from machines.models import (
    LinkGroup,
    LinkMember,
    Machine,
    MachineType,
    MeterSnapshot,
    Modality,
    ProgressiveHit,
)
from machines.services import links, registry

# Seeds and rates: every bet is whole cents, so bet × rate is exact at 6 places; the levels take 1.2 %.
LEVELS = (
    LevelSpec(name="Súper", seed=Decimal("1000.00"), contribution_rate=Decimal("0.005")),
    LevelSpec(name="Mayor", seed=Decimal("200.00"), contribution_rate=Decimal("0.004")),
    LevelSpec(name="Mini", seed=Decimal("25.00"), contribution_rate=Decimal("0.003")),
)
MACHINE_TYPE = MachineType.C
DENOMINATION = Decimal("0.20")
SOFTWARE_VERSION = "SIM-1.0"


@dataclass(frozen=True)
class MachineSpec:
    """What the provisioning registers when a machine is missing."""

    machine_type: str = MACHINE_TYPE
    denomination: Decimal = DENOMINATION
    manufacturer: str = "Simulador"
    model: str = "SIM-C"
    paytable_id: str = "SIM-90"
    software_version: str = SOFTWARE_VERSION


def ensure_link_group(
    *,
    venue: Venue,
    code: str,
    name: str,
    pool_code: str,
    levels: Sequence[LevelSpec] = LEVELS,
    actor: Actor,
) -> LinkGroup:
    """The venue's link group ``code``, created with a new pool of ``levels`` when missing."""
    group = LinkGroup.objects.filter(venue=venue, code=code).select_related("pool").first()
    if group is not None:
        return group
    pool = Pool.objects.filter(code=pool_code).first()
    if pool is None:
        pool = pools.create_pool(
            name=name,
            code=pool_code,
            jurisdiction=venue.jurisdiction,
            currency=venue.currency,
            authorisation_ref="DEMO — not an authorisation",
            rule_pack="",
            venue=venue,
            levels=list(levels),
            carousel_bet=None,
            actor=actor,
        )
    return links.create_link_group(venue=venue, code=code, name=name, pool=pool, actor=actor)


def ensure_machines(
    *,
    venue: Venue,
    group: LinkGroup,
    assets: Sequence[str],
    spec: MachineSpec = MachineSpec(),
    actor: Actor,
    location: Callable[[int], str] = lambda i: f"Sala de máquinas, puesto {i + 1}",
) -> list[Machine]:
    """The machines ``assets`` of the venue, registered when missing and linked to ``group``."""
    existing = {m.asset_number: m for m in Machine.objects.filter(venue=venue, asset_number__in=assets)}
    linked = set(
        LinkMember.objects.filter(
            group=group, left_at__isnull=True, machine__in=existing.values()
        ).values_list("machine_id", flat=True)
    )
    machines: list[Machine] = []
    for i, asset in enumerate(assets):
        machine = existing.get(asset)
        if machine is None:
            machine, _token = registry.register_machine(
                venue=venue,
                asset_number=asset,
                machine_type=spec.machine_type,
                modality=Modality.INDIVIDUAL,
                manufacturer=spec.manufacturer,
                model=spec.model,
                serial=f"{asset}-SN",
                denomination=spec.denomination,
                paytable_id=spec.paytable_id,
                software_version=spec.software_version,
                location=location(i),
                actor=actor,
            )
        if machine.pk not in linked:
            links.join_link(group=group, machine=machine, actor=actor)
        machines.append(machine)
    return machines


def resume_profile(machine: Machine, index: int) -> simulator.MachineProfile:
    """A simulator profile that continues the machine's record: its next seq and its meters as the last
    snapshot plus the plays since (so a restarted simulator does not look like a meter reset)."""
    snapshot = MeterSnapshot.objects.filter(machine=machine).order_by("-seq").first()
    after = snapshot.seq if snapshot is not None else 0
    since = machine.plays.filter(seq__gt=after).aggregate(n=Count("id"), bet=Sum("bet"), win=Sum("win"))
    hits = ProgressiveHit.objects.filter(machine=machine, seq__gt=after).aggregate(paid=Sum("amount"))
    zero = Decimal("0.00")
    base = simulator.Meters(
        coin_in=snapshot.coin_in if snapshot else zero,
        coin_out=snapshot.coin_out if snapshot else zero,
        jackpots_paid=snapshot.jackpots_paid if snapshot else zero,
        credits=snapshot.credits if snapshot else zero,
        games_played=snapshot.games_played if snapshot else 0,
    )
    meters = simulator.Meters(
        coin_in=base.coin_in + (since["bet"] or zero),
        coin_out=base.coin_out + (since["win"] or zero),
        jackpots_paid=base.jackpots_paid + (hits["paid"] or zero),
        credits=base.credits,
        games_played=base.games_played + int(since["n"] or 0),
    )
    return simulator.MachineProfile(
        index=index,
        asset=machine.asset_number,
        machine_type=machine.machine_type,
        denomination=machine.denomination,
        software_version=machine.software_version,
        next_seq=machine.last_seq + 1,
        meters=meters,
    )


def issue_credentials(machines: Sequence[Machine], *, actor: Actor) -> list[simulator.Credentials]:
    """New device tokens for ``machines`` (the old ones stop working) and their resumed profiles."""
    out = []
    for index, machine in enumerate(machines):
        token = registry.rotate_token(machine=machine, actor=actor)
        out.append(
            simulator.Credentials(
                profile=resume_profile(machine, index), token=token, venue_id=machine.venue_id
            )
        )
    return out
