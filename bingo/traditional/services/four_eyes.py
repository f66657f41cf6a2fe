"""Traditional bingo's changes behind four eyes (halls.foureyes): the kinds this wing registers at `ready`.

- ``program.activate`` / ``program.change``: a prize program's terms (bingo.traditional.programs.terms)
  are the proposal's params, so the proposal's digest is the digest of the terms; both are *posted*: the
  approver types (or scans) the digest printed on the prize table posted in the hall, and the applier
  checks that the version it put in force has that very digest.
- ``game.void``: a live game voided (the reason and the screens' message).
- ``ball.correct``: a ball corrected once a claim was made in the game (before any claim the caller
  corrects a mis-key alone: nothing has been decided on the balls yet).
- ``venue.prize_settings``: the Line and Bingo percentages and the hall category of a venue (halls'
  service; registered here because they are bingo's prizes, halls keeps no bingo kind of its own).

Each validator checks the target belongs to the venue and runs the same checks the service will (so a
proposal that cannot apply is refused when proposed, nothing written); each applier calls the ordinary
service with the approver as its actor, inside the approval's transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.urls import reverse
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from bingo.traditional.models import BallCorrection, Claim, Game, GameState, PrizeProgram
from bingo.traditional.services import corrections, games
from bingo.traditional.services.locks import lock_game
from bingo.traditional.services.programs import config, signage
from halls.errors import Conflict, InvalidInput, NotFound
from halls.foureyes import Kind, register_kind, target_of, target_pk
from halls.models import Proposal, Role, Room, Venue
from halls.services import proposals, venues

PROGRAM_ACTIVATE, PROGRAM_CHANGE = signage.PROGRAM_KINDS
GAME_VOID = "game.void"
BALL_CORRECT = "ball.correct"
PRIZE_SETTINGS = venues.PRIZE_SETTINGS_KIND
PROGRAM_KINDS = signage.PROGRAM_KINDS


# --- targets ("room:3", "program:5", "game:7", "venue:1") ----------------------------------------------


def _room(venue: Venue, target: str) -> Room:
    found = Room.objects.filter(pk=target_pk(target, "room"), venue=venue).select_related("venue").first()
    if found is None:
        raise NotFound(_("No room %(target)s in this venue.") % {"target": target}, code="unknown_room")
    return found


def _program(venue: Venue, target: str) -> PrizeProgram:
    found = (
        PrizeProgram.objects.filter(pk=target_pk(target, "program"), room__venue=venue)
        .select_related("room__venue")
        .first()
    )
    if found is None:
        raise NotFound(_("No program %(target)s in this venue.") % {"target": target}, code="unknown_program")
    return found


def _game(venue: Venue, target: str) -> Game:
    found = (
        Game.objects.filter(pk=target_pk(target, "game"), room__venue=venue)
        .select_related("room__venue")
        .first()
    )
    if found is None:
        raise NotFound(_("No game %(target)s in this venue.") % {"target": target}, code="unknown_game")
    return found


def _when(value: Any) -> datetime | None:
    """An ISO date-time with its zone (the terms keep it as given), or None: from the approval."""
    if value in (None, ""):
        return None
    found = parse_datetime(str(value)) if isinstance(value, str) else None
    if found is None or found.tzinfo is None:
        raise InvalidInput(
            _("effective_from is an ISO date and time with its zone, e.g. 2026-01-31T20:00:00+01:00."),
            code="bad_effective_from",
            field="effective_from",
        )
    return found


def _text(params: Mapping[str, Any], name: str, limit: int) -> str:
    value = params.get(name, "")
    if not isinstance(value, str) or len(value) > limit:
        raise InvalidInput(
            _("%(field)s is a text of at most %(max)s characters.") % {"field": name, "max": limit},
            code="bad_params",
            field=name,
        )
    return value.strip()


def _check_digest(proposal: Proposal, digest: str) -> None:
    """What was put in force has the digest the proposal (and the posted sheet) carries."""
    if digest != proposal.digest:
        raise Conflict(
            _("The terms put in force (%(put)s…) are not the posted ones (%(posted)s…): nothing changed.")
            % {"put": digest[:12], "posted": proposal.digest[:12]},
            code="terms_differ",
        )


# --- prize programs -------------------------------------------------------------------------------------


def _validate_activation(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    room = _room(venue, target)
    return config.activation_terms(
        room=room,
        code=_text(params, "code", 40),
        program_type=_text(params, "program_type", 6),
        params=params.get("params"),
        effective_from=_when(params.get("effective_from")),
        name=_text(params, "name", 120),
    )


def _apply_activation(proposal: Proposal, approver: User) -> dict[str, Any]:
    terms = proposal.params
    room = _room(proposal.venue, proposal.target)
    program = config.activate_program(
        room=room,
        code=terms["code"],
        program_type=terms["program_type"],
        params=terms["params"],
        effective_from=_when(terms["effective_from"]),
        name=terms["name"],
        actor=approver,
    )
    version = program.versions.get(version=1)
    _check_digest(proposal, version.digest)
    return {"program": program.pk, "version": version.version, "digest": version.digest}


def _validate_change(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    program = _program(venue, target)
    return config.change_terms(
        program=program, params=params.get("params"), effective_from=_when(params.get("effective_from"))
    )


def _apply_change(proposal: Proposal, approver: User) -> dict[str, Any]:
    terms = proposal.params
    program = _program(proposal.venue, proposal.target)
    row = config.change_program(
        program=program, params=terms["params"], effective_from=_when(terms["effective_from"]), actor=approver
    )
    _check_digest(proposal, row.digest)
    return {"program": program.pk, "version": row.version, "digest": row.digest}


# --- voiding a game, correcting a ball after a claim -----------------------------------------------------


def _validate_void(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    game = _game(venue, target)
    reason = _text(params, "reason", 500)
    message = " ".join(_text(params, "public_message", 1000).split())
    if not reason:
        raise InvalidInput(_("Voiding a game needs a reason."), code="reason_required", field="reason")
    if len(message) > games.VOID_MESSAGE_MAX:
        raise InvalidInput(
            _("The message for the screens is at most %(max)s characters.") % {"max": games.VOID_MESSAGE_MAX},
            code="message_too_long",
            field="public_message",
        )
    if game.state in (GameState.CLOSED, GameState.VOID):
        raise Conflict(
            _("Game %(number)s is %(state)s: it cannot be voided.")
            % {"number": game.number, "state": GameState(game.state).label.lower()},
            code="wrong_state",
        )
    return {"game": game.pk, "number": game.number, "reason": reason, "public_message": message}


def _apply_void(proposal: Proposal, approver: User) -> dict[str, Any]:
    change = proposal.params
    game = games.void_game(
        game=_game(proposal.venue, proposal.target),
        actor=approver,
        reason=change["reason"],
        public_message=change["public_message"],
    )
    return {"game": game.pk, "state": game.state}


def has_claims(game: Game) -> bool:
    """Whether a claim was made in the game: from then on a ball is corrected by two people."""
    return Claim.objects.filter(game=game).exists()


def _validate_correction(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    game = _game(venue, target)
    ordinal, number = params.get("ordinal"), params.get("number")
    if not isinstance(ordinal, int) or not isinstance(number, int) or isinstance(ordinal | number, bool):
        raise InvalidInput(_("ordinal and number are whole numbers."), code="bad_params")
    reason = corrections.check_correction(
        game=game, ordinal=ordinal, number=number, reason=_text(params, "reason", 500)
    )
    return {"game": game.pk, "ordinal": ordinal, "number": number, "reason": reason}


def request_correction(
    *, game: Game, ordinal: int, number: int, reason: str, actor: User
) -> BallCorrection | Proposal:
    """The caller's correction: made at once while no claim was made in the game, else proposed for a
    second person (``ball.correct``). Decided under the game's lock, so no claim slips in between."""
    with transaction.atomic():
        locked = lock_game(game.pk)
        if not has_claims(locked):
            return corrections.correct_ball(
                game=locked, ordinal=ordinal, number=number, reason=reason, actor=actor
            )
        return proposals.propose(
            venue=locked.room.venue,
            kind=BALL_CORRECT,
            target=target_of("game", locked.pk),
            params={"ordinal": ordinal, "number": number, "reason": reason},
            actor=actor,
        )


def _apply_correction(proposal: Proposal, approver: User) -> dict[str, Any]:
    change = proposal.params
    done = corrections.correct_ball(
        game=_game(proposal.venue, proposal.target),
        ordinal=change["ordinal"],
        number=change["number"],
        reason=change["reason"],
        actor=approver,
    )
    return {"correction": done.pk, "old": done.old_number, "new": done.new_number}


# --- a venue's prize settings ----------------------------------------------------------------------------


def _percent(params: Mapping[str, Any], name: str) -> Decimal | None:
    value = params.get(name)
    if value in (None, ""):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        raise InvalidInput(
            _("%(field)s is a percentage, e.g. 15.50.") % {"field": name}, code="bad_percent", field=name
        ) from None


def _validate_prize_settings(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    if target_pk(target, "venue") != venue.pk:
        raise NotFound(_("The target is not this venue."), code="unknown_venue")
    category = params.get("hall_category")
    wanted = venues.checked_prize_settings(
        venue=venue,
        line_percent=_percent(params, "line_percent"),
        bingo_percent=_percent(params, "bingo_percent"),
        hall_category=None if category in (None, "") else str(category),
    )
    return {name: str(value) for name, value in wanted.items()}


def _apply_prize_settings(proposal: Proposal, approver: User) -> dict[str, Any]:
    change = proposal.params
    venue = venues.change_prize_settings(
        venue=proposal.venue,
        actor=approver,
        line_percent=Decimal(change["line_percent"]),
        bingo_percent=Decimal(change["bingo_percent"]),
        hall_category=change["hall_category"],
    )
    return {
        "line_percent": str(venue.line_percent),
        "bingo_percent": str(venue.bingo_percent),
        "hall_category": venue.hall_category,
    }


def _sheet(proposal: Proposal) -> str:
    """The prize table to post, printed from the proposal (bingo.traditional.program_api)."""
    return reverse("api-program-signage", args=[proposal.pk])


def register() -> None:
    """Register this wing's kinds (bingo.traditional.apps.BingoConfig.ready)."""
    register_kind(
        Kind(
            name=PROGRAM_ACTIVATE,
            label=gettext_lazy("Activate a prize program"),
            roles=(Role.OPERATOR,),
            validate=_validate_activation,
            apply=_apply_activation,
            posted=True,
            sheet=_sheet,
        )
    )
    register_kind(
        Kind(
            name=PROGRAM_CHANGE,
            label=gettext_lazy("Change a prize program's terms"),
            roles=(Role.OPERATOR,),
            validate=_validate_change,
            apply=_apply_change,
            posted=True,
            sheet=_sheet,
        )
    )
    register_kind(
        Kind(
            name=GAME_VOID,
            label=gettext_lazy("Void a game"),
            roles=(Role.CALLER,),
            validate=_validate_void,
            apply=_apply_void,
        )
    )
    register_kind(
        Kind(
            name=BALL_CORRECT,
            label=gettext_lazy("Correct a ball after a claim"),
            roles=(Role.CALLER,),
            validate=_validate_correction,
            apply=_apply_correction,
        )
    )
    register_kind(
        Kind(
            name=PRIZE_SETTINGS,
            label=gettext_lazy("Change the prize settings"),
            roles=(Role.OPERATOR,),
            validate=_validate_prize_settings,
            apply=_apply_prize_settings,
        )
    )
