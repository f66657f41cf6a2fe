"""The game lifecycle: scheduled → on sale → sales closed → drawing ⇄ paused → closed, or void."""

from __future__ import annotations

from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from bingo.announce import SeriesSales, contiguous_ranges, sales_formula
from bingo.prizes import prize_from_sales
from bingo.traditional import hooks
from bingo.traditional import voice as spoken
from bingo.traditional.models import BallSet, CardSeries, DrawSource, Game, GameState, SoldCard
from bingo.traditional.services import ballsets, commitments, console, detection, devices, draw, readmodels
from bingo.traditional.services.locks import lock_game
from bingo.traditional.services.programs import clock as program_clock
from bingo.traditional.services.programs import play as programs
from bingo.traditional.services.steps import record, step, transition
from halls import events
from halls.actors import Actor
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import (
    DrawProof,
    EventType,
    GameCreated,
    GameDrawStarted,
    GamePaused,
    GameSalesClosed,
    GameSalesOpened,
    GameVoided,
    GameVoidReason,
    OfferedSeries,
)
from halls.models import GameSession, Room, Venue
from halls.services.locks import lock_room


def create_game(
    *,
    room: Room,
    actor: Actor,
    draw_source: str = DrawSource.RNG,
    pace_seconds: Decimal | None = None,
    ball_set: BallSet | None = None,
) -> Game:
    if draw_source not in DrawSource.values:
        raise InvalidInput(
            _("Unknown draw source %(draw_source)r: use one of %(values)s.")
            % {"draw_source": draw_source, "values": DrawSource.values},
            code="bad_source",
        )
    if ball_set is not None and ball_set.venue_id != room.venue_id:
        raise InvalidInput(_("The ball set belongs to another venue."), code="bad_ball_set")
    if ball_set is not None and ball_set.retired_at is not None:
        raise Conflict(
            _("Ball set %(name)s was replaced: it is no longer in use.") % {"name": ball_set.name},
            code="ball_set_retired",
        )
    if pace_seconds is not None and pace_seconds < Decimal("0.05"):
        raise InvalidInput(_("The pace between balls is at least 0.05 s."), code="bad_pace")
    try:
        with transaction.atomic():
            # The venue read under the room's lock: the prize settings' service holds the rooms while it
            # changes them (halls.services.venues), so a game never copies outdated percentages.
            venue = lock_room(room.pk).venue
            session = GameSession.objects.filter(room=room, closed_at__isnull=True).first()
            if session is None:
                raise Conflict(
                    _("Room %(name)s has no open session: open one with its checks first.")
                    % {"name": room.name},
                    code="no_session",
                )
            number = (session.games.aggregate(n=Max("number"))["n"] or 0) + 1
            game = Game.objects.create(
                room=room,
                session=session,
                number=number,
                draw_source=draw_source,
                pace_seconds=pace_seconds or room.ball_pace_seconds,
                ball_set=ball_set or ballsets.default_for(venue),
                draw_device=devices.main_device(room, draw_source),
                line_percent=venue.line_percent,
                bingo_percent=venue.bingo_percent,
                created_at=timezone.now(),
            )
            # Before its sales open, an RNG game's seed is committed and the commitment published.
            commitments.commit(game=game, actor=actor)
            view = readmodels.draw_view(game)
            draw_proof = DrawProof(
                verifiable=view["verifiable"], commitment=view["commitment"], url=view["url"]
            )
            shown = GameCreated(**step(game), draw_source=draw_source, draw=draw_proof)
            audited = {"draw_source": draw_source, "commitment": game.draw_commitment}
            record(game, actor, EventType.GAME_CREATED, audited, shown)
    except IntegrityError as exc:
        raise Conflict(
            _("Room %(name)s already has a game in play.") % {"name": room.name}, code="game_in_play"
        ) from exc
    return game


def offered_series(game: Game) -> list[OfferedSeries]:
    """S3: the series the hall sells, with their face value and size: the venue's series, by code."""
    rows = CardSeries.objects.filter(venue_id=game.room.venue_id).order_by("code")
    return [OfferedSeries(series=s.code, face_value=str(s.face_value), cards=s.card_count) for s in rows]


def _first_sale_of_session(game: Game) -> bool:
    """No earlier game of the session went on sale: none is past "scheduled" but one voided before its
    sale, and none announced the series (a game voided on sale did)."""
    earlier = Game.objects.filter(session_id=game.session_id, number__lt=game.number)
    for state, announcement in earlier.values_list("state", "announcement"):
        if "offered" in (announcement or {}) or state not in (GameState.SCHEDULED, GameState.VOID):
            return False
    return True


def open_sales(*, game: Game, actor: Actor) -> Game:
    """Open the sale; before the session's first sale, announce the series on sale and their face value
    (spec §2.7 S3): kept in the game's announcement, shown on the screens and said on the audio screen."""
    with transaction.atomic():
        game = lock_game(game.pk)
        transition(game, game.open_sales, gettext_noop("open sales"))
        offered = offered_series(game) if _first_sale_of_session(game) else []
        said = spoken.series_clips(offered) if offered else []
        if offered:
            game.announcement = {**game.announcement, "offered": offered, "offered_voice": said}
        game.save()
        shown = GameSalesOpened(**step(game), offered=offered, voice=said)
        record(game, actor, EventType.GAME_SALES_OPENED, {"offered": offered} if offered else {}, shown)
    return game


def sales_by_series(game: Game) -> list[SeriesSales]:
    rows = (
        SoldCard.objects.filter(game=game)
        .values_list("card__series__code", "card__series__face_value", "card__serial")
        .order_by("card__series__code", "card__serial")
    )
    grouped: dict[tuple[str, Decimal], list[int]] = {}
    for code, face_value, serial in rows:
        grouped.setdefault((code, face_value), []).append(serial)
    return [
        SeriesSales(series=code, face_value=face, ranges=contiguous_ranges(serials))
        for (code, face), serials in grouped.items()
    ]


def close_sales(*, game: Game, actor: Actor) -> Game:
    """Count the sales, fix the Line and Bingo prizes and announce them (spec §2.7 S5–S8)."""
    with transaction.atomic():
        game = lock_game(game.pk)
        hooks.refuse_relayed(game)
        transition(game, game.close_sales, gettext_noop("close sales"))
        sold = sales_by_series(game)
        cards = sum(s.cards for s in sold)
        if cards == 0:
            raise Conflict(
                _("Game %(number)s has no cards sold: sell some or void it.") % {"number": game.number},
                code="nothing_sold",
            )
        # The draw's commitment locked now: its rank comes before the programs' pools (halls.locks).
        commitments.lock(game=game)
        total = sum((s.face_value * s.cards for s in sold), Decimal("0"))
        line = prize_from_sales(total, game.line_percent)
        bingo = prize_from_sales(total, game.bingo_percent)
        game.cards_sold = cards
        game.sales_total = total
        game.line_prize = line.amount
        game.bingo_prize = bingo.amount
        game.prize_rounding_residue = line.residue + bingo.residue
        # The game's start for the scheduled prizes (fixed here: announced before the first ball, TB-41).
        game.sales_closed_at = program_clock.venue_now(game.room.venue_id)
        offered = {k: v for k, v in game.announcement.items() if k in ("offered", "offered_voice")}
        game.announcement = {
            **offered,
            "formula": sales_formula(sold),
            "series": [
                {
                    "series": s.series,
                    "face_value": str(s.face_value),
                    "cards": s.cards,
                    "ranges": [list(r) for r in s.ranges],
                }
                for s in sold
            ],
            "cards_sold": cards,
            "sales_total": str(total),
            "line_prize": str(line.amount),
            "bingo_prize": str(bingo.amount),
        }
        # Fund the prize programs and announce those in play, before the row says "sales closed" (the
        # pools' open-play guard looks for games in play; a version change in force now syncs its rate).
        game.announcement["programs"] = programs.sales_closed(game=game, actor=actor)
        # The sold set is frozen (the game is locked): the balls of a committed draw depend on its digest,
        # fixed here.
        commitments.close_sales(game=game, actor=actor)
        # What the audio screen says of it (S6–S8): the formula, the prizes, the max balls, as clips.
        game.announcement["voice"] = spoken.announcement_clips(game.announcement)
        game.save()
        # The sold set is frozen now: the winner detector's index is built once, here.
        detection.sales_closed(game)
        announced = {"announcement": game.announcement}
        shown = GameSalesClosed(**step(game), announcement=game.announcement)
        record(game, actor, EventType.GAME_SALES_CLOSED, announced, shown)
        # An interconnected prize's contribution, written with the close (after the audit entry: its
        # outbox number is the last lock taken, halls.locks.Rank.STREAM).
        hooks.sales_closed(game)
    return game


def start_draw(*, game: Game, actor: Actor) -> Game:
    with transaction.atomic():
        game = lock_game(game.pk)
        hooks.refuse_relayed(game)
        transition(game, game.start_draw, gettext_noop("start the draw"))
        game.draw_started_at = timezone.now()
        game.save()
        shown = GameDrawStarted(**step(game), draw_source=game.draw_source)
        record(game, actor, EventType.GAME_DRAW_STARTED, {"draw_source": game.draw_source}, shown)
        draw.schedule_next_ball(game)
    return game


def pause_draw(*, game: Game, actor: Actor) -> Game:
    with transaction.atomic():
        game = lock_game(game.pk)
        transition(game, game.pause, gettext_noop("pause the draw"))
        game.save()
        record(
            game, actor, EventType.GAME_PAUSED, {"by_claim": False}, GamePaused(**step(game), by_claim=False)
        )
    return game


def resume_draw(*, game: Game, actor: Actor) -> Game:
    with transaction.atomic():
        game = lock_game(game.pk)
        if game.claim_window:
            raise Conflict(
                _("Confirm the %(claim_window)s claims (any more %(claim_window)ss?) before resuming.")
                % {"claim_window": game.claim_window},
                code="claims_pending",
            )
        transition(game, game.resume, gettext_noop("resume the draw"))
        game.paused_by_claim = False
        game.save()
        record(game, actor, EventType.GAME_RESUMED, {}, step(game))
        draw.schedule_next_ball(game)
    return game


VOID_MESSAGE_MAX = 200


def void_game(*, game: Game, actor: Actor, reason: str, public_message: str = "") -> Game:
    """Void a live game. `reason` is internal (audit, recall, the caller's console); the room's screens
    get only `public_message`, the caller's words for the hall (none: the screens say the game is void)."""
    reason = reason.strip()
    message = " ".join(public_message.split())
    if not reason:
        raise InvalidInput(_("Voiding a game needs a reason."), code="reason_required")
    if len(message) > VOID_MESSAGE_MAX:
        raise InvalidInput(
            _("The message for the screens is at most %(max)s characters.") % {"max": VOID_MESSAGE_MAX},
            code="message_too_long",
        )
    with transaction.atomic():
        game = lock_game(game.pk)
        transition(game, game.void, gettext_noop("void it"))
        game.void_reason = reason
        game.void_message = message
        game.closed_at = timezone.now()
        game.claim_window = ""
        game.save()
        audited = {"reason": reason, "message": message}
        record(game, actor, EventType.GAME_VOIDED, audited, GameVoided(**step(game), message=message))
        hooks.game_ended(game)  # an interconnected prize hears the void with it
        commitments.game_ended(game)  # the seed revealed once the void commits
        # The caller's consoles hear the reason on the room's staff stream (the public one never has it).
        told = GameVoidReason(game=game.pk, reason=reason)
        events.emit(console.staff_stream(game.room_id), EventType.GAME_VOID_REASON, told)
    return game


def session_close_guard(session: GameSession) -> str | None:
    live = session.games.exclude(state__in=[GameState.CLOSED, GameState.VOID]).first()
    if live is None:
        return None
    return _("game %(number)s is still %(state)s") % {
        "number": live.number,
        "state": GameState(live.state).label.lower(),
    }


def between_games_guard(venue: Venue) -> str | None:
    """A venue's prize percentages change only with no game in play (halls.services.venues): a game copies
    them when it is created, so a scheduled one counts too."""
    live = (
        Game.objects.filter(room__venue=venue)
        .exclude(state__in=[GameState.CLOSED, GameState.VOID])
        .select_related("room")
        .order_by("pk")
        .first()
    )
    if live is None:
        return None
    return f"game {live.number} in {live.room.name} is still {GameState(live.state).label.lower()}"
