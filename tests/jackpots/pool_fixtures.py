"""Fixtures and helpers the pool-engine tests share (imported by tests/jackpots/test_services_*.py and
test_pool_api.py): venues of each jurisdiction, an operator, pools, and a "nothing was written" check."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.db.models import Model

from halls.models import AuditEntry, Jurisdiction, Network, Role, StaffRole, StreamCursor, Venue
from jackpots.models import (
    Award,
    Contribution,
    LedgerMove,
    LedgerSeal,
    ParameterChange,
    Pool,
    PoolLevel,
    PoolMember,
    PoolSettlement,
)
from jackpots.services import pools
from jackpots.services.pools import LevelSpec

_keys = itertools.count(1)

POOL_TABLES: list[type[Model]] = [
    Pool,
    PoolLevel,
    PoolMember,
    Contribution,
    PoolSettlement,
    Award,
    LedgerMove,
    ParameterChange,
    LedgerSeal,
    AuditEntry,
    StreamCursor,
]


def row_counts() -> dict[str, int]:
    return {model.__name__: model._default_manager.count() for model in POOL_TABLES}


def level_rows() -> list[tuple[object, ...]]:
    return list(PoolLevel.objects.order_by("pk").values_list())


@contextmanager
def nothing_written() -> Iterator[None]:
    """The block leaves every pool table (and the audit chain and event cursors) as it found them."""
    before, levels = row_counts(), level_rows()
    yield
    assert row_counts() == before
    assert level_rows() == levels


def key(prefix: str = "k") -> str:
    return f"{prefix}-{next(_keys)}"


def venue_of(jurisdiction: str, licence: str, name: str = "") -> Venue:
    return Venue.objects.create(
        name=name or f"Casino {licence}", licence_number=licence, jurisdiction=jurisdiction
    )


@pytest.fixture
def an10_venue(db: None) -> Venue:
    return venue_of(Jurisdiction.AN10, "AN-C-0101", "Casino Sevilla")


@pytest.fixture
def eu_venue(db: None) -> Venue:
    return venue_of(Jurisdiction.EU, "EU-C-0201", "Casino Bilbao")


@pytest.fixture
def pool_operator(an10_venue: Venue) -> User:
    user = User.objects.create_user(username="pool-operator", password="pw-pool-operator")
    StaffRole.objects.create(user=user, venue=an10_venue, role=Role.OPERATOR)
    return user


def carrusel_level(seed: str = "5000", rate: str = "0.70", reserve: str = "0.10", **kw: object) -> LevelSpec:
    return LevelSpec(
        name=str(kw.pop("name", "Carrusel")),
        seed=Decimal(seed),
        contribution_rate=Decimal(rate),
        reserve_rate=Decimal(reserve),
        **kw,  # type: ignore[arg-type]
    )


def make_pool(
    venue: Venue,
    actor: User | str,
    *,
    code: str = "CARR-1",
    pack: str = "AN10_PSD_CARRUSEL",
    bet: Decimal | None = Decimal("1.00"),
    levels: list[LevelSpec] | None = None,
    members: tuple[str, ...] = ("1", "2"),
    source_type: str = "table",
    network: Network | None = None,
) -> Pool:
    pool = pools.create_pool(
        name=f"Carrusel {code}",
        code=code,
        jurisdiction=venue.jurisdiction if network is None else network.jurisdiction,
        authorisation_ref="AUT-2026/001",
        rule_pack=pack,
        venue=None if network else venue,
        network=network,
        levels=levels or [carrusel_level()],
        carousel_bet=bet,
        actor=actor,
    )
    for member in members:
        pools.add_member(pool=pool, source_type=source_type, source_id=member, venue=venue, actor=actor)
    return pool


@pytest.fixture
def carousel(an10_venue: Venue, pool_operator: User) -> Pool:
    """AN10 carrusel: seed 5,000 (5,000 × the 1.00 bet), 70 % to the meter, 10 % to the reserve."""
    return make_pool(an10_venue, pool_operator)


def level_of(pool: Pool, position: int = 0) -> PoolLevel:
    return PoolLevel.objects.get(pool=pool, position=position)


def set_meter(level: PoolLevel, amount: str, reserve: str | None = None) -> None:
    """Put a level at a known meter for a worked example, through a recorded correction (so the ledger
    still balances)."""
    level.refresh_from_db()
    delta = Decimal(amount) - level.amount
    if delta:
        pools.correct_meter(
            level=level, amount_delta=delta, reason="test set-up", authorised_by="inspector", actor="test"
        )
    if reserve is not None:
        PoolLevel.objects.filter(pk=level.pk).update(reserve=Decimal(reserve))
        LedgerMove.objects.create(
            pool_id=level.pool_id,
            level=level,
            kind="opening_reserve",
            amount=Decimal(reserve) - level.reserve,
            actor="test",
            created_at=level.updated_at,
        )
