"""The accumulated prizes' meters of a speciality on its room stream (EGAME_METERS): after each game's
funding and after each pool award, so every terminal and hall screen of the speciality sees them climb
(the group server of EB-05.a is the room stream)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from bingo.electronic.models import Speciality, SpecialityPool
from bingo.electronic.prizetable import Rules, Terms
from halls import money
from halls.events import emit
from halls.eventtypes import EGameMeters, EMeter, EventType
from jackpots.models import PoolLevel


def pool_amounts(speciality: Speciality | int) -> dict[str, Decimal]:
    """Prize code -> its pool's meter (level 0, as folded: exact, 6 decimals)."""
    speciality_id = speciality if isinstance(speciality, int) else speciality.pk
    pools = dict(
        SpecialityPool.objects.filter(speciality_id=speciality_id).values_list("pool_id", "prize_code")
    )
    levels = PoolLevel.objects.filter(pool_id__in=pools, position=0).values_list("pool_id", "amount")
    return {pools[pool_id]: amount for pool_id, amount in levels}


def meters_of(
    speciality: Speciality, rules: Rules, terms: Terms | None, amounts: Mapping[str, Decimal]
) -> list[EMeter]:
    """The meters shown: each pool prize of the rules in play (network prizes only on a network), to the
    cent, with the max ball the game's terms set (or its first step before any game)."""
    shown = []
    for spec in rules.prizes:
        if spec.code not in amounts or spec.network:
            # a network prize's meter is the central's (bingo.network.interconnected sends it to the room)
            continue
        if terms is not None:
            prize = terms.prize(spec.code)
            if not prize.in_play:
                continue
            max_ball = prize.max_ball
        else:
            max_ball = spec.max_ball_for(money.ZERO)
        shown.append(
            EMeter(
                code=spec.code, name=spec.name, amount=money.cents_down(amounts[spec.code]), max_ball=max_ball
            )
        )
    return shown


def events(
    speciality: Speciality, rules: Rules, terms: Terms | None = None
) -> list[tuple[str, EventType, EGameMeters]]:
    """EGAME_METERS on the speciality's room stream, to emit (none when no pool prize is shown)."""
    meters = meters_of(speciality, rules, terms, pool_amounts(speciality))
    if not meters:
        return []
    return [(speciality.stream, EventType.EGAME_METERS, EGameMeters(speciality=speciality.pk, meters=meters))]


def publish(speciality: Speciality, rules: Rules, terms: Terms | None = None) -> None:
    """EGAME_METERS on the speciality's room stream (after the caller's transaction commits)."""
    for stream, type, payload in events(speciality, rules, terms):
        emit(stream, type, payload)
