"""Accumulated bingo prize programs (bolsa acumulada, spec §2.4) in the game flow and the pool engine.

The rules are pure (bingo.traditional.programs.rules); these services keep the programs' versions, states,
pools
and per-game records, and hook into the game: funding and announcement at the close of sales, award
with the verified Bingo, the next step when the game closes (see `play`).

- config: activate_program, change_program, deactivate_program, current_version, program_types
- bolsa: open_bolsa, change_bolsa (the room's Bolsa Acumulada, OP-36)
- picks: set_manager_pick
- readmodels: program_view, room_programs, game_programs, screen_programs
- notices: announce_scheduled (the beat's "next game serves 20:00")
- play: the hooks (sales_closed, lock_for_bingo, bingo_confirmed, game_closed, session_closed,
  open_play_guard)
- clock: now (the one clock; tests monkeypatch it), venue_now (through the venue's clock)
"""

from bingo.traditional.services.programs import clock
from bingo.traditional.services.programs.bolsa import change_bolsa, open_bolsa
from bingo.traditional.services.programs.config import (
    activate_program,
    change_program,
    current_version,
    deactivate_program,
    program_types,
)
from bingo.traditional.services.programs.notices import announce_scheduled
from bingo.traditional.services.programs.picks import set_manager_pick
from bingo.traditional.services.programs.readmodels import (
    current_state,
    game_programs,
    program_view,
    room_programs,
    screen_programs,
)

__all__ = [
    "activate_program",
    "announce_scheduled",
    "change_bolsa",
    "change_program",
    "clock",
    "current_state",
    "current_version",
    "deactivate_program",
    "game_programs",
    "open_bolsa",
    "program_types",
    "program_view",
    "room_programs",
    "screen_programs",
    "set_manager_pick",
]
