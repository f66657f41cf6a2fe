"""What the program services share: refusals, the room's game in play, pools (versions in force and states
are reads: programs/readmodels)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext

from bingo.traditional.models import Game, GameState
from bingo.traditional.programs.rules import Problem, ProgramError
from halls import i18n, money
from halls.actors import Actor
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import EventType
from halls.models import Room
from halls.money import CENT
from halls.services.changes import record_change
from jackpots.models import Pool, PoolLevel, SourceType
from jackpots.services import folding, pools
from jackpots.services.pools import LevelSpec
from jackpots.sources import PoolSource

# Between the close of sales and the close of the game the programs' terms are fixed (TB-41).
IN_PLAY = (GameState.SALES_CLOSED, GameState.DRAWING, GameState.PAUSED)
# The pools' member: the room ("bingo_room:<id>"); each game's contribution names it, "…/game:<id>".
SOURCE_TYPE = SourceType.BINGO_ROOM.value


def said(problem: str) -> str:
    """A problem of the rules (`rules.Problem`) in the active language, its amounts as the reader writes
    them (halls.i18n.amount); a text already said (gettext) stays as it is."""
    if isinstance(problem, Problem):
        return problem.said(gettext, i18n.amount)
    return problem


def refused(problems: Sequence[str], *, code: str = "bad_program") -> InvalidInput:
    """A configuration or pick the rules refuse: every problem, each citing its rule, in the reader's
    language."""
    shown = [said(p) for p in problems]
    return InvalidInput("; ".join(shown), code=code, problems=shown)


def program_error(error: ProgramError, *, code: str = "bad_program") -> InvalidInput:
    return refused(error.problems, code=code)


def game_in_play(room: Room) -> Game | None:
    return Game.objects.filter(room=room, state__in=IN_PLAY).order_by("-pk").first()


def refuse_while_in_play(room: Room, doing: str) -> None:
    live = game_in_play(room)
    if live is not None:
        state = GameState(live.state).label.lower()
        raise Conflict(
            gettext("Game %(number)s of %(name)s is in play (%(state)s): %(doing)s between games.")
            % {"number": live.number, "name": room.name, "state": state, "doing": gettext(doing)},
            code="game_in_play",
        )


def note(room: Room, actor: Actor, type: EventType, obj: Any, data: Mapping[str, Any]) -> None:
    """Audit a program change in the venue's chain and tell the room's screens (after commit). A program's
    terms are public: the screens get what the audit keeps, `data`, a payload of `type`."""
    record_change(
        venue_id=room.venue_id, actor=actor, type=type, obj=obj, data=data, stream=room.stream, public=data
    )


# --- pools ---------------------------------------------------------------------------------------------


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
