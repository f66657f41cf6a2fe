"""A member hall's side of a simultaneous game: the allocation it received, its local game (a traditional
bingo.Game in one of its rooms, so the cashier, the ledger and the screens work as for any game), its sales
reported to the central, the central's close, balls and decisions applied, its claims verified here and
reported, its winners paid here.

Entries of the central's stream name halls by licence number: a hall acts on those naming a hall of this
installation (a venue installation has one; the loopback's one database has them all)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from bingo import cardgen, verifiable
from bingo import claims as claim_rules
from bingo.announce import contiguous_ranges, sales_formula
from bingo.network.simultaneous.models import HallAward, HallEntry, HallGame, HallGameState, PrizeKind
from bingo.network.simultaneous.services.decisions import concerns_hall, decided_view
from bingo.network.simultaneous.services.locks import lock_entry, lock_hall_game
from bingo.traditional import voice as spoken
from bingo.traditional.models import (
    Ball,
    Claim,
    DrawSource,
    Game,
    GameState,
    SaleKind,
    SaleOperation,
    SoldCard,
)
from bingo.traditional.services import claims as bingo_claims
from bingo.traditional.services import detection, draw, sales
from bingo.traditional.services import games as bingo_games
from bingo.traditional.services import series as series_services
from bingo.traditional.services.locks import lock_game
from bingo.traditional.services.steps import record, step, transition
from halls import money
from halls.cashier.models import PayableKind
from halls.cashier.services import payables
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import EventType, GameSalesClosed, PrizeAwarded
from halls.link.kinds import LinkKind
from halls.link.registry import CentralEntry
from halls.link.services import outbox
from halls.models import Room, Venue
from halls.services import audit

log = logging.getLogger("hall.simultaneous")

CENTRAL = "central"  # the actor of what the central's stream makes happen here
MAX_BALL = 90  # a network game's balls: 1-90


# --- the traditional doors stay off a hall's network game -------------------------------------

_driving: ContextVar[bool] = ContextVar("simultaneous_driving", default=False)


@contextmanager
def _driving_it() -> Iterator[None]:
    """This app's own calls into bingo's services for a hall's network game (the guard lets them by)."""
    token = _driving.set(True)
    try:
        yield
    finally:
        _driving.reset(token)


def guard(game: Game) -> str | None:
    """bingo.traditional.hooks' guard: a hall's copy of a network game is sold, drawn and claimed through
    this app only
    (its cards' allocation, the reports to the central, the central's balls and decisions), never through
    the traditional commands. A network game's copy is drawn by hand: only those are looked up."""
    if _driving.get() or game.draw_source != DrawSource.MANUAL:
        return None
    if HallGame.objects.filter(game_id=game.pk).exists():
        return _(
            "Game %(number)s is a simultaneous network game: sell, claim and play it from its network game."
        ) % {"number": game.number}
    return None


# --- the central's entries --------------------------------------------------------------------------------

# The door that applies kept entries after commit (bingo.network.simultaneous.apps registers the Celery
# task's).
_enqueue_apply: Callable[[list[int]], None] | None = None


def register_apply_enqueuer(enqueue: Callable[[list[int]], None]) -> None:
    global _enqueue_apply  # one door per process, set once at start-up
    _enqueue_apply = enqueue


def keep_entry(entry: CentralEntry) -> None:
    """The link's handler of the central's simultaneous entries: kept for each hall of this installation it
    concerns (an allocation names its hall; the rest concern the halls allocated cards of that game), then
    applied hall by hall in transactions of their own (`apply_entries`)."""
    code = str(entry.payload["game"])
    if entry.kind == LinkKind.SB_ALLOCATED:
        venues = list(
            Venue.objects.filter(licence_number=str(entry.payload["hall"])).values_list("pk", flat=True)
        )
    else:
        allocated = HallEntry.objects.filter(kind=LinkKind.SB_ALLOCATED.value, payload__game=code)
        venues = sorted(set(allocated.values_list("venue_id", flat=True)))
    now = timezone.now()
    for venue_id in venues:
        HallEntry.objects.get_or_create(
            venue_id=venue_id,
            stream=entry.stream,
            sequence=entry.sequence,
            defaults={"kind": entry.kind.value, "payload": entry.payload, "received_at": now},
        )
    if venues and _enqueue_apply is not None:
        enqueue = _enqueue_apply
        transaction.on_commit(lambda: enqueue(venues))


def apply_entries(*, venue_ids: list[int] | None = None) -> int:
    """Apply the kept entries of these halls (all of them by default), each hall's in order, one entry a
    transaction; a hall whose entry fails stops there (logged) and is tried again on the next call."""
    with _driving_it():
        return _apply_entries(venue_ids)


def _apply_entries(venue_ids: list[int] | None) -> int:
    pending = HallEntry.objects.filter(applied_at__isnull=True)
    if venue_ids is not None:
        pending = pending.filter(venue_id__in=venue_ids)
    done = 0
    for venue_id in sorted(set(pending.values_list("venue_id", flat=True))):
        ids = pending.filter(venue_id=venue_id).order_by("stream", "sequence").values_list("pk", flat=True)
        for entry_id in list(ids):
            try:
                done += _apply_one(entry_id)
            except Exception:
                log.exception(
                    "simultaneous entry %s of venue %s not applied: retried later", entry_id, venue_id
                )
                break
    return done


def stalled_halls(now: datetime | None = None, *, grace_seconds: float = 10.0) -> list[int]:
    """Halls with a kept entry not applied for `grace_seconds` (its task lost, or failing): the beat
    applies them again."""
    since = (now or timezone.now()) - timedelta(seconds=grace_seconds)
    pending = HallEntry.objects.filter(applied_at__isnull=True, received_at__lt=since)
    return sorted(set(pending.values_list("venue_id", flat=True)))


def _apply_one(entry_id: int) -> int:
    with transaction.atomic():
        entry = lock_entry(entry_id)
        if entry.applied_at is not None:
            return 0
        kind, payload = LinkKind(entry.kind), entry.payload
        if kind == LinkKind.SB_ALLOCATED:
            _allocated(entry.venue_id, entry.stream, payload)
        else:
            hall_game = HallGame.objects.filter(venue_id=entry.venue_id, code=str(payload["game"])).first()
            if hall_game is not None:
                _APPLY[kind](lock_hall_game(hall_game.pk), payload)
        entry.applied_at = timezone.now()
        entry.save(update_fields=["applied_at"])
    return 1


def _allocated(venue_id: int, stream: str, payload: dict[str, Any]) -> None:
    """The cards of the network series this hall sells."""
    HallGame.objects.get_or_create(
        venue_id=venue_id,
        code=str(payload["game"]),
        defaults={
            "network_code": stream.removeprefix("network."),
            "card_price": money.parse("card_price", payload["card_price"]),
            "sales_deadline": datetime.fromisoformat(str(payload["deadline"])),
            "seed": str(payload["seed"]),
            "generator": str(payload["generator"]),
            "rederived_strips": payload["rederived"],
            "strips": int(payload["strips"]),
            "first_serial": int(payload["first"]),
            "last_serial": int(payload["last"]),
            "faces": str(payload.get("faces", "")),
            "announcement": {
                key: payload[key]
                for key in ("line_percent", "bingo_percent", "hall_percent")
                if key in payload
            },
        },
    )


def _sales_opened(hall_game: HallGame, payload: dict[str, Any]) -> None:
    hall_game.central_open = True
    if payload.get("commitment"):  # the central's draw, committed before any card is sold (issue 28)
        hall_game.announcement = {
            **hall_game.announcement,
            "draw": {"commitment": str(payload["commitment"])},
        }
    hall_game.save(update_fields=["central_open", "announcement"])
    _open_if_ready(hall_game)


def _open_if_ready(hall_game: HallGame) -> None:
    if hall_game.state == HallGameState.ALLOCATED and hall_game.central_open and hall_game.game_id:
        assert hall_game.game is not None
        bingo_games.open_sales(game=hall_game.game, actor=CENTRAL)
        hall_game.state = HallGameState.SELLING
        hall_game.save(update_fields=["state"])


def _sales_closed(hall_game: HallGame, payload: dict[str, Any]) -> None:
    """The central's close: the sales it counted are the game. Cards sold here that it did not count are
    refunded before play (RECONCILING, the cashier's `refund_unconfirmed`); otherwise play starts."""
    if hall_game.state not in (HallGameState.ALLOCATED, HallGameState.SELLING):
        return
    mine = payload["halls"].get(hall_game.venue.licence_number, {})
    hall_game.confirmed_operations = [int(op) for op in mine.get("operations", [])]
    hall_game.announcement = {
        **hall_game.announcement,
        **{k: payload[k] for k in ("cards_sold", "sales_total", "line_prize", "bingo_prize", "hall_prize")},
        "hall_cards": mine.get("cards", 0),
        "hall_amount": mine.get("amount", "0.00"),
    }
    if isinstance(payload.get("draw"), dict) and isinstance(hall_game.announcement.get("draw"), dict):
        # The digest of the network's sales as the central fixed them: the balls follow from it and the seed.
        hall_game.announcement["draw"] = {
            **hall_game.announcement["draw"],
            "sales_digest": str(payload["draw"]["sales_digest"]),
            "cards": int(payload["draw"]["cards"]),
        }
    if hall_game.game_id is None:  # never placed in a room: nothing sold here
        hall_game.state = HallGameState.CLOSED
        hall_game.save()
        return
    hall_game.save()
    if unconfirmed_serials(hall_game):
        hall_game.state = HallGameState.RECONCILING
        hall_game.save(update_fields=["state"])
    else:
        _play(hall_game)


def _ball(hall_game: HallGame, payload: dict[str, Any]) -> None:
    ordinal, number = int(payload["ordinal"]), int(payload["number"])
    if ordinal == len(hall_game.balls) + 1:
        hall_game.balls = [*hall_game.balls, number]
        hall_game.save(update_fields=["balls"])
    if hall_game.state == HallGameState.PLAYING:
        _catch_up(hall_game)


def _decided(hall_game: HallGame, payload: dict[str, Any]) -> None:
    """A prize the central decided. The network's Line and Bingo (and this hall's own prize) are shown won on
    this hall's screens and consoles wherever they were won, with where (the winners' halls): the local game
    takes the decision (its Line won at the decision's ball) and its screens hear it, winners here or not.
    This hall's winners' shares become payables here (once each)."""
    kind = PrizeKind(str(payload["prize"]))
    ordinal = int(payload["ordinal"])
    if kind == PrizeKind.LINE and hall_game.line_won_at is None:
        hall_game.line_won_at = ordinal
        hall_game.save(update_fields=["line_won_at"])
    if hall_game.game is None or not concerns_hall(hall_game, payload):
        return  # not placed in a room (nothing shows it), or another hall's own prize
    game = lock_game(hall_game.game.pk)
    if kind == PrizeKind.LINE and game.line_won_at is None:
        game.line_won_at = ordinal
        game.save(update_fields=["line_won_at"])
    mine = [w for w in payload["winners"] if w["hall"] == hall_game.venue.licence_number]
    if mine:
        payables.hold_award_accounts([hall_game.venue_id])
    for winner in mine:
        claim = Claim.objects.select_related("series", "game__room").get(pk=int(winner["claim"]), game=game)
        award, made = HallAward.objects.get_or_create(
            hall_game=hall_game,
            kind=kind,
            claim=claim,
            defaults={"amount": Decimal(str(winner["amount"])), "decided_at": timezone.now()},
        )
        if made:
            _payable(hall_game, award)
    shown = decided_view(hall_game, payload)
    record(game, CENTRAL, EventType.PRIZE_AWARDED, shown, PrizeAwarded(**step(game), **shown))
    if kind == PrizeKind.HALL and str(payload["scope"]) == hall_game.venue.licence_number:
        # This hall's Bingo is decided (the network Bingo with it or before): nothing is left to win
        # here, so its game closes now and frees the room, while the draw goes on for the other halls.
        _close_local(hall_game)


def _payable(hall_game: HallGame, award: HallAward) -> None:
    with payables.venue_language(hall_game.venue_id):
        labels = {
            PrizeKind.LINE: _("Network Line"),
            PrizeKind.BINGO: _("Network Bingo"),
            PrizeKind.HALL: _("Hall Bingo"),
        }
        card = bingo_claims.card_label(award.claim.series.code, award.claim.serial)
        game = award.claim.game  # the room's game mirroring the network game (the claim's own)
        payables.create_payable(
            venue_id=hall_game.venue_id,
            kind=PayableKind.LINE if award.kind == PrizeKind.LINE else PayableKind.BINGO,
            source=f"simultaneous:{hall_game.code}:{award.kind}:{award.claim_id}",
            # Like every bingo prize: the room and its game first (the network game's code beside it).
            description=_("%(room)s · Game %(number)s (simultaneous %(code)s) · %(prize)s · card %(card)s")
            % {
                "room": game.room.name,
                "number": game.number,
                "code": hall_game.code,
                "prize": labels[PrizeKind(award.kind)],
                "card": card,
            },
            amount=award.amount,
            actor=CENTRAL,
        )


def _game_closed(hall_game: HallGame, payload: dict[str, Any]) -> None:
    """The network game is over: the local game closes (no claim after it, TB-12)."""
    _close_local(hall_game)


def _close_local(hall_game: HallGame) -> None:
    """The hall's game closes (at its own Bingo's decision, or the network game's end; once)."""
    if hall_game.state != HallGameState.PLAYING or hall_game.game is None:
        return
    game = lock_game(hall_game.game.pk)
    if game.state == GameState.DRAWING:
        transition(game, game.pause, gettext_noop("pause"))
    transition(game, game.close, gettext_noop("close"))
    game.closed_at = timezone.now()
    game.claim_window = ""
    game.save()
    record(game, CENTRAL, EventType.GAME_CLOSED, {}, step(game))
    hall_game.state = HallGameState.CLOSED
    hall_game.save(update_fields=["state"])


def _draw_revealed(hall_game: HallGame, payload: dict[str, Any]) -> None:
    """The central revealed its draw's seed: checked here against the commitment this hall received before
    its sales opened (not the one the reveal names) and the balls it received; the verdict kept and
    audited in the hall's chain."""
    shown = hall_game.announcement.get("draw")
    if not isinstance(shown, dict) or not shown.get("commitment") or shown.get("seed"):
        return  # a game whose commitment this hall never received, or revealed already
    seed_text = str(payload.get("seed", ""))
    try:
        found = verifiable.verify(
            verifiable.seed_from_hex(seed_text),
            shown["commitment"],
            shown.get("sales_digest") or "",
            hall_game.balls,
            MAX_BALL,
        )
        verdict = {"verified": found.verified, "reason": found.reason, "text": str(found)}
    except ValueError as exc:  # a seed or digest that is not 64 hex digits
        verdict = {"verified": False, "reason": "unreadable", "text": str(exc)}
    hall_game.announcement = {
        **hall_game.announcement,
        "draw": {**shown, "seed": seed_text, "verification": verdict},
    }
    hall_game.save(update_fields=["announcement"])
    audit.record(
        venue_id=hall_game.venue_id,
        actor=CENTRAL,
        action="simultaneous.draw_checked",
        obj=hall_game,
        data={"game": hall_game.code, "seed": seed_text, "balls": len(hall_game.balls), **verdict},
    )


_APPLY: dict[LinkKind, Callable[[HallGame, dict[str, Any]], None]] = {
    LinkKind.SB_SALES_OPENED: _sales_opened,
    LinkKind.SB_SALES_CLOSED: _sales_closed,
    LinkKind.SB_BALL: _ball,
    LinkKind.SB_DECIDED: _decided,
    LinkKind.SB_GAME_CLOSED: _game_closed,
    LinkKind.SB_DRAW_REVEALED: _draw_revealed,
}


# --- the hall's own commands ------------------------------------------------------------------------------


def place(*, hall_game: HallGame, room: Room, actor: User) -> HallGame:
    """Put the network game in a room of this hall: its local copy of the network series (the master
    cards, recomputed from the central's seed) and a local game fed by the central's draw; its sales open
    once the central's have (each step its own service's transaction)."""
    with _driving_it():
        return _place(hall_game, room, actor)


def _place(hall_game: HallGame, room: Room, actor: User) -> HallGame:
    if room.venue_id != hall_game.venue_id:
        raise InvalidInput(_("The room belongs to another venue."), code="bad_room")
    if hall_game.game_id is not None or hall_game.state != HallGameState.ALLOCATED:
        raise Conflict(_("This network game is already placed in a room."), code="already_placed")
    if hall_game.sales_deadline <= timezone.now():
        raise Conflict(_("The sales deadline of this network game has passed."), code="deadline_passed")
    if hall_game.generator != cardgen.V2:
        raise Conflict(
            _("The cards made here differ from the central's master cards."), code="master_cards_differ"
        )
    # Only this hall's run of the network series (300 halls × 10 strips would be 18,000 strips each),
    # its faces checked against the central's digest of the same run; all in one transaction with the
    # local game, so a refusal leaves nothing behind.
    with transaction.atomic():
        game = bingo_games.create_game(room=room, actor=actor, draw_source=DrawSource.MANUAL)
        series, faces = series_services.create_series_share(
            venue=hall_game.venue,
            code=f"SB-{hall_game.code}",
            face_value=hall_game.card_price,
            strips=hall_game.strips,
            first_serial=hall_game.first_serial,
            last_serial=hall_game.last_serial,
            seed=hall_game.seed,
            rederived=hall_game.rederived_strips,
            actor=actor,
        )
        if hall_game.faces and faces != hall_game.faces:
            raise Conflict(
                _("The cards made here differ from the central's master cards."), code="master_cards_differ"
            )
    with transaction.atomic():
        hall_game = lock_hall_game(hall_game.pk)
        if hall_game.game_id is not None:
            raise Conflict(_("This network game is already placed in a room."), code="already_placed")
        hall_game.series, hall_game.game = series, game
        hall_game.save(update_fields=["series", "game"])
        _open_if_ready(hall_game)
    return hall_game


def _selling(hall_game: HallGame) -> Game:
    if hall_game.state != HallGameState.SELLING or hall_game.game is None:
        raise Conflict(
            _("This hall is not selling cards of network game %(code)s.") % {"code": hall_game.code},
            code="not_selling",
        )
    if timezone.now() >= hall_game.sales_deadline:
        # Past the deadline a hall sells no more, whether or not it heard the central's close.
        raise Conflict(
            _("The sales of network game %(code)s are closed.") % {"code": hall_game.code},
            code="sales_closed",
        )
    return hall_game.game


def _check_allocated(hall_game: HallGame, first: int, last: int) -> None:
    if not hall_game.first_serial <= first <= last <= hall_game.last_serial:
        raise Conflict(
            _("Cards %(first)s–%(last)s are not allocated to this hall (it has %(a)s–%(b)s).")
            % {"first": first, "last": last, "a": hall_game.first_serial, "b": hall_game.last_serial},
            code="card_not_allocated",
        )


def sell(
    *, hall_game: HallGame, first: int, last: int, actor: User, idempotency_key: str | None = None
) -> SaleOperation:
    """Sell a range of this hall's cards (the traditional sale: the cashier's drawer, the ledger) and
    report it to the central in the same transaction."""
    return _sell_or_return(hall_game, SaleKind.SELL, first, last, actor, idempotency_key)


def return_cards(
    *, hall_game: HallGame, first: int, last: int, actor: User, idempotency_key: str | None = None
) -> SaleOperation:
    return _sell_or_return(hall_game, SaleKind.RETURN, first, last, actor, idempotency_key)


def _sell_or_return(
    hall_game: HallGame, kind: str, first: int, last: int, actor: User, idempotency_key: str | None
) -> SaleOperation:
    with _driving_it(), transaction.atomic():
        hall_game = lock_hall_game(hall_game.pk)
        game = _selling(hall_game)
        _check_allocated(hall_game, first, last)
        assert hall_game.series is not None
        if (
            idempotency_key
            and SaleOperation.objects.filter(game=game, idempotency_key=idempotency_key).exists()
        ):
            replay = sales.sell_range if kind == SaleKind.SELL else sales.return_range
            return replay(
                game=game,
                series=hall_game.series,
                first=first,
                last=last,
                actor=actor,
                idempotency_key=idempotency_key,
            )
        do = sales.sell_range if kind == SaleKind.SELL else sales.return_range
        operation = do(
            game=game,
            series=hall_game.series,
            first=first,
            last=last,
            actor=actor,
            idempotency_key=idempotency_key,
        )
        outbox.enqueue(
            venue_id=hall_game.venue_id,
            kind=LinkKind.SB_SALE,
            payload={
                "game": hall_game.code,
                "operation": operation.pk,
                "returned": kind == SaleKind.RETURN,
                "first": first,
                "last": last,
                "cards": operation.cards,
                "amount": str(operation.amount),
            },
        )
    return operation


def confirmed_serials(hall_game: HallGame) -> set[int]:
    """The cards of this hall the central counted in the network game (its close's sale operations)."""
    held: set[int] = set()
    operations = SaleOperation.objects.filter(pk__in=hall_game.confirmed_operations).order_by("pk")
    for operation in operations:
        serials = set(range(operation.first_serial, operation.last_serial + 1))
        held = held - serials if operation.kind == SaleKind.RETURN else held | serials
    return held


def sold_serials(hall_game: HallGame) -> set[int]:
    if hall_game.game_id is None:
        return set()
    return set(SoldCard.objects.filter(game_id=hall_game.game_id).values_list("card__serial", flat=True))


def unconfirmed_serials(hall_game: HallGame) -> list[int]:
    """Cards sold here that are not in the network game: the central never counted their sale (the hall
    could not report it before the close). They are refunded, never played."""
    return sorted(sold_serials(hall_game) - confirmed_serials(hall_game))


def refund_unconfirmed(*, hall_game: HallGame, actor: User) -> list[SaleOperation]:
    """The cashier refunds the cards the central did not count (the normal return path: the drawer pays
    them back), then the hall's game plays. Those returns are the hall's own: nothing goes to the central."""
    with _driving_it(), transaction.atomic():
        hall_game = lock_hall_game(hall_game.pk)
        if hall_game.state != HallGameState.RECONCILING or hall_game.game is None or hall_game.series is None:
            raise Conflict(_("There is nothing to refund in this network game."), code="nothing_to_refund")
        ranges = contiguous_ranges(unconfirmed_serials(hall_game))
        refunds = [
            sales.return_range(game=hall_game.game, series=hall_game.series, first=a, last=b, actor=actor)
            for a, b in ranges
        ]
        _play(hall_game, [[a, b] for a, b in ranges])
    return refunds


def _report_count(hall_game: HallGame, cards: int, amount: Decimal, refunded: list[list[int]]) -> None:
    """The hall's count of its cards in play (and the cards it refunded because the central never counted
    their sale) to the central, which records it against its own count (reconciled, or the difference)."""
    outbox.enqueue(
        venue_id=hall_game.venue_id,
        kind=LinkKind.SB_RECONCILED,
        payload={"game": hall_game.code, "cards": cards, "amount": str(amount), "refunded": refunded},
    )


def _play(hall_game: HallGame, refunded: list[list[int]] | None = None) -> None:
    """Close the local sales as the central counted them, announce the network's prizes and start the
    local draw (its balls come from the central). Nothing sold here: the local game is void. The hall's
    count goes to the central first (`_report_count`)."""
    refunded = refunded or []
    assert hall_game.game is not None
    game = lock_game(hall_game.game.pk)
    sold = bingo_games.sales_by_series(game)
    cards = sum(s.cards for s in sold)
    amount = sum((s.face_value * s.cards for s in sold), Decimal("0"))
    if cards == 0:
        bingo_games.void_game(
            game=game, actor=CENTRAL, reason="simultaneous game: no card in play in this hall"
        )
        hall_game.state = HallGameState.CLOSED
        hall_game.save(update_fields=["state"])
        _report_count(hall_game, 0, amount, refunded)  # last: its number is the last lock
        return
    transition(game, game.close_sales, gettext_noop("close sales"))
    figures = hall_game.announcement
    game.cards_sold = cards
    game.sales_total = sum((s.face_value * s.cards for s in sold), Decimal("0"))
    # The local game's own Line and Bingo stay unset (nothing for the traditional confirmation to pay):
    # the network's prizes are announced, decided at the central and paid from its decisions.
    game.line_prize = game.bingo_prize = None
    game.sales_closed_at = timezone.now()
    game.announcement = {
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
        "sales_total": str(game.sales_total),
        "line_prize": str(figures["line_prize"]),
        "bingo_prize": str(figures["bingo_prize"]),
        "network": {
            "game": hall_game.code,
            "cards_sold": figures["cards_sold"],
            "sales_total": str(figures["sales_total"]),
            "hall_prize": str(figures["hall_prize"]),
        },
    }
    # What the hall's audio screen says (S6–S7): this hall's sales, the network's Line and Bingo prizes.
    game.announcement["voice"] = spoken.announcement_clips(game.announcement)
    game.save()
    detection.sales_closed(game)
    shown = GameSalesClosed(**step(game), announcement=game.announcement)
    record(game, CENTRAL, EventType.GAME_SALES_CLOSED, {"announcement": game.announcement}, shown)
    bingo_games.start_draw(game=game, actor=CENTRAL)
    hall_game.state = HallGameState.PLAYING
    hall_game.save(update_fields=["state"])
    _catch_up(hall_game)
    _report_count(hall_game, cards, amount, refunded)  # last: its number is the last lock


def _catch_up(hall_game: HallGame) -> None:
    """The central's balls the local game does not have yet, in order (none once the local game is over:
    the hall keeps the central's balls, its game takes no more)."""
    assert hall_game.game is not None
    if lock_game(hall_game.game.pk).state not in (GameState.DRAWING, GameState.PAUSED):
        return
    have = Ball.objects.filter(game_id=hall_game.game.pk).count()
    for ordinal, number in enumerate(hall_game.balls[have:], start=have + 1):
        draw.append_relayed_ball(game_id=hall_game.game.pk, ordinal=ordinal, number=number)


def claim(
    *, hall_game: HallGame, kind: str, serial: int, actor: User, idempotency_key: str | None = None
) -> Claim:
    """A player's Line or Bingo, verified here against the master card (recomputed from the series' seed)
    and the balls this hall has; a valid one is reported to the central, which decides the prize."""
    if kind not in claim_rules.ClaimKind.__members__.values():
        raise InvalidInput(_("A claim is for a line or a bingo."), code="bad_claim_kind")
    with transaction.atomic():
        hall_game = lock_hall_game(hall_game.pk)
        if hall_game.state != HallGameState.PLAYING or hall_game.game is None or hall_game.series is None:
            raise Conflict(
                _("This hall is not playing network game %(code)s.") % {"code": hall_game.code},
                code="not_playing",
            )
        game = lock_game(hall_game.game.pk)
        if idempotency_key:
            previous = Claim.objects.filter(game=game, idempotency_key=idempotency_key).first()
            if previous is not None:
                return previous
        _check_allocated(hall_game, serial, serial)
        card = hall_game.series.cards.get(serial=serial)
        balls = list(game.balls.order_by("ordinal").values_list("number", flat=True))
        sold = SoldCard.objects.filter(game=game, card=card).exists()
        line_at = hall_game.line_won_at
        verdict = claim_rules.judge_claim(
            kind=claim_rules.ClaimKind(kind),
            card=series_services.master_card(hall_game.series, serial) if sold else None,
            balls=balls,
            line_confirmed_at=line_at if line_at is not None and line_at <= len(balls) else None,
            game_closed=False,
            serial=serial,
        )
        made = bingo_claims.record_verdict(
            game=game, card=card, kind=kind, verdict=verdict, actor=actor, idempotency_key=idempotency_key
        )
        bingo_claims.announce_verdict(
            game=game, claim=made, actor=actor, master_card=card.grid if sold else None
        )
        if made.valid:
            outbox.enqueue(
                venue_id=hall_game.venue_id,
                kind=LinkKind.SB_CLAIM,
                payload={
                    "game": hall_game.code,
                    "claim": made.pk,
                    "kind": kind,
                    "serial": serial,
                    "ordinal": made.bound_ordinal,
                },
            )
    return made


def no_more_claims(*, hall_game: HallGame, actor: User) -> HallGame:
    """The hall's caller asked "¿alguna línea más? ¿algún bingo más?" after the last ball this hall has and
    nobody else claims (TB-44, S14): the answer goes to the central, whose claim window closes once every
    hall with cards in play has answered (else at its time limit). Once per ball; a repeat is a no-op."""
    with transaction.atomic():
        hall_game = lock_hall_game(hall_game.pk)
        if hall_game.state != HallGameState.PLAYING or hall_game.game is None:
            raise Conflict(
                _("This hall is not playing network game %(code)s.") % {"code": hall_game.code},
                code="not_playing",
            )
        ordinal = Ball.objects.filter(game_id=hall_game.game.pk).count()
        if hall_game.no_more_claims_at is not None and hall_game.no_more_claims_at >= ordinal:
            return hall_game
        hall_game.no_more_claims_at = ordinal
        hall_game.save(update_fields=["no_more_claims_at"])
        audit.record(
            venue_id=hall_game.venue_id,
            actor=actor,
            action="simultaneous.no_more_claims",
            obj=hall_game,
            data={"game": hall_game.code, "ordinal": ordinal},
        )
        outbox.enqueue(
            venue_id=hall_game.venue_id,
            kind=LinkKind.SB_NO_MORE_CLAIMS,
            payload={"game": hall_game.code, "ordinal": ordinal},
        )
    return hall_game


def payload_of(hall_game: HallGame) -> dict[str, Any]:
    """What a hall's page shows of its network game."""
    return {
        "game": hall_game.code,
        "network": hall_game.network_code,
        "state": hall_game.state,
        "cards": [hall_game.first_serial, hall_game.last_serial],
        "card_price": str(hall_game.card_price),
        "deadline": hall_game.sales_deadline.isoformat(),
        "balls": hall_game.balls,
        "unconfirmed": unconfirmed_serials(hall_game) if hall_game.state == HallGameState.RECONCILING else [],
        "announcement": hall_game.announcement,
    }
