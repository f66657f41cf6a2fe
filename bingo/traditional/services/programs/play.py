"""The programs in the game flow: hooks that bingo's services call inside their own transactions.

- `sales_closed` (close_sales, before the game row is saved): fund each program's pool and the room's
  Bolsa Acumulada with ONE contribution per pool and game (the engine computes sales × rate exactly),
  fold, and decide what is in play (`rules.in_play`). The game's start for scheduling is the close of
  sales: the terms are announced before the first ball (TB-41), so they are fixed then. Every active
  program gets a GameProgram row, in play or not.
- `lock_for_bingo` + `bingo_confirmed` (confirm_claims, kind bingo): `rules.evaluate` on the bound ball
  (OP-12) and its colour; a won program is paid by `jackpots.services.award_level` with share × winners,
  so the split's remainder (OP-10) and any carry (BA-3's 20 %) stay in the pool, recorded.
- `game_closed` (claims._close): `rules.next_state` for every program of the game.
- `session_closed` (halls hook): the session's last closed game is recomputed as the last game of the
  session (BA-2's escalation stops, OP-04).

A voided game does not advance the programs (no state after), but its funding stays in the pools: money
deducted from sales at the close of sales is not returned by a void.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext, gettext_noop

from bingo.traditional.models import (
    Ball,
    Claim,
    Game,
    GamePick,
    GameProgram,
    GameState,
    PrizeProgram,
    ProgramAward,
    RoomBolsa,
)
from bingo.traditional.programs.problems import of_error
from bingo.traditional.programs.regulation import HallCategory
from bingo.traditional.programs.rules import (
    Funding,
    GameContext,
    InPlay,
    ManagerPick,
    ProgramError,
    evaluate,
    in_play,
    next_state,
    payout,
)
from bingo.traditional.services.programs import readmodels
from bingo.traditional.services.programs.codec import (
    context_of,
    in_play_of,
    pick_to_json,
    program_of,
    state_from_json,
    state_to_json,
)
from bingo.traditional.services.programs.program_pools import (
    folded_amount,
    level_of,
    member_source,
    sync_rate,
)
from bingo.traditional.services.programs.readmodels import current_state, version_at
from bingo.traditional.services.programs.refusals import IN_PLAY, said
from bingo.traditional.services.steps import record, step
from halls import i18n
from halls.actors import Actor
from halls.cashier.models import PayableKind
from halls.cashier.services import payables
from halls.cashier.services import readmodels as cashier_readmodels
from halls.errors import Conflict
from halls.eventtypes import EventType, ProgramsAwarded
from halls.models import GameSession
from halls.services import audit
from jackpots.models import Pool
from jackpots.services import awards, contributions
from jackpots.services.locks import lock_pools

ZERO = Decimal(0)


_CANNOT = {
    "be announced": gettext_noop("%(name)s (%(code)s) cannot be announced: %(problems)s"),
    "be paid": gettext_noop("%(name)s (%(code)s) cannot be paid: %(problems)s"),
    "be decided": gettext_noop("%(name)s (%(code)s) cannot be decided: %(problems)s"),
    "move to its next step": gettext_noop("%(name)s (%(code)s) cannot move to its next step: %(problems)s"),
}


def _refusal(program: PrizeProgram, problems: Sequence[str], doing: str) -> Conflict:
    """The rules refuse what the game asks of a program: every problem in the reader's language."""
    shown = [said(p) for p in problems]
    return Conflict(
        gettext(_CANNOT[doing]) % {"name": program.name, "code": program.code, "problems": "; ".join(shown)},
        code="program_refused",
        program=program.code,
        problems=shown,
    )


def _picks(game: Game) -> dict[int, ManagerPick]:
    return {
        row.program_id: ManagerPick(
            program_id=row.program.code, amount=row.amount, max_ball=row.max_ball, colour=row.colour or None
        )
        for row in GamePick.objects.filter(game=game).select_related("program")
    }


def _terms(play: InPlay | None) -> dict[str, Any]:
    if play is None:
        return {"in_play": False}
    return {
        "in_play": True,
        "max_ball": play.max_ball,
        "colour": play.colour or "",
        "amount": play.amount,
        "row": play.row,
        "slot": play.slot,
        "operating_day": play.operating_day,
        "step": play.step,
    }


def sales_closed(*, game: Game, actor: Actor) -> list[dict[str, Any]]:
    """Fund, fold and announce the programs of the game; returns the programs in play (announcement)."""
    room = game.room
    venue = room.venue
    start = game.sales_closed_at
    assert start is not None
    bolsa = RoomBolsa.objects.filter(room=room).first()
    running = [
        (program, *found)
        for program in PrizeProgram.objects.filter(room=room, active=True).order_by("pk")
        if (found := version_at(program, start)) is not None
    ]
    if not running and bolsa is None:
        return []
    lock_pools({p.pool_id for p, _, _ in running} | ({bolsa.pool_id} if bolsa else set()))
    source = member_source(room).at("game", game.pk)
    to_fund: list[int] = []
    for program, row, pure in running:
        if pure.funding_percent is not None:
            # A version that took effect since the last game brings its percentage to the pool's level.
            sync_rate(
                pool_id=program.pool_id,
                percent=pure.funding_percent,
                authorisation_ref=row.authorisation_ref,
                actor=actor,
            )
            to_fund.append(program.pool_id)
    if bolsa is not None:
        to_fund.append(bolsa.pool_id)
    # Every pool's funding in ONE statement, in close_sales' transaction and under the pools' exclusive
    # locks (lock_pools), so never through the group commit: the funding commits with the game, and a
    # group would wait on those very locks.
    receipts = contributions.contribute_pools(
        items=[
            (
                pool_id,
                contributions.ContributionItem(
                    source=source, bet=game.sales_total, idempotency_key=f"game:{game.pk}"
                ),
            )
            for pool_id in to_fund
        ],
        actor=actor,
    )
    funded: dict[int, Decimal] = {r.pool_id: r.to_meter for r in receipts}
    amounts = {pool_id: folded_amount(pool_id) for pool_id in sorted({p.pool_id for p, _, _ in running})}

    picks = _picks(game)
    announced: list[dict[str, Any]] = []
    from_bolsa: list[tuple[PrizeProgram, Decimal]] = []
    for program, row, pure in running:
        state = current_state(program)
        manager = (picks[program.pk],) if program.pk in picks else ()
        ctx = GameContext(
            start=start,
            time_zone=venue.time_zone,
            hall_category=HallCategory(venue.hall_category),
            cards_sold=game.cards_sold,
            pool_amount=amounts[program.pool_id],
            manager_picks=manager,
        )
        try:
            play = in_play(pure, state, ctx)
        except ProgramError as exc:
            raise _refusal(program, exc.problems, "be announced") from None
        except ValueError as exc:
            raise _refusal(program, [of_error(exc)], "be announced") from None
        if play is not None and play.colour is not None and game.ball_set_id is None:
            no_colours = gettext("the game has no ball set, so no ball colours")
            raise _refusal(program, [no_colours], "be announced")
        own_pool = pure.info.funding is Funding.SALES_PERCENT
        gp = GameProgram.objects.create(
            game=game,
            program=program,
            version=row,
            state_before=state_to_json(state),
            start=start,
            time_zone=venue.time_zone,
            hall_category=venue.hall_category,
            cards_sold=game.cards_sold,
            pool_amount=ctx.pool_amount,
            funding=funded.get(program.pool_id, ZERO) if own_pool else ZERO,
            picks=[pick_to_json(p) for p in manager],
            **_terms(play),
        )
        if play is not None:
            announced.append(readmodels.announced(gp))
            if not own_pool:
                from_bolsa.append((program, play.amount))
    wanted = sum((amount for _, amount in from_bolsa), ZERO)
    if bolsa is not None and from_bolsa and wanted > amounts[bolsa.pool_id]:
        names = ", ".join(f"{p.name} ({p.code})" for p, _ in from_bolsa)
        short = gettext(
            "The Bolsa Acumulada holds %(held)s, less than the %(wanted)s announced for %(names)s."
        ) % {
            "held": i18n.amount(amounts[bolsa.pool_id]),
            "wanted": i18n.amount(wanted),
            "names": names,
        }
        raise Conflict(short, code="program_refused", problems=[short])
    return announced


# --- the verified Bingo ------------------------------------------------------------------------------------


def lock_for_bingo(game: Game) -> None:
    """Lock the pools of the programs in play before the Bingo's audit rows (fixed lock order)."""
    in_play_pools = GameProgram.objects.filter(game=game, in_play=True).values_list(
        "program__pool_id", flat=True
    )
    lock_pools(set(in_play_pools))


def _award(game: Game, gp: GameProgram, play: InPlay, winners: list[Claim], actor: Actor) -> None:
    program = gp.program
    pure = program_of(program, gp.version)
    pool_amount = folded_amount(program.pool_id)
    try:
        pay = payout(pure, pool_amount, [c.pk for c in winners], amount=play.amount)
    except ProgramError as exc:
        raise _refusal(program, exc.problems, "be paid") from None
    total = pay.share * len(winners)
    award_id = None
    if total > 0:
        result = awards.award_level(
            level=level_of(program.pool_id),
            amount=total,
            winner={
                "source": member_source(game.room).at("game", game.pk),
                "hand": f"game:{game.pk}",
                "category": program.code,
                "label": f"{program.program_type} {program.name}",
                "claims": [c.pk for c in winners],
            },
            idempotency_key=f"game:{game.pk}/program:{program.pk}",
            actor=actor,
        )
        gp.settlement_id = result.settlement_id
        award_id = result.lines[0].award_id
    gp.prize = pay.prize
    gp.share = pay.share
    gp.winners = len(winners)
    gp.remainder = pay.remainder
    gp.carry = pay.carry
    ProgramAward.objects.bulk_create(
        ProgramAward(game_program=gp, claim=c, amount=pay.shares[c.pk]) for c in winners
    )
    if award_id is not None:
        _payables(game, program, award_id, winners, pay.shares, actor)


def _payables(
    game: Game,
    program: PrizeProgram,
    award_id: int,
    winners: list[Claim],
    shares: Mapping[int, Decimal],
    actor: Actor,
) -> None:
    """Each winning card's share of the program's pool award waits at the cashier."""
    venue_id = game.room.venue_id
    with payables.venue_language(venue_id):
        for claim in winners:
            payables.create_payable(
                venue_id=venue_id,
                kind=PayableKind.ACCUMULATED,
                source=cashier_readmodels.pool_award_source(award_id, claim.pk),
                description=gettext("%(room)s · Game %(number)s · %(program)s · card %(card)s")
                % {
                    "room": game.room.name,
                    "number": game.number,
                    "program": program.name,
                    "card": f"{claim.series.code}-{claim.serial:04d}",
                },
                amount=shares[claim.pk],
                actor=actor,
            )


def bingo_confirmed(*, game: Game, claims: Sequence[Claim], actor: Actor) -> list[dict[str, Any]]:
    """Evaluate and pay every program in play with the confirmed Bingo (each independently, OP-35)."""
    gps = list(
        GameProgram.objects.filter(game=game, in_play=True, won__isnull=True)
        .select_related("program", "version")
        .order_by("program_id")
    )
    if not gps or not claims:
        return []
    winners = sorted(claims, key=lambda c: c.pk)
    ordinal = winners[0].bound_ordinal
    number = Ball.objects.filter(game=game, ordinal=ordinal).values_list("number", flat=True).first()
    colour = game.ball_set.colour_of(number) if game.ball_set is not None and number is not None else ""
    for gp in gps:
        play = in_play_of(gp)
        try:
            won = evaluate(play, ordinal, colour or None)
        except ValueError as exc:
            raise _refusal(gp.program, [of_error(exc)], "be decided") from None
        gp.won = won
        gp.bingo_ordinal = ordinal
        gp.bingo_colour = colour
        if won:
            _award(game, gp, play, winners, actor)
        gp.save()
    results = readmodels.game_programs(game)
    record(
        game,
        actor,
        EventType.PROGRAMS_AWARDED,
        {"awards": results},
        ProgramsAwarded(**step(game), awards=results),
    )
    return results


# --- after the game ----------------------------------------------------------------------------------------


def _advance(gp: GameProgram, *, last_game_of_session: bool = False) -> None:
    pure = program_of(gp.program, gp.version)
    ctx = context_of(gp, last_game_of_session=last_game_of_session or gp.last_game_of_session)
    try:
        after = next_state(pure, state_from_json(gp.state_before), bool(gp.won), ctx)
    except (ProgramError, ValueError) as exc:
        problems = exc.problems if isinstance(exc, ProgramError) else (of_error(exc),)
        raise _refusal(gp.program, problems, "move to its next step") from None
    gp.state_after = state_to_json(after)
    gp.last_game_of_session = ctx.last_game_of_session
    gp.save(update_fields=["state_after", "last_game_of_session"])


def game_closed(*, game: Game, actor: Actor) -> None:
    """Every program of the game moves on (`rules.next_state`), in play or not, won or not."""
    for gp in (
        GameProgram.objects.filter(game=game).select_related("program", "version").order_by("program_id")
    ):
        _advance(gp)


def session_closed(session: GameSession, actor: Any) -> None:
    """The session's last closed game was its last game: recompute its programs' states (OP-04)."""
    game = session.games.filter(state=GameState.CLOSED).order_by("-number").first()
    if game is None:
        return
    gps = list(
        GameProgram.objects.filter(game=game, last_game_of_session=False, state_after__isnull=False)
        .select_related("program", "version")
        .order_by("program_id")
    )
    for gp in gps:
        _advance(gp, last_game_of_session=True)
    if gps:
        audit.record(
            venue_id=session.room.venue_id,
            actor=actor,
            action="programs.last_game_of_session",
            obj=game,
            data={"session": session.pk, "game": game.pk, "programs": [gp.program.code for gp in gps]},
        )


def open_play_guard(pool: Pool) -> str | None:
    """jackpots asks before a parameter change: a program's pool is in play while a game of its room is
    between the close of sales and its close."""
    rooms = set(PrizeProgram.objects.filter(pool_id=pool.pk).values_list("room_id", flat=True))
    rooms |= set(RoomBolsa.objects.filter(pool_id=pool.pk).values_list("room_id", flat=True))
    if not rooms:
        return None
    live = Game.objects.filter(room_id__in=rooms, state__in=IN_PLAY).select_related("room").first()
    if live is None:
        return None
    return f"game {live.number} of {live.room.name} is in play ({GameState(live.state).label.lower()})"
