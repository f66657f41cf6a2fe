"""The programs' pools: each a one-level progressive pool of the venue with the room its member, its rate
following the version in force, its meter folded (versions in force and states are reads:
programs/readmodels)."""

from __future__ import annotations

from decimal import Decimal

from django.utils.translation import gettext

from halls import money
from halls.actors import Actor
from halls.models import Room
from halls.money import CENT
from jackpots.models import Pool, PoolLevel, SourceType
from jackpots.services import folding, pools
from jackpots.services.pools import LevelSpec
from jackpots.sources import PoolSource

# The pools' member: the room ("bingo_room:<id>"); each game's contribution names it, "…/game:<id>".
SOURCE_TYPE = SourceType.BINGO_ROOM.value


def percent_problems(name: str, percent: Decimal | None) -> list[str]:
    """The pool engine keeps rates to 6 decimals; whole hundredths of a percent keep each deduction exact."""
    if percent is not None and percent != percent.quantize(CENT):
        return [gettext("%(name)s %(percent)s has more than 2 decimals") % {"name": name, "percent": percent}]
    return []


def member_source(room: Room) -> PoolSource:
    """The room as its programs' pool member (stored as "bingo_room:<id>")."""
    return PoolSource.of(SOURCE_TYPE, room.pk)


def new_pool(
    *, room: Room, code: str, name: str, percent: Decimal, authorisation_ref: str, actor: Actor
) -> Pool:
    """A one-level progressive pool of the venue: seed 0, no reserve, no ceiling, the room its member."""
    venue = room.venue
    pool = pools.create_pool(
        name=f"{room.name} · {name}"[:120],
        code=code,
        jurisdiction=venue.jurisdiction,
        currency=venue.currency,
        authorisation_ref=authorisation_ref,
        rule_pack="",
        venue=venue,
        levels=[LevelSpec(name=name[:60], seed=Decimal(0), contribution_rate=money.rate(percent))],
        carousel_bet=None,
        actor=actor,
    )
    pools.add_member(pool=pool, source_type=SOURCE_TYPE, source_id=str(room.pk), venue=venue, actor=actor)
    return pool


def level_of(pool_id: int) -> PoolLevel:
    return PoolLevel.objects.get(pool_id=pool_id, position=0)


def sync_rate(*, pool_id: int, percent: Decimal, authorisation_ref: str, actor: Actor) -> None:
    """The level's contribution rate follows the version in force (a recorded parameter change)."""
    level = level_of(pool_id)
    rate = money.rate(percent)
    if level.contribution_rate != rate:
        pools.change_parameters(
            level=level,
            changes={"contribution_rate": rate},
            actor=actor,
            authorisation_ref=authorisation_ref or "—",
        )


def folded_amount(pool_id: int) -> Decimal:
    """The pool's meter with every contribution folded in (exact, 6 decimals)."""
    folding.fold(pool_id)
    return level_of(pool_id).amount
