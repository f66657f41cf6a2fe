"""Line and Bingo claims: verification against the master card, the "any more?" window, and the awards.

A valid claim pauses the draw and opens the window for its prize; further claims bound to the same ball
are co-winners (spec §2.3 Interpretation). The caller's confirmation closes the window: the prize is split
equally to the cent among the valid claims, the remainder recorded; a Line resumes play, a Bingo closes
the game, after which no claim is accepted (TB-12).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from bingo import claims as rules
from bingo.cards import CardGrid
from bingo.prizes import split_equally
from bingo.traditional import hooks
from bingo.traditional.models import (
    Award,
    BallSet,
    Card,
    CardSeries,
    Claim,
    ClaimKind,
    ClaimWindow,
    Game,
    GameState,
    PrizeResult,
    SoldCard,
)
from bingo.traditional.services import commitments, draw, feed
from bingo.traditional.services.console import tell_consoles
from bingo.traditional.services.locks import lock_game
from bingo.traditional.services.programs import play as programs
from bingo.traditional.services.readmodels import CLAIMABLE, claim_verdict
from bingo.traditional.services.steps import record, step, transition
from halls.cashier.models import PayableKind
from halls.cashier.services import payables
from halls.cashier.services import readmodels as cashier_readmodels
from halls.errors import Conflict, InvalidInput, NotFound
from halls.eventtypes import (
    ClaimVerdict,
    ClaimVerified,
    EventType,
    Prize,
    PrizeAwarded,
    PrizeWinner,
)

REMAINDER_TO = "house: rounding residue of an equal split (OP-10)"


def _card(game: Game, series_code: str, serial: int) -> Card:
    series = CardSeries.objects.filter(venue_id=game.room.venue_id, code=series_code).first()
    if series is None:
        raise NotFound(
            gettext("No series %(series_code)s in this venue.") % {"series_code": series_code},
            code="unknown_series",
        )
    card = Card.objects.filter(series=series, serial=serial).first()
    if card is None:
        raise NotFound(
            gettext("Series %(series_code)s has no card %(serial)s (serials 1–%(card_count)s).")
            % {"series_code": series_code, "serial": serial, "card_count": series.card_count},
            code="unknown_card",
        )
    return card


def file_claim(
    *,
    game: Game,
    kind: str,
    series_code: str,
    serial: int,
    actor: User,
    idempotency_key: str | None = None,
) -> Claim:
    """Verify a claim by card serial and record the verdict, valid or not."""
    if kind not in ClaimKind.values:
        raise InvalidInput(
            gettext("A claim is for a line or a bingo, not %(kind)r.") % {"kind": kind}, code="bad_claim_kind"
        )
    with transaction.atomic():
        game = lock_game(game.pk)
        hooks.refuse_relayed(game)
        if idempotency_key:
            previous = Claim.objects.filter(game=game, idempotency_key=idempotency_key).first()
            if previous is not None:
                return previous
        card = _card(game, series_code, serial)
        if game.state in (GameState.CLOSED, GameState.VOID):
            # TB-12/TB-45: the record is final; the refusal is answered, not written.
            raise Conflict(
                gettext("The game is closed: no more claims."), code="game_closed", state=game.state
            )
        if game.state not in CLAIMABLE:
            label = GameState(game.state).label.lower()
            raise Conflict(
                gettext("Game %(number)s is %(label)s: the draw has not started.")
                % {"number": game.number, "label": label},
                code="wrong_state",
            )
        if game.claim_window == ClaimWindow.BINGO and kind == ClaimKind.LINE:
            raise Conflict(
                gettext("A Bingo has been called: only more bingos can be claimed now."), code="bingo_window"
            )
        balls = list(game.balls.order_by("ordinal").values_list("number", flat=True))
        sold = SoldCard.objects.filter(game=game, card=card).exists()
        verdict = rules.judge_claim(
            kind=rules.ClaimKind(kind),
            card=CardGrid.from_json(card.grid) if sold else None,
            balls=balls,
            line_confirmed_at=game.line_won_at,
            game_closed=False,
            serial=serial,
        )
        if (
            verdict.valid
            and kind == ClaimKind.LINE
            and game.prize_results.filter(kind=ClaimKind.LINE).exists()
        ):
            # Same ball as the paid Line, but "any more lines?" is closed: the prize is gone (TB-08).
            verdict = rules.line_already_paid(verdict, game.line_won_at or verdict.bound_ordinal)
        claim = record_verdict(
            game=game, card=card, kind=kind, verdict=verdict, actor=actor, idempotency_key=idempotency_key
        )
        if verdict.valid:
            _open_window(game, kind, verdict.bound_ordinal)
        announce_verdict(game=game, claim=claim, actor=actor, master_card=card.grid if sold else None)
        if claim.valid:
            tell_consoles(game)  # the card is off their unclaimed list
    return claim


def record_verdict(
    *,
    game: Game,
    card: Card,
    kind: str,
    verdict: rules.Verdict,
    actor: User,
    idempotency_key: str | None,
) -> Claim:
    """The claim's row with its verdict, valid or not, inside the caller's transaction (the game locked);
    refused (already_claimed, nothing written) when the card already holds a valid claim of the prize."""
    if verdict.valid and Claim.objects.filter(game=game, kind=kind, card=card, valid=True).exists():
        raise Conflict(
            gettext("Card %(serial)s already has a valid %(kind)s claim in this game.")
            % {"serial": card.serial, "kind": kind},
            code="already_claimed",
        )
    return Claim.objects.create(
        game=game,
        kind=kind,
        series=card.series,
        serial=card.serial,
        card=card,
        bound_ordinal=verdict.bound_ordinal,
        valid=verdict.valid,
        refusal=verdict.refusal.value if verdict.refusal else "",
        reason=verdict.reason,
        winning_row=verdict.winning_row,
        completed_at=verdict.completed_at,
        claimed_by=actor,
        created_at=timezone.now(),
        idempotency_key=idempotency_key or None,
    )


def announce_verdict(*, game: Game, claim: Claim, actor: User, master_card: Any) -> None:
    """The verdict on the game's stream and in its audit (CLAIM_VERIFIED), with the master card shown on
    the monitors during verification (TB-43; None when the card was not sold)."""
    code, facts = claim_verdict(claim, line_won_at=game.line_won_at)
    found = ClaimVerdict(
        claim=claim.pk,
        kind=claim.kind,
        series=claim.series.code,
        serial=claim.serial,
        valid=claim.valid,
        refusal=claim.refusal,
        reason=claim.reason,
        code=code,
        facts=facts,
        bound_ordinal=claim.bound_ordinal,
        winning_row=claim.winning_row,
        master_card=master_card,
        claim_window=game.claim_window,
    )
    record(game, actor, EventType.CLAIM_VERIFIED, found, ClaimVerified(**step(game), **found))


def _open_window(game: Game, kind: str, ordinal: int) -> None:
    if game.state == GameState.DRAWING:
        transition(game, game.pause, gettext_noop("pause for the claim"))
        game.paused_by_claim = True
    if kind == ClaimKind.LINE and game.line_won_at is None:
        game.line_won_at = ordinal
    if kind == ClaimKind.BINGO or not game.claim_window:
        game.claim_window = kind
    game.save()


def confirm_claims(*, game: Game, kind: str, actor: User) -> PrizeResult:
    """The caller ends "any more lines / bingos?": pay the prize to the valid claims at that ball."""
    with transaction.atomic():
        game = lock_game(game.pk)
        hooks.refuse_relayed(game)
        pending = _unpaid_valid(game)
        if kind not in ClaimKind.values:
            raise InvalidInput(
                gettext("Confirm a line or a bingo, not %(kind)r.") % {"kind": kind}, code="bad_claim_kind"
            )
        if game.state != GameState.PAUSED or not pending.get(kind):
            raise Conflict(
                gettext("There is no valid %(kind)s claim waiting to be confirmed.") % {"kind": kind},
                code="nothing_to_confirm",
            )
        if kind == ClaimKind.BINGO:
            programs.lock_for_bingo(game)  # the programs' pools before the audit chain (lock order)
        # The prizes become payables: the cashier's accounts after the pools, before the audit chain.
        payables.hold_award_accounts([game.room.venue_id])
        if kind == ClaimKind.BINGO and pending.get(ClaimKind.LINE):
            # Lines and a Bingo at the same ball: the Line is paid first (S13b before S13c).
            _pay(game, ClaimKind.LINE, pending[ClaimKind.LINE], actor)
        result = _pay(game, kind, pending[kind], actor)
        if kind == ClaimKind.BINGO:
            # The accumulated prizes in play are won with the ordinary Bingo (spec §2.4, OP-35).
            programs.bingo_confirmed(game=game, claims=pending[kind], actor=actor)
            feed.programs_won(game, [card_label(c.series.code, c.serial) for c in pending[kind]])
        if kind == ClaimKind.LINE and not pending.get(ClaimKind.BINGO):
            game.claim_window = ClaimWindow.NONE
            transition(game, game.resume, gettext_noop("resume after the line"))
            game.paused_by_claim = False
            game.save()
            record(game, actor, EventType.GAME_RESUMED, {}, step(game))
            draw.schedule_next_ball(game)
        elif kind == ClaimKind.LINE:
            game.claim_window = ClaimWindow.BINGO
            game.save()
        else:
            _close(game, actor)
        tell_consoles(game)  # the paid prize's cards, or the whole list once the game is closed
    return result


def _unpaid_valid(game: Game) -> dict[str, list[Claim]]:
    pending: dict[str, list[Claim]] = {}
    for claim in game.claims.filter(valid=True, award__isnull=True).select_related("series"):
        pending.setdefault(claim.kind, []).append(claim)
    return pending


def _pay(game: Game, kind: str, claims: list[Claim], actor: User) -> PrizeResult:
    prize = game.line_prize if kind == ClaimKind.LINE else game.bingo_prize
    amount = prize if prize is not None else Decimal("0")
    split = split_equally(amount, [c.pk for c in claims])
    result = PrizeResult.objects.create(
        game=game,
        kind=kind,
        ordinal=claims[0].bound_ordinal,
        amount=amount,
        winners=len(claims),
        share=split.share,
        remainder=split.remainder,
        remainder_to=REMAINDER_TO,
        confirmed_by=actor,
        confirmed_at=timezone.now(),
    )
    awards = Award.objects.bulk_create(
        Award(result=result, claim=c, amount=split.shares[c.pk]) for c in claims
    )
    _payables(game, kind, awards, actor)
    paid = Prize(
        kind=kind,
        ordinal=result.ordinal,
        amount=amount,
        share=split.share,
        remainder=split.remainder,
        remainder_to=REMAINDER_TO,
        winners=[PrizeWinner(series=c.series.code, serial=c.serial, amount=split.share) for c in claims],
    )
    record(game, actor, EventType.PRIZE_AWARDED, paid, PrizeAwarded(**step(game), **paid))
    # The authority's feed: the prize, its ball and its cards (series and serial), never who holds them.
    feed.prize_confirmed(game, result, [card_label(c.series.code, c.serial) for c in claims])
    return result


def _payables(game: Game, kind: str, awards: list[Award], actor: User) -> None:
    """Each winner's share waits at the cashier (halls.cashier.Payable), described in the venue's language."""
    venue_id = game.room.venue_id
    with payables.venue_language(venue_id):
        prize = PayableKind(kind).label
        for award in awards:
            card = card_label(award.claim.series.code, award.claim.serial)
            payables.create_payable(
                venue_id=venue_id,
                kind=kind,
                source=cashier_readmodels.bingo_award_source(award.pk),
                # The room first: two rooms' "Game 1 · Bingo" are told apart at the till.
                description=gettext("%(room)s · Game %(number)s · %(prize)s · card %(card)s")
                % {"room": game.room.name, "number": game.number, "prize": prize, "card": card},
                amount=award.amount,
                actor=actor,
            )


def card_label(series_code: str, serial: int) -> str:
    """A card as the cashier and the winner read it: series and serial, "A-0345"."""
    return f"{series_code}-{serial:04d}"


def _close(game: Game, actor: User) -> None:
    transition(game, game.close, gettext_noop("close"))
    game.claim_window = ClaimWindow.NONE
    game.paused_by_claim = False
    game.closed_at = timezone.now()
    game.save()
    if game.ball_set_id:
        BallSet.objects.filter(pk=game.ball_set_id).update(games_played=F("games_played") + 1)
    programs.game_closed(game=game, actor=actor)
    record(game, actor, EventType.GAME_CLOSED, {}, step(game))
    hooks.game_ended(game)  # an interconnected prize's result, written with the close
    commitments.game_ended(game)  # the seed revealed once the close commits
