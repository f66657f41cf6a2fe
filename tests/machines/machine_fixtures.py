"""Fixtures the machine tests share: an AN10 casino with an operator and a cashier, a machine pool (Grand
and Major levels, no rule pack), registered type C machines and a link group; message builders."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db.models import Model

from halls.cashier.models import Till
from halls.cashier.services import shifts
from halls.models import AuditEntry, Role, StaffRole, Venue
from jackpots.models import Contribution, Pool, PoolLevel, PoolMember, PoolSettlement
from jackpots.services import folding, pools
from jackpots.services.pools import LevelSpec
from jackpots.services.readmodels import meters
from machines import protocol
from machines.models import (
    LinkGroup,
    LinkMember,
    Machine,
    MachineAlert,
    MachineEvent,
    MeterSnapshot,
    Play,
    ProgressiveHit,
    SequenceGap,
)
from machines.services import gateway, links, registry
from tests.jackpots.pool_fixtures import an10_venue, pool_operator

__all__ = ["an10_venue", "pool_operator"]

D = Decimal
GRAND_RATE = D("0.01")
MAJOR_RATE = D("0.005")
# The levels of make_machine_pool (and of the slot_pool fixture) before any play.
SEEDS = {"Grand": D("1000"), "Major": D("100")}
_assets = itertools.count(1001)

MACHINE_TABLES: list[type[Model]] = [
    Machine,
    LinkGroup,
    LinkMember,
    Play,
    MeterSnapshot,
    MachineEvent,
    SequenceGap,
    ProgressiveHit,
    MachineAlert,
    Contribution,
    PoolMember,
    PoolSettlement,
    AuditEntry,
]


def row_counts() -> dict[str, int]:
    return {model.__name__: model._default_manager.count() for model in MACHINE_TABLES}


def machine_rows() -> list[tuple[object, ...]]:
    return list(Machine.objects.order_by("pk").values_list())


@contextmanager
def nothing_written() -> Iterator[None]:
    before, rows = row_counts(), machine_rows()
    yield
    assert row_counts() == before
    assert machine_rows() == rows


@pytest.fixture
def cashier_user(an10_venue: Venue) -> User:
    """A cashier of the venue ON SHIFT (hand pays are paid at the cashier, in cash from the drawer), with a
    float of HAND_PAY_FLOAT."""
    user = User.objects.create_user(username="slot-cashier", password="pw-slot-cashier")
    StaffRole.objects.create(user=user, venue=an10_venue, role=Role.CASHIER)
    till = Till.objects.create(venue=an10_venue, name="Caja máquinas")
    shifts.open_shift(till=till, cashier=user, float_amount=HAND_PAY_FLOAT, actor=user)
    return user


HAND_PAY_FLOAT = Decimal("20000.00")


def make_machine_pool(venue: Venue, actor: User | str, code: str = "SLOT-LINK") -> Pool:
    return pools.create_pool(
        name=f"Progresivo {code}",
        code=code,
        jurisdiction=venue.jurisdiction,
        authorisation_ref="AUT-MQ/2026/7",
        rule_pack="",
        venue=venue,
        levels=[
            LevelSpec(name="Grand", seed=D("1000"), contribution_rate=GRAND_RATE),
            LevelSpec(name="Major", seed=D("100"), contribution_rate=MAJOR_RATE),
        ],
        carousel_bet=None,
        actor=actor,
    )


@pytest.fixture
def slot_pool(an10_venue: Venue, pool_operator: User) -> Pool:
    return make_machine_pool(an10_venue, pool_operator)


def register(
    venue: Venue,
    actor: User | str,
    *,
    machine_type: str = "C",
    denomination: str = "0.20",
    asset: str | None = None,
    modality: str = "individual",
    positions: int = 1,
) -> tuple[Machine, str]:
    return registry.register_machine(
        venue=venue,
        asset_number=asset or f"A{next(_assets)}",
        machine_type=machine_type,
        modality=modality,
        manufacturer="Novomatic",
        model="Gaminator",
        serial=f"SN-{next(_assets)}",
        denomination=D(denomination),
        paytable_id="PT-92",
        software_version="4.1.0",
        location="Sala A, fila 2",
        positions=positions,
        actor=actor,
    )


@pytest.fixture
def link(an10_venue: Venue, pool_operator: User, slot_pool: Pool) -> LinkGroup:
    return links.create_link_group(
        venue=an10_venue,
        code="L1",
        name="Isla 1",
        pool=slot_pool,
        same_type_and_denomination=None,
        actor=pool_operator,
    )


@pytest.fixture
def machine(an10_venue: Venue, pool_operator: User, link: LinkGroup) -> Machine:
    """A linked type C machine of 0.20 in service."""
    m, _ = register(an10_venue, pool_operator)
    links.join_link(group=link, machine=m, actor=pool_operator)
    return m


@pytest.fixture
def board(an10_venue: Venue, pool_operator: User, link: LinkGroup) -> tuple[Machine, str]:
    """A linked type C machine of 0.20 in service, with its device token."""
    machine, token = register(an10_venue, pool_operator)
    links.join_link(group=link, machine=machine, actor=pool_operator)
    return machine, token


def expected(pool_seed: dict[str, Decimal], bets: Decimal) -> dict[str, Decimal]:
    """Each level's meter after ``bets`` played on it from ``pool_seed``."""
    return {"Grand": pool_seed["Grand"] + bets * GRAND_RATE, "Major": pool_seed["Major"] + bets * MAJOR_RATE}


def send(m: Machine, *messages: protocol.Message) -> list[dict[str, Any]]:
    """The machine's frames through the gateway, as one call; its replies."""
    return gateway.receive(machine_id=m.pk, messages=list(messages))


def play(seq: int, bet: str = "1.00", win: str = "0.00", game: str | None = None) -> protocol.Play:
    return protocol.Play(seq=seq, game_id=game or f"g-{seq}", bet=D(bet), win=D(win))


def meters_msg(seq: int, coin_in: str, games: int, coin_out: str = "0.00") -> protocol.Meters:
    return protocol.Meters(
        seq=seq,
        coin_in=D(coin_in),
        coin_out=D(coin_out),
        jackpots_paid=D("0"),
        credits=D("0"),
        games_played=games,
    )


def hit(seq: int, level: str = "Grand", game: str = "g-hit") -> protocol.Hit:
    return protocol.Hit(seq=seq, level=level, game_id=game)


def statuses(replies: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["seq"], r["status"], r["code"]) for r in replies]


def live_amounts(pool: Pool) -> dict[str, Decimal]:
    """The levels' exact amounts (folded): what the pool holds, to the sixth decimal."""
    folding.fold(pool.pk)
    return {lv.name: lv.amount for lv in PoolLevel.objects.filter(pool=pool)}


def display_amounts(pool: Pool) -> dict[str, Decimal]:
    meter = meters.pool_meter(pool)
    return {lv.name: lv.amount for lv in meter.levels}
