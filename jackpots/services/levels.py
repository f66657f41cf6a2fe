"""A pool level's row as the pure engine sees it, and its secret mystery value drawn."""

from __future__ import annotations

from decimal import Decimal

from jackpots import engine
from jackpots.models import PoolLevel
from jackpots.rulepacks import JackpotKind


def level_state(level: PoolLevel) -> engine.LevelState:
    """The level row's amounts and rules as an engine.LevelState."""
    return engine.LevelState(
        seed=level.seed,
        amount=level.amount,
        reserve=level.reserve,
        ceiling=level.ceiling,
        overflow=engine.OverflowTarget(level.overflow_to),
        must_hit_by=level.must_hit_by,
        kind=JackpotKind(level.kind),
    )


def draw_must_hit_by(level: PoolLevel, floor: Decimal) -> Decimal | None:
    """A new secret mystery value for the level, from max(seed, floor) to its ceiling (CSPRNG)."""
    if not level.mystery or level.ceiling is None:
        return None
    low = max(level.seed, floor)
    if low > level.ceiling:
        return None
    try:
        return engine.draw_must_hit_by(low, level.ceiling)
    except ValueError:
        return None
