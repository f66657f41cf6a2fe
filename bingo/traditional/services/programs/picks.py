"""The hall manager's picks (BA-2 order for the trigger game, BA-19 amount + order, BA-20 amount + colour),
set for one game while it is scheduled or on sale and checked by `rules.validate_pick`. The close of
sales reads them into the game's context; until then a pick may be set again."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext

from bingo.traditional.models import Game, GamePick, GameState, PrizeProgram
from bingo.traditional.programs.problems import problem
from bingo.traditional.programs.rules import Family, Funding, ManagerPick, validate_pick
from bingo.traditional.services.locks import lock_game
from bingo.traditional.services.programs import clock
from bingo.traditional.services.programs.codec import pick_to_json
from bingo.traditional.services.programs.program_pools import folded_amount
from bingo.traditional.services.programs.readmodels import current_state, version_at
from bingo.traditional.services.programs.refusals import refused
from bingo.traditional.services.steps import record, step
from halls import money
from halls.actors import Actor
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import EventType, ProgramPickSet
from halls.money import CENT_PLACES

PICKABLE = (GameState.SCHEDULED, GameState.ON_SALE)


def _amount(value: Decimal | None) -> Decimal | None:
    """The picked amount, exact to the cent (halls.money.parse). A negative one is let through: the rules
    refuse it with the pick's other problems (`validate_pick`)."""
    if value is None:
        return None
    try:
        return money.parse("amount", value, places=CENT_PLACES, signed=True)
    except money.MoneyTypeError:
        raise InvalidInput(
            gettext("The amount must be exact (Decimal or string), not %(value)r.") % {"value": value},
            code="bad_amount",
        ) from None
    except money.NotAnAmount:
        raise InvalidInput(
            gettext("The amount %(value)r is not a number.") % {"value": value}, code="bad_amount"
        ) from None
    except money.MoneyError:
        raise InvalidInput(
            gettext("The amount %(value)s is not a whole number of cents.") % {"value": value},
            code="bad_amount",
        ) from None


def set_manager_pick(
    *,
    game: Game,
    program: PrizeProgram,
    amount: Decimal | None = None,
    max_ball: int | None = None,
    colour: str | None = None,
    actor: Actor,
) -> GamePick:
    value = _amount(amount)
    if max_ball is not None and (isinstance(max_ball, bool) or not isinstance(max_ball, int)):
        raise InvalidInput(
            gettext("The extraction order must be a whole number, not %(max_ball)r.")
            % {"max_ball": max_ball},
            code="bad_max_ball",
        )
    with transaction.atomic():
        game = lock_game(game.pk)
        program = PrizeProgram.objects.get(pk=program.pk)
        if program.room_id != game.room_id:
            raise InvalidInput(
                gettext("Program %(code)s belongs to another room.") % {"code": program.code},
                code="bad_program",
            )
        if not program.active:
            raise Conflict(
                gettext("Program %(code)s is no longer active.") % {"code": program.code},
                code="program_inactive",
            )
        if game.state not in PICKABLE:
            raise Conflict(
                gettext("Game %(number)s is %(state)s: picks are set before the close of sales.")
                % {
                    "number": game.number,
                    "state": GameState(game.state).label.lower(),
                },
                code="wrong_state",
            )
        found = version_at(program, clock.venue_now(program.room.venue_id))
        if found is None:
            raise Conflict(
                gettext("Program %(code)s has no version in force yet.") % {"code": program.code},
                code="no_version_in_force",
            )
        pure = found[1]
        state = current_state(program)
        pick = ManagerPick(program_id=program.code, amount=value, max_ball=max_ball, colour=colour)
        problems = validate_pick(pure, state, pick)
        if not problems and pure.family is Family.BINGO_EXTRA and not state.reached:
            problems = [problem("not_reached_next", program=pure.label)]
        if not problems and pure.info.funding is Funding.BOLSA_ACUMULADA:
            wanted = value if value is not None else pure.amount
            held = folded_amount(program.pool_id)
            if wanted is not None and held < wanted:
                problems = [problem("bolsa_short", label=pure.label, held=held, prize=wanted)]
        if problems:
            raise refused(problems, code="bad_pick")
        row, _ = GamePick.objects.update_or_create(
            game=game,
            program=program,
            defaults={
                "amount": value,
                "max_ball": max_ball,
                "colour": (colour or "").strip().lower(),
                "set_by": actor if isinstance(actor, User) else None,
                "set_at": clock.venue_now(program.room.venue_id),
            },
        )
        picked = {"program": program.code, "pick": pick_to_json(pick)}
        shown = ProgramPickSet(**step(game), program=program.code, pick=pick_to_json(pick))
        record(game, actor, EventType.PROGRAMS_PICK_SET, picked, shown)
    return row
