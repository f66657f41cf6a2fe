"""Read models of the programs: what a game announces and paid, what a room's screens and staff see."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from bingo.traditional.models import (
    Game,
    GameProgram,
    PrizeProgram,
    PrizeProgramVersion,
    ProgramAward,
    RoomBolsa,
)
from bingo.traditional.programs import terms
from bingo.traditional.programs.regulation import HallCategory, ProgramType
from bingo.traditional.programs.rules import (
    PROGRAM_TYPES,
    Family,
    GameContext,
    Program,
    ProgramError,
    ProgramState,
    in_play,
    program_in_force,
)
from bingo.traditional.services.programs import clock
from bingo.traditional.services.programs.codec import hour_text, program_of, state_from_json, state_to_json
from halls import money
from halls.models import Room
from jackpots.services.readmodels.meters import pool_meters

RECENT_GAMES = 20


# --- versions and states (the program services read them here too) ------------------------------------


def versions_of(program: PrizeProgram) -> list[tuple[PrizeProgramVersion, Program]]:
    return [(row, program_of(program, row)) for row in program.versions.order_by("version")]


def version_at(program: PrizeProgram, at: datetime) -> tuple[PrizeProgramVersion, Program] | None:
    """The version in force at `at` (BA-G3), or None before the first one takes effect."""
    rows = versions_of(program)
    chosen = program_in_force([pure for _, pure in rows], at)
    if chosen is None:
        return None
    return next((row, pure) for row, pure in rows if pure.version == chosen.version)


def current_state(program: PrizeProgram) -> ProgramState:
    """The state after the program's latest closed game, else its initial state (voids do not count)."""
    latest = (
        GameProgram.objects.filter(program=program, state_after__isnull=False)
        .order_by("-start", "-pk")
        .first()
    )
    return state_from_json(latest.state_after if latest else program.initial_state)


def _exact(amount: Decimal | None) -> str | None:
    """An exact figure (a remainder, a funding) without trailing zeros, at least to the cent."""
    if amount is None:
        return None
    value = amount.normalize()
    exponent = value.as_tuple().exponent
    return str(value.quantize(money.CENT) if isinstance(exponent, int) and exponent > -2 else value)


def announced(gp: GameProgram) -> dict[str, Any]:
    """One program in play as announced before the first ball (BA-G4): with the Line and Bingo prizes."""
    program = gp.program
    return {
        "code": program.code,
        "type": program.program_type,
        "name": program.name,
        "amount": money.text_cents(gp.amount),
        "max_ball": gp.max_ball,
        "colour": gp.colour or None,
        "row": gp.row,
        "slot": hour_text(gp.slot),
    }


def _winners(gp: GameProgram) -> list[dict[str, Any]]:
    awards = (
        ProgramAward.objects.filter(game_program=gp).select_related("claim__series").order_by("claim__serial")
    )
    return [{"series": a.claim.series.code, "serial": a.claim.serial, "amount": a.amount} for a in awards]


def game_program(gp: GameProgram) -> dict[str, Any]:
    return {
        **announced(gp),
        "won": gp.won,
        "prize": money.text_cents(gp.prize),
        "share": None if gp.share is None else str(gp.share),
        "remainder": _exact(gp.remainder),
        "winners": _winners(gp) if gp.won else [],
    }


def game_programs(game: Game) -> list[dict[str, Any]]:
    """The programs in play in a game, with their result once the Bingo is confirmed."""
    rows = (
        GameProgram.objects.filter(game=game, in_play=True).select_related("program").order_by("program_id")
    )
    return [game_program(gp) for gp in rows]


def _meters(programs: list[PrizeProgram]) -> dict[int, Decimal]:
    meters = pool_meters({p.pool_id for p in programs})
    return {pool_id: m.levels[0].amount for pool_id, m in meters.items() if m.levels}


def _next(program: PrizeProgram, amount: Decimal) -> dict[str, Any] | None:
    """What the program would announce if the next game started now with the pool as it stands
    (an indication for screens: the close of sales decides, with that game's funding)."""
    at = clock.venue_now(program.room.venue_id)
    found = version_at(program, at)
    if found is None or not program.active:
        return None
    pure = found[1]
    venue = program.room.venue
    try:
        ctx = GameContext(
            start=at,
            time_zone=venue.time_zone,
            hall_category=HallCategory(venue.hall_category),
            cards_sold=1,
            pool_amount=amount,
        )
        play = in_play(pure, current_state(program), ctx)
    except (ProgramError, ValueError):
        return None
    if play is None:
        return None
    return {
        "amount": money.text_cents(play.amount),
        # The Bingo Acumulado's max ball comes from the cards sold, known at the close of sales.
        "max_ball": None if pure.family is Family.ACUMULADO else play.max_ball,
        "colour": play.colour,
        "slot": hour_text(play.slot),
    }


def _digest(program: PrizeProgram) -> str:
    """The digest of the version in force now (else ""): what the posted prize table prints."""
    found = version_at(program, clock.venue_now(program.room.venue_id)) if program.active else None
    return found[0].digest if found is not None else ""


def _short(program: PrizeProgram, amount: Decimal) -> dict[str, Any]:
    digest = _digest(program)
    return {
        "id": program.pk,
        "code": program.code,
        "type": program.program_type,
        "name": program.name,
        "family": _family(program),
        "active": program.active,
        "pool": program.pool_id,
        "amount": money.text_cents(amount),
        "next": _next(program, amount),
        "digest": digest,
        # The hall screens' short form of it ("3F2A-9C10"), to compare with the posted prize table.
        "digest_short": terms.short(digest) if digest else "",
    }


def _family(program: PrizeProgram) -> str:
    return PROGRAM_TYPES[ProgramType(program.program_type)].family.value


def room_programs(room: Room) -> list[dict[str, Any]]:
    """The room's programs (active first), each with its pool amount and what it would put in play next."""
    programs = list(
        PrizeProgram.objects.filter(room=room).select_related("room__venue").order_by("-active", "pk")
    )
    meters = _meters(programs)
    return [_short(p, meters.get(p.pool_id, Decimal(0))) for p in programs]


def screen_programs(room: Room) -> list[dict[str, Any]]:
    """What a hall screen may show: active programs, name, type, pool amount, in play next."""
    return [
        {k: row[k] for k in ("code", "type", "name", "family", "amount", "next", "digest_short")}
        for row in room_programs(room)
        if row["active"]
    ]


def program_view(program: PrizeProgram) -> dict[str, Any]:
    """Everything staff see of one program: versions, state, pool amount, recent games."""
    amount = _meters([program]).get(program.pool_id, Decimal(0))
    in_force = version_at(program, clock.venue_now(program.room.venue_id))
    recent = (
        GameProgram.objects.filter(program=program)
        .select_related("game", "program")
        .order_by("-start", "-pk")[:RECENT_GAMES]
    )
    return {
        **_short(program, amount),
        "room": program.room_id,
        "created_at": program.created_at,
        "deactivated_at": program.deactivated_at,
        "versions": [
            {
                "version": row.version,
                "effective_from": row.effective_from,
                "params": row.params,
                "provenance": dict(pure.provenance),
                "authorisation_ref": row.authorisation_ref,
                "digest": row.digest,
                "created_by": row.created_by.get_username() if row.created_by else None,
                "created_at": row.created_at,
                "in_force": in_force is not None and in_force[0].pk == row.pk,
            }
            for row, pure in versions_of(program)
        ],
        "state": state_to_json(current_state(program)),
        "recent_games": [
            {
                "game": gp.game_id,
                "number": gp.game.number,
                "start": gp.start,
                "cards_sold": gp.cards_sold,
                "funding": _exact(gp.funding),
                "pool_amount": money.text_cents(gp.pool_amount),
                "in_play": gp.in_play,
                **(
                    {k: v for k, v in game_program(gp).items() if k not in ("code", "type", "name")}
                    if gp.in_play
                    else {}
                ),
            }
            for gp in recent
        ],
    }


def program_pool_ids() -> set[int]:
    """The pools of every prize program and Bolsa Acumulada: the game panel shows them, not the ribbon."""
    return set(PrizeProgram.objects.values_list("pool_id", flat=True)) | set(
        RoomBolsa.objects.values_list("pool_id", flat=True)
    )
