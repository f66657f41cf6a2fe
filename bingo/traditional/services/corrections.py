"""Correcting a mis-keyed ball: the caller typed 45 where the reader read 54.

A correction changes one recorded ball's number and nothing else: the ball keeps its ordinal and its time,
the old number stays in the record (a ``BallCorrection`` row and the audit chain: old and new number, who,
when, why), and everything computed from the balls is computed again in the same transaction: the
completions (so the unclaimed winners), and the valid claims not yet paid, judged again on the corrected
balls (a claim that no longer holds is marked not valid, and the claim window follows).

Refused, with nothing written:
- out of range, the same number, no reason, or a number already drawn (balls stay unique in a game);
- a game that is not in play (drawing or paused): a closed game's record is final (TB-45);
- an RNG game: its numbers come from the CSPRNG, not from a keyboard, so there is nothing to mis-key;
- once a prize bound at or after that ball has been confirmed: what was paid stands on the balls it saw.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo import claims as rules
from bingo.cards import CardGrid
from bingo.traditional.models import (
    Ball,
    BallCorrection,
    Claim,
    ClaimKind,
    ClaimWindow,
    DrawSource,
    Game,
    GameState,
    PrizeResult,
    SoldCard,
)
from bingo.traditional.services import detection
from bingo.traditional.services.console import tell_consoles
from bingo.traditional.services.draw import LAST_ORDINAL
from bingo.traditional.services.locks import lock_game
from bingo.traditional.services.steps import record, step
from halls.errors import Conflict, InvalidInput, NotFound
from halls.eventtypes import BallCorrected, CorrectedClaim, EventType

CORRECTABLE = (GameState.DRAWING, GameState.PAUSED)


def _checked_input(number: int, reason: str) -> str:
    reason = reason.strip()
    if not 1 <= number <= LAST_ORDINAL:
        raise InvalidInput(
            _("Ball %(n)s is out of range: balls are numbered 1 to 90.") % {"n": number},
            code="ball_out_of_range",
        )
    if not reason:
        raise InvalidInput(_("A correction needs a reason."), code="reason_required")
    return reason


def check_correction(*, game: Game, ordinal: int, number: int, reason: str) -> str:
    """Refuse, as `correct_ball` would now, a correction that cannot be made; writes nothing (four eyes
    checks a proposed correction with it). Answers the reason as it is kept."""
    reason = _checked_input(number, reason)
    _correctable_ball(game, ordinal, number)
    return reason


def correct_ball(*, game: Game, ordinal: int, number: int, reason: str, actor: User) -> BallCorrection:
    """Give ball ``ordinal`` the number ``number`` and recompute what depends on it."""
    reason = _checked_input(number, reason)
    with transaction.atomic():
        game = lock_game(game.pk)
        ball = _correctable_ball(game, ordinal, number)
        correction = BallCorrection.objects.create(
            game=game,
            ball=ball,
            ordinal=ordinal,
            old_number=ball.number,
            new_number=number,
            reason=reason,
            corrected_by=actor,
            corrected_at=timezone.now(),
        )
        ball.number = number
        ball.save(update_fields=["number"])
        game.balls_corrected += 1
        game.save(update_fields=["balls_corrected"])
        detection.rebuild_completions(game)
        judged = _judge_again(game, ordinal)
        _announce(game, correction, judged, actor)
    return correction


def _correctable_ball(game: Game, ordinal: int, number: int) -> Ball:
    if game.draw_source != DrawSource.MANUAL:
        raise Conflict(
            _("Game %(game)s draws with the RNG: its balls are not typed, so none can be corrected.")
            % {"game": game.number},
            code="rng_game",
        )
    if game.state not in CORRECTABLE:
        raise Conflict(
            _("Game %(game)s is %(state)s: its balls can no longer be corrected.")
            % {"game": game.number, "state": GameState(game.state).label.lower()},
            code="wrong_state",
        )
    ball = Ball.objects.filter(game=game, ordinal=ordinal).first()
    if ball is None:
        raise NotFound(
            _("Game %(game)s has no ball %(o)s.") % {"game": game.number, "o": ordinal}, code="unknown_ball"
        )
    if ball.number == number:
        raise InvalidInput(
            _("Ball %(o)s is already %(n)s.") % {"o": ordinal, "n": number}, code="same_number"
        )
    earlier = Ball.objects.filter(game=game, number=number).first()
    if earlier is not None:
        raise Conflict(
            _("Ball %(n)s was already drawn, at ordinal %(o)s.") % {"n": number, "o": earlier.ordinal},
            code="ball_already_drawn",
            ordinal=earlier.ordinal,
        )
    paid = PrizeResult.objects.filter(game=game, ordinal__gte=ordinal).order_by("ordinal").first()
    if paid is not None:
        raise Conflict(
            _("The %(kind)s was confirmed at ball %(paid)s: ball %(o)s can no longer be corrected.")
            % {"kind": ClaimKind(paid.kind).label, "paid": paid.ordinal, "o": ordinal},
            code="claim_confirmed",
            confirmed_at=paid.ordinal,
        )
    return ball


def _judge_again(game: Game, ordinal: int) -> list[dict[str, Any]]:
    """Judge the valid, unpaid claims bound at or after the corrected ball again; set the window after them.

    Refused claims stay as they were answered (the player was told, play went on); a card that wins on
    the corrected balls shows among the unclaimed winners and can be claimed again.
    """
    balls = list(Ball.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True))
    paid_line = PrizeResult.objects.filter(game=game, kind=ClaimKind.LINE).first()
    pending = Claim.objects.filter(game=game, valid=True, award__isnull=True, bound_ordinal__gte=ordinal)
    judged: list[dict[str, Any]] = []
    for claim in pending.select_related("card").order_by("pk"):
        sold = SoldCard.objects.filter(game=game, card_id=claim.card_id).exists()
        verdict = rules.judge_claim(
            kind=rules.ClaimKind(claim.kind),
            card=CardGrid.from_json(claim.card.grid) if sold else None,
            balls=balls[: claim.bound_ordinal],
            line_confirmed_at=paid_line.ordinal if paid_line else None,
            game_closed=False,
            serial=claim.serial,
        )
        before = {"valid": claim.valid, "reason": claim.reason, "completed_at": claim.completed_at}
        claim.valid = verdict.valid
        claim.refusal = verdict.refusal.value if verdict.refusal else ""
        claim.reason = verdict.reason
        claim.winning_row = verdict.winning_row
        claim.completed_at = verdict.completed_at
        claim.save(update_fields=["valid", "refusal", "reason", "winning_row", "completed_at"])
        judged.append(
            {
                "claim": claim.pk,
                "kind": claim.kind,
                "valid": claim.valid,
                "refusal": claim.refusal,
                "reason": claim.reason,
                "code": verdict.code.value,
                "facts": dict(verdict.facts),
                "winning_row": claim.winning_row,
                "before": before,
            }
        )
    if judged:
        _set_window(game, paid_line)
    return judged


def _set_window(game: Game, paid_line: PrizeResult | None) -> None:
    """The claim window as the valid unpaid claims now leave it; with none left the draw stays paused."""
    waiting = Claim.objects.filter(game=game, valid=True, award__isnull=True)
    kinds = set(waiting.values_list("kind", flat=True))
    if ClaimKind.BINGO in kinds:
        game.claim_window = ClaimWindow.BINGO
    elif ClaimKind.LINE in kinds:
        game.claim_window = ClaimWindow.LINE
    else:
        game.claim_window = ClaimWindow.NONE
    lines = (
        waiting.filter(kind=ClaimKind.LINE).order_by("bound_ordinal").values_list("bound_ordinal", flat=True)
    )
    game.line_won_at = paid_line.ordinal if paid_line else lines.first()
    game.save(update_fields=["claim_window", "line_won_at"])


def _shown(verdict: dict[str, Any]) -> CorrectedClaim:
    """A claim's verdict again, as the screens see it (without the verdict before)."""
    return CorrectedClaim(
        claim=verdict["claim"],
        kind=verdict["kind"],
        valid=verdict["valid"],
        refusal=verdict["refusal"],
        reason=verdict["reason"],
        code=verdict["code"],
        facts=verdict["facts"],
        winning_row=verdict["winning_row"],
    )


def _announce(game: Game, correction: BallCorrection, judged: list[dict[str, Any]], actor: User) -> None:
    """The audit entry (with who, why, and the claims' verdicts before) and the room's event on commit."""
    colour = game.ball_set.colour_of(correction.new_number) if game.ball_set else ""
    public = BallCorrected(
        **step(game),
        ordinal=correction.ordinal,
        old=correction.old_number,
        ball=correction.new_number,
        colour=colour,
        claim_window=game.claim_window,
        line_won_at=game.line_won_at,
        claims=[_shown(c) for c in judged],  # the verdicts before the correction stay in the audit
    )
    audited = {
        "ordinal": correction.ordinal,
        "old": correction.old_number,
        "ball": correction.new_number,
        "colour": colour,
        "claim_window": game.claim_window,
        "line_won_at": game.line_won_at,
        "correction": correction.pk,
        "reason": correction.reason,
        "corrected_at": correction.corrected_at,
        "claims": judged,
    }
    record(game, actor, EventType.BALL_CORRECTED, audited, public)
    tell_consoles(game)  # the corrected ball changes the unclaimed list whatever ball the game is at
