"""Between the pure program core (bingo.traditional.programs.rules) and the rows: states, picks, contexts and
versions.

States and picks are stored as JSON (dates ISO, hours "HH:MM", amounts as strings), so a program's state
after every game can be read back exactly and the next game computed from it.
"""

from __future__ import annotations

from datetime import date, datetime, time
from decimal import Decimal
from typing import Any

from bingo.traditional.models import GameProgram, PrizeProgram, PrizeProgramVersion
from bingo.traditional.programs.regulation import HallCategory, ProgramType
from bingo.traditional.programs.rules import (
    GameContext,
    InPlay,
    ManagerPick,
    Program,
    ProgramState,
    make_program,
)


def _iso(value: date | datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _date(value: Any) -> date | None:
    return date.fromisoformat(value) if value else None


def hour_text(value: time | None) -> str | None:
    return value.strftime("%H:%M") if value is not None else None


def pick_to_json(pick: ManagerPick | None) -> dict[str, Any] | None:
    if pick is None:
        return None
    return {
        "program_id": pick.program_id,
        "amount": None if pick.amount is None else str(pick.amount),
        "max_ball": pick.max_ball,
        "colour": pick.colour,
    }


def pick_from_json(data: dict[str, Any] | None) -> ManagerPick | None:
    if not data:
        return None
    amount = data.get("amount")
    return ManagerPick(
        program_id=str(data["program_id"]),
        amount=None if amount is None else Decimal(amount),
        max_ball=data.get("max_ball"),
        colour=data.get("colour"),
    )


def state_to_json(state: ProgramState) -> dict[str, Any]:
    return {
        "reached": state.reached,
        "steps": state.steps,
        "day_steps": state.day_steps,
        "last_play_day": _iso(state.last_play_day),
        "last_game_start": _iso(state.last_game_start),
        "served_day": _iso(state.served_day),
        "served_hours": sorted(h.strftime("%H:%M") for h in state.served_hours),
        "pick": pick_to_json(state.pick),
    }


def state_from_json(data: dict[str, Any] | None) -> ProgramState:
    if not data:
        return ProgramState()
    start = data.get("last_game_start")
    return ProgramState(
        reached=bool(data.get("reached", False)),
        steps=int(data.get("steps", 0)),
        day_steps=int(data.get("day_steps", 0)),
        last_play_day=_date(data.get("last_play_day")),
        last_game_start=datetime.fromisoformat(start) if start else None,
        served_day=_date(data.get("served_day")),
        served_hours=frozenset(time.fromisoformat(h) for h in data.get("served_hours", [])),
        pick=pick_from_json(data.get("pick")),
    )


def jsonable(value: Any) -> Any:
    """Parameters as stored: Decimals as strings, hours as "HH:MM", tuples and sets as lists."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = [jsonable(v) for v in value]
        return sorted(items) if isinstance(value, set | frozenset) else items
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, time):
        return value.strftime("%H:%M")
    return value


def program_of(program: PrizeProgram, version: PrizeProgramVersion) -> Program:
    """The pure program of one stored version (validated when it was stored)."""
    return make_program(
        program.program_type,
        version.params,
        program_id=program.code,
        effective_from=version.effective_from,
        version=version.version,
    )


def context_of(gp: GameProgram, *, last_game_of_session: bool | None = None) -> GameContext:
    """The game's context as it was at the close of sales."""
    picks = tuple(p for p in (pick_from_json(d) for d in gp.picks) if p is not None)
    return GameContext(
        start=gp.start,
        time_zone=gp.time_zone,
        hall_category=HallCategory(gp.hall_category),
        cards_sold=gp.cards_sold,
        pool_amount=gp.pool_amount,
        last_game_of_session=gp.last_game_of_session
        if last_game_of_session is None
        else last_game_of_session,
        manager_picks=picks,
    )


def in_play_of(gp: GameProgram) -> InPlay:
    """The terms announced for the game (the row must be in play)."""
    assert gp.in_play
    assert gp.amount is not None
    return InPlay(
        program_id=gp.program.code,
        program_type=ProgramType(gp.program.program_type),
        max_ball=gp.max_ball,
        colour=gp.colour or None,
        amount=gp.amount,
        row=gp.row,
        slot=gp.slot,
        operating_day=gp.operating_day,
        step=gp.step,
    )
