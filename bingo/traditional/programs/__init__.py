"""Accumulated-pool prize programs of traditional bingo (bolsa acumulada, spec §2.4): pure, no Django.

`regulation` holds the regulation's data (every BA table, literally, with citations), `schedule` the
scheduled-hour and operating-day rules in the venue's time zone, `rules` the program types BA-1 … BA-20
and the game cycle: `in_play` → `evaluate` → `payout` → `next_state`.
"""

from bingo.traditional.programs.regulation import HallCategory, ProgramType, Source
from bingo.traditional.programs.rules import (
    PROGRAM_TYPES,
    Family,
    GameContext,
    InPlay,
    ManagerPick,
    Payout,
    Program,
    ProgramError,
    ProgramState,
    contribution,
    evaluate,
    in_play,
    initial_state,
    make_program,
    next_state,
    payout,
    program_in_force,
    schedule_problems,
    validate_config,
    validate_pick,
)
from bingo.traditional.programs.schedule import MissedSlot, operating_day, overlapping, scheduled_slot

__all__ = [
    "PROGRAM_TYPES",
    "Family",
    "GameContext",
    "HallCategory",
    "InPlay",
    "ManagerPick",
    "MissedSlot",
    "Payout",
    "Program",
    "ProgramError",
    "ProgramState",
    "ProgramType",
    "Source",
    "contribution",
    "evaluate",
    "in_play",
    "initial_state",
    "make_program",
    "next_state",
    "operating_day",
    "overlapping",
    "payout",
    "program_in_force",
    "schedule_problems",
    "scheduled_slot",
    "validate_config",
    "validate_pick",
]
