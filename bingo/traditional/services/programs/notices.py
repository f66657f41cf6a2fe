"""The beat's part in the scheduled programs (BA-4 … BA-13): tell the screens which scheduled hour the
room's next game will serve ("Próxima partida: Bingo Extra 12/2 (20:00)").

Only a notice: the in-play decision is taken at the close of sales from the game's own start and never
depends on beat having run. Each (program, operating day, hour) is noticed once (a unique row), so a
repeated or late beat writes nothing twice.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction

from bingo.traditional.models import Game, GameProgram, PrizeProgram, ScheduledNotice
from bingo.traditional.programs.rules import Family
from bingo.traditional.programs.schedule import scheduled_slot
from bingo.traditional.services.programs import clock
from bingo.traditional.services.programs.changes import note
from bingo.traditional.services.programs.codec import hour_text
from bingo.traditional.services.programs.readmodels import current_state, version_at
from bingo.traditional.services.programs.refusals import IN_PLAY
from halls.eventtypes import DueProgram, EventType, ProgramsDue
from halls.models import GameSession, Room
from jackpots.services.readmodels.meters import pool_meter

SCHEDULED_TYPES = [f"BA-{n}" for n in range(4, 14)]


def _due(program: PrizeProgram, at: datetime) -> dict[str, Any] | None:
    """The scheduled hour the room's next game would serve if it started at `at`, or None."""
    found = version_at(program, at)
    if found is None:
        return None
    pure = found[1]
    if pure.family is not Family.SCHEDULED:
        return None
    state = current_state(program)
    previous = state.last_game_start
    served = set(state.served_hours)
    # A game whose sales closed but that is not closed yet already serves its hour: the next one follows it.
    live = Game.objects.filter(room_id=program.room_id, state__in=IN_PLAY).order_by("-pk").first()
    if live is not None and live.sales_closed_at is not None:
        previous = max(filter(None, [previous, live.sales_closed_at]))
        slot = GameProgram.objects.filter(game=live, program=program).values_list("slot", flat=True).first()
        if slot is not None:
            served.add(slot)
    venue = program.room.venue
    try:
        slot_due = scheduled_slot(
            at,
            venue.time_zone,
            pure.hours,
            previous_start=previous,
            served=served,
            mode=pure.missed_slot,
        )
    except ValueError:
        return None
    if slot_due is None:
        return None
    return {"pure": pure, "slot": slot_due}


def announce_scheduled(at: datetime | None = None) -> int:
    """Record and announce, once, the scheduled hours due in each open room's next game; returns how many.
    `at` is the real time (default now): each room's venue reads it through its own clock."""
    at = at or clock.now()
    open_rooms = GameSession.objects.filter(closed_at__isnull=True).values_list("room_id", flat=True)
    programs = (
        PrizeProgram.objects.filter(active=True, program_type__in=SCHEDULED_TYPES, room_id__in=open_rooms)
        .select_related("room__venue")
        .order_by("room_id", "pk")
    )
    by_room: dict[int, list[PrizeProgram]] = {}
    for program in programs:
        by_room.setdefault(program.room_id, []).append(program)
    total = 0
    for programs_of_room in by_room.values():
        room = programs_of_room[0].room
        total += _announce_room(room, programs_of_room, clock.venue_at(room.venue_id, at))
    return total


def _announce_room(room: Room, programs: list[PrizeProgram], at: datetime) -> int:
    due: list[DueProgram] = []
    with transaction.atomic():
        for program in programs:
            found = _due(program, at)
            if found is None:
                continue
            slot = found["slot"]
            try:
                with transaction.atomic():
                    _, created = ScheduledNotice.objects.get_or_create(
                        program=program,
                        operating_day=slot.operating_day,
                        hour=slot.hour,
                        defaults={"created_at": at},
                    )
            except IntegrityError:
                created = False
            if not created:
                continue
            amount = pool_meter(program.pool_id).levels[0].amount  # live, whole cents down
            target = found["pure"].amount
            due.append(
                DueProgram(
                    code=program.code,
                    name=program.name,
                    type=program.program_type,
                    slot=hour_text(slot.hour),
                    operating_day=slot.operating_day.isoformat(),
                    amount=str(amount),
                    # In play only once the pool holds the amount (the close of sales decides).
                    reached=target is None or amount >= target,
                )
            )
        if due:
            note(room, "beat", EventType.PROGRAMS_DUE, room, ProgramsDue(room=room.pk, programs=due))
    return len(due)
