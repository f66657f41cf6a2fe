"""Open-play guards: apps above the engine (tables, bingo, machines) say when a pool is in play.

The engine never imports them (DESIGN §2); they register a callable at start-up (AppConfig.ready).
Parameter changes are refused while any guard answers a reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jackpots.models import Pool

OpenPlayGuard = Callable[["Pool"], "str | None"]

_guards: list[OpenPlayGuard] = []


def register_open_play_guard(guard: OpenPlayGuard) -> None:
    """``guard(pool)`` returns why the pool is in play now (e.g. "hand 12 is open at table 3"), or None."""
    if guard not in _guards:
        _guards.append(guard)


def unregister_open_play_guard(guard: OpenPlayGuard) -> None:
    if guard in _guards:
        _guards.remove(guard)


def open_play_problems(pool: Pool) -> list[str]:
    return [problem for guard in list(_guards) if (problem := guard(pool))]
