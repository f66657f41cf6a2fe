"""Programs as data (BA-G3): activate a program in a room, change it by a new effective-dated version,
deactivate it. Every refusal lists the rules' problems and writes nothing.

A version's `params` are exactly what `bingo.traditional.programs.rules.make_program` takes; they are
validated,
stored as JSON and rebuilt with `make_program` whenever a game needs them. A change never edits a
version: it adds one, refused while a game of the room is between the close of sales and its close,
or when the room's schedules would overlap (`rules.schedule_problems`).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext, gettext_noop

from bingo.traditional.models import Game, GameState, PrizeProgram, PrizeProgramVersion, RoomBolsa
from bingo.traditional.programs import terms
from bingo.traditional.programs.problems import of_error
from bingo.traditional.programs.regulation import ProgramType
from bingo.traditional.programs.rules import (
    PROGRAM_TYPES,
    Funding,
    Program,
    ProgramError,
    allowed_params,
    initial_state,
    make_program,
    schedule_problems,
)
from bingo.traditional.services.locks import lock_program
from bingo.traditional.services.programs import clock
from bingo.traditional.services.programs.changes import note
from bingo.traditional.services.programs.codec import jsonable, state_to_json
from bingo.traditional.services.programs.program_pools import new_pool, percent_problems, sync_rate
from bingo.traditional.services.programs.readmodels import version_at, versions_of
from bingo.traditional.services.programs.refusals import program_error, refuse_while_in_play, refused, said
from halls.actors import Actor
from halls.errors import Conflict, InvalidInput, NotFound
from halls.eventtypes import EventType, ProgramDeactivated, ProgramVersion
from halls.models import Room
from halls.services.locks import lock_room

CODE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_./-]{0,23}$")


def program_types() -> list[dict[str, Any]]:
    """Every program type BA-1 … BA-20: name, family, rule summary, citation and the parameters it takes."""
    return [
        {
            "type": pt.value,
            "name": info.name,
            "family": info.family.value,
            "trigger": info.trigger.value,
            "condition": info.condition.value,
            "funding": info.funding.value,
            "if_not_won": info.if_not_won,
            "citation": info.citation,
            "params": sorted(allowed_params(info.program_type)),
        }
        for pt, info in PROGRAM_TYPES.items()
    ]


def _build(
    program_type: str, params: dict[str, Any], *, code: str, effective_from: datetime, version: int
) -> tuple[dict[str, Any], Program]:
    """The stored form of `params` and the program it makes; refused with every problem."""
    if not isinstance(params, dict):
        raise refused([gettext("params must be an object of parameter names and values")])
    stored = jsonable(params)
    if effective_from.tzinfo is None:
        raise InvalidInput(gettext("effective_from must carry its time zone."), code="bad_effective_from")
    try:
        pure = make_program(
            program_type, stored, program_id=code, effective_from=effective_from, version=version
        )
    except ProgramError as exc:
        raise program_error(exc) from None
    except ValueError as exc:  # no regulation in force on that date, a naive instant
        raise InvalidInput(said(of_error(exc)), code="bad_effective_from") from None
    problems = percent_problems("funding_percent", pure.funding_percent)
    if problems:
        raise refused([f"{pure.label}: {p}" for p in problems])
    return stored, pure


def _schedule_check(room: Room, candidate: Program) -> None:
    """The room's active programs (every version) plus the candidate must not overlap."""
    others = PrizeProgram.objects.filter(room=room, active=True).order_by("pk")
    everything: list[Program] = [candidate]
    for other in others:
        everything.extend(pure for _, pure in versions_of(other))
    problems = schedule_problems(everything)
    if problems:
        raise refused(problems, code="schedule_overlap")


def _last_start(room: Room) -> datetime | None:
    """The start (close of sales) of the room's latest game that was not voided."""
    found: datetime | None = (
        Game.objects.filter(room=room, sales_closed_at__isnull=False)
        .exclude(state=GameState.VOID)
        .aggregate(last=Max("sales_closed_at"))["last"]
    )
    return found


def _iso(effective_from: datetime | None) -> str | None:
    return effective_from.isoformat() if effective_from is not None else None


def _activation(
    room: Room, code: str, program_type: str, params: Any, effective_from: datetime | None, name: str
) -> tuple[dict[str, Any], Program]:
    """The terms an activation puts in force (code and name as stored) and the program they make; refused
    as the activation itself would refuse them."""
    code = (code or "").strip()
    if not CODE.match(code):
        raise InvalidInput(
            gettext(
                "Program code %(code)r: 1–24 letters, digits or - _ . / (e.g. 'prima-100', 'extra-12/2')."
            )
            % {"code": code},
            code="bad_program_code",
        )
    try:
        pt = ProgramType(program_type)
    except ValueError:
        raise refused([f"unknown program type {program_type!r} (BA-1 … BA-20, spec §2.4)"]) from None
    start = effective_from or clock.venue_now(room.venue_id)
    stored, pure = _build(pt.value, params, code=code, effective_from=start, version=1)
    return terms.program_terms(
        room=room.pk,
        code=code,
        program_type=pt.value,
        name=(name or "").strip() or PROGRAM_TYPES[pt].name,
        params=stored,
        effective_from=_iso(effective_from),
    ), pure


def _room_checks(room: Room, code: str, pure: Program) -> RoomBolsa | None:
    """What the room refuses of a new program: a code it has, a schedule overlapping its programs', a
    Super or Colour Prima without its Bolsa Acumulada (answered: the Bolsa that pays it, if any)."""
    if PrizeProgram.objects.filter(room=room, code=code).exists():
        raise Conflict(
            gettext("Room %(name)s already has a program %(code)s.") % {"name": room.name, "code": code},
            code="program_exists",
        )
    _schedule_check(room, pure)
    info = pure.info
    if info.funding is not Funding.BOLSA_ACUMULADA:
        return None
    bolsa = RoomBolsa.objects.filter(room=room).select_related("pool").first()
    if bolsa is None:
        raise Conflict(
            gettext("%(label)s is paid from the room's Bolsa Acumulada (OP-36): open it first.")
            % {"label": info.label},
            code="no_bolsa",
        )
    return bolsa


def activation_terms(
    *,
    room: Room,
    code: str,
    program_type: str,
    params: Any,
    effective_from: datetime | None = None,
    name: str = "",
) -> dict[str, Any]:
    """What activating this program would put in force, checked as the activation checks it (its digest is
    the one the posted prize table prints). Writes nothing."""
    put, pure = _activation(room, code, program_type, params, effective_from, name)
    _room_checks(room, put["code"], pure)
    return put


def change_terms(
    *, program: PrizeProgram, params: Any, effective_from: datetime | None = None
) -> dict[str, Any]:
    """What this new version would put in force, checked as the change checks it. Writes nothing."""
    at = clock.venue_now(program.room.venue_id)
    start = effective_from or at
    if start.tzinfo is not None and start < at:
        raise InvalidInput(
            gettext("A new version takes effect from now or later: games already played keep their version."),
            code="bad_effective_from",
        )
    if not program.active:
        raise Conflict(
            gettext("Program %(code)s is no longer active.") % {"code": program.code},
            code="program_inactive",
        )
    refuse_while_in_play(program.room, gettext_noop("change a program's parameters"))
    number = (program.versions.aggregate(n=Max("version"))["n"] or 0) + 1
    stored, pure = _build(
        program.program_type, params, code=program.code, effective_from=start, version=number
    )
    _schedule_check(program.room, pure)
    return _version_terms(program, stored, effective_from)


def _version_terms(
    program: PrizeProgram, stored: dict[str, Any], effective_from: datetime | None
) -> dict[str, Any]:
    return terms.program_terms(
        room=program.room_id,
        code=program.code,
        program_type=program.program_type,
        name=program.name,
        params=stored,
        effective_from=_iso(effective_from),
    )


def activate_program(
    *,
    room: Room,
    code: str,
    program_type: str,
    params: dict[str, Any],
    effective_from: datetime | None = None,
    name: str = "",
    actor: Actor,
) -> PrizeProgram:
    """Start a program in the room: version 1 of its parameters and, if funded from sales, its own pool."""
    put, pure = _activation(room, code, program_type, params, effective_from, name)
    code, name, stored = put["code"], put["name"], put["params"]
    info = PROGRAM_TYPES[ProgramType(put["program_type"])]
    at = clock.venue_now(room.venue_id)
    with transaction.atomic():
        room = lock_room(room.pk)
        bolsa = _room_checks(room, code, pure)
        if bolsa is not None:
            pool = bolsa.pool
        else:
            assert pure.funding_percent is not None
            assert pure.authorisation_ref is not None
            pool = new_pool(
                room=room,
                code=f"BINGO-{room.pk}-{code}",
                name=name,
                percent=pure.funding_percent,
                authorisation_ref=pure.authorisation_ref,
                actor=actor,
            )
        program = PrizeProgram.objects.create(
            room=room,
            code=code,
            program_type=info.program_type.value,
            name=name,
            pool=pool,
            initial_state=state_to_json(initial_state(pure, previous_start=_last_start(room))),
            created_at=at,
            created_by=actor if isinstance(actor, User) else None,
        )
        row = PrizeProgramVersion.objects.create(
            program=program,
            version=1,
            effective_from=pure.effective_from,
            params=stored,
            authorisation_ref=pure.authorisation_ref or "",
            digest=terms.digest(put),
            terms=put,
            created_by=actor if isinstance(actor, User) else None,
            created_at=at,
        )
        note(room, actor, EventType.PROGRAMS_ACTIVATED, program, _described(program, row, pure))
    return program


def _described(program: PrizeProgram, row: PrizeProgramVersion, pure: Program) -> ProgramVersion:
    return ProgramVersion(
        program=program.pk,
        code=program.code,
        type=program.program_type,
        name=program.name,
        pool=program.pool_id,
        version=row.version,
        effective_from=row.effective_from,
        params=row.params,
        provenance=dict(pure.provenance),
        authorisation_ref=row.authorisation_ref,
        digest=row.digest,
    )


def change_program(
    *, program: PrizeProgram, params: dict[str, Any], effective_from: datetime | None = None, actor: Actor
) -> PrizeProgramVersion:
    """A new version of the program's parameters, in force from `effective_from` (default now).

    Refused while a game of the room is in play; a version cannot take effect in the past (games already
    played keep the version they were announced with).
    """
    at = clock.venue_now(program.room.venue_id)
    start = effective_from or at
    if start.tzinfo is not None and start < at:
        raise InvalidInput(
            gettext("A new version takes effect from now or later: games already played keep their version."),
            code="bad_effective_from",
        )
    with transaction.atomic():
        room = lock_room(program.room_id)
        program = lock_program(program.pk)
        if not program.active:
            raise Conflict(
                gettext("Program %(code)s is no longer active.") % {"code": program.code},
                code="program_inactive",
            )
        refuse_while_in_play(room, gettext_noop("change a program's parameters"))
        number = (program.versions.aggregate(n=Max("version"))["n"] or 0) + 1
        stored, pure = _build(
            program.program_type, params, code=program.code, effective_from=start, version=number
        )
        put = _version_terms(program, stored, effective_from)
        _schedule_check(room, pure)
        row = PrizeProgramVersion.objects.create(
            program=program,
            version=number,
            effective_from=pure.effective_from,
            params=stored,
            authorisation_ref=pure.authorisation_ref or "",
            digest=terms.digest(put),
            terms=put,
            created_by=actor if isinstance(actor, User) else None,
            created_at=at,
        )
        if pure.funding_percent is not None and pure.effective_from <= at:
            sync_rate(
                pool_id=program.pool_id,
                percent=pure.funding_percent,
                authorisation_ref=row.authorisation_ref,
                actor=actor,
            )
        note(room, actor, EventType.PROGRAMS_CHANGED, program, _described(program, row, pure))
    return row


def deactivate_program(*, program: PrizeProgram, actor: Actor) -> PrizeProgram:
    """Stop the program (refused while a game of the room is in play). Its pool keeps what it holds."""
    with transaction.atomic():
        room = lock_room(program.room_id)
        program = lock_program(program.pk)
        if not program.active:
            raise Conflict(
                gettext("Program %(code)s is already inactive.") % {"code": program.code},
                code="program_inactive",
            )
        refuse_while_in_play(room, gettext_noop("deactivate a program"))
        program.active = False
        program.deactivated_at = clock.venue_now(room.venue_id)
        program.save(update_fields=["active", "deactivated_at"])
        note(
            room,
            actor,
            EventType.PROGRAMS_DEACTIVATED,
            program,
            ProgramDeactivated(
                program=program.pk, code=program.code, type=program.program_type, pool=program.pool_id
            ),
        )
    return program


def current_version(program: PrizeProgram) -> Program:
    """The pure program in force now."""
    found = version_at(program, clock.venue_now(program.room.venue_id))
    if found is None:
        raise NotFound(
            gettext("Program %(code)s has no version in force yet.") % {"code": program.code},
            code="no_version_in_force",
        )
    return found[1]
