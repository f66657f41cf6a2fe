"""A venue: its room playing an interconnected prize, the outbox messages its round games owe the central,
and what it does with the central's entries on "network.<code>".

- `join_room`: the operator names the room that plays the prize (one room per venue and prize).
- `sales_closed` (bingo's game listener, at the end of close_sales): the room's game joins the oldest
  round the central opened that is still open and has no game of this venue; its contribution (the
  round's percent of the sales, split as the pool engine splits it) goes to the outbox in the same
  transaction and the game's recorded announcement names the prize and its max ball (the screens show
  them from the meter). No such round: the game plays without the prize.
- `ended` (claims' close after the Bingo, or the void): the game's result goes to the outbox with it.
- `round_opened`, `decided`, `meter` (the link's entry handlers, inside `streams.apply`): the round
  known; each winning card of this venue's halls a payable at its cashier, keyed by the central's share
  (applying an entry twice is impossible by the stream's position, and the payable's source is unique);
  the meter on the member rooms' screens.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo.network.interconnected.models import EGameRound, KnownRound, PrizeKind, RoomMembership, RoundGame
from bingo.network.interconnected.services import feed as interconnected_feed
from bingo.network.interconnected.services.payloads import card_label
from bingo.traditional.models import ClaimKind, Game, GameState, PrizeResult
from halls import events, money
from halls.actors import Actor
from halls.cashier.models import PayableKind
from halls.cashier.services import payables
from halls.errors import Conflict
from halls.eventtypes import EventType, NetworkPrizeMeter
from halls.link.kinds import LinkKind
from halls.link.services import outbox
from halls.models import Network, Room, Venue, room_stream
from halls.services import audit
from halls.services.locks import lock_audit_head


def join_room(*, room: Room, network: Network, prize_code: str, actor: Actor) -> RoomMembership:
    """The room plays the network's interconnected prize `prize_code` from its next game on."""
    if not network.venues.filter(pk=room.venue_id).exists():
        raise Conflict(
            _("%(venue)s is not in the network %(network)s.")
            % {"venue": room.venue.name, "network": network.code},
            code="not_in_network",
        )
    try:
        with transaction.atomic():
            membership = RoomMembership.objects.create(
                venue_id=room.venue_id,
                room=room,
                network=network,
                prize_code=prize_code.strip(),
                created_at=timezone.now(),
            )
            audit.record(
                venue_id=room.venue_id,
                actor=actor,
                action="network.room_joined",
                obj=membership,
                data={"room": room.pk, "network": network.code, "prize": membership.prize_code},
            )
    except IntegrityError as exc:
        raise Conflict(
            _("Another room of this venue already plays %(code)s.") % {"code": prize_code},
            code="prize_room_taken",
        ) from exc
    return membership


def open_round_for(prize_code: str, licence: str, at: datetime, taken: set[int]) -> KnownRound | None:
    """The prize's earliest round still open at `at` that names this hall and that none of its games
    (rooms' or specialities': `taken`, their round ids) has joined yet."""
    candidates = KnownRound.objects.filter(prize_code=prize_code, decided=False, closes_at__gt=at).order_by(
        "number"
    )
    return next((r for r in candidates if licence in r.halls and r.pk not in taken), None)


# A game's row in a round: a room's game (RoundGame) or an electronic speciality's (EGameRound, Gran).
JoinedRow = TypeVar("JoinedRow", RoundGame, EGameRound)


def open_round(
    rows: type[JoinedRow], *, venue_id: int, prize_code: str, licence: str, at: datetime
) -> KnownRound | None:
    """The prize's earliest round open at `at` for this hall that none of the venue's games of this kind
    (`rows`: rooms' or specialities') has joined yet."""
    taken = set(rows.objects.filter(venue_id=venue_id).values_list("round_id", flat=True))
    return open_round_for(prize_code, licence, at, taken)


def join_round(
    rows: type[JoinedRow],
    rnd: KnownRound,
    *,
    venue: Venue,
    game: Any,  # a room's Game (RoundGame) or a speciality's ElectronicGame (EGameRound)
    sales: Decimal,
    **fields: Any,
) -> JoinedRow:
    """The game (a room's or a speciality's) joins round `rnd`: its row (`rows`, with its own `fields`)
    holding the game's sales and its contribution, the round's percent of them split between the meter and the
    reserve as the pool engine splits it."""
    split = money.split_contribution(
        sales, money.rate(rnd.percent), money.rate(rnd.reserve_percent, name="reserve_percent")
    )
    return rows.objects.create(
        round=rnd,
        venue=venue,
        game=game,
        sales=sales,
        to_meter=split.to_meter,
        to_reserve=split.to_reserve,
        **fields,
    )


def sales_closed(game: Game) -> None:
    """bingo's listener at the close of sales (the game locked, its sales counted)."""
    membership = RoomMembership.objects.filter(room_id=game.room_id, active=True).first()
    if membership is None or game.sales_total is None:
        return
    venue = Venue.objects.get(pk=membership.venue_id)
    rnd = open_round(
        RoundGame,
        venue_id=membership.venue_id,
        prize_code=membership.prize_code,
        licence=venue.licence_number,
        at=timezone.now(),
    )
    if rnd is None:
        return
    row = join_round(RoundGame, rnd, venue=venue, game=game, sales=game.sales_total)
    joined = {
        "prize": rnd.prize_code,
        "name": rnd.name,
        "round": rnd.number,
        "max_ball": rnd.max_ball,
        "contribution": str(money.cents_down(row.to_meter)),
    }
    game.announcement = {**(game.announcement or {}), "network": joined}
    game.save(update_fields=["announcement"])
    audit.record(venue_id=venue.pk, actor="network", action="network.round_joined", obj=game, data=joined)
    sold = [{"series": s["series"], "ranges": s["ranges"]} for s in game.announcement.get("series", [])]
    outbox.enqueue(  # last: its number is the last lock (halls.locks.Rank.STREAM)
        venue_id=venue.pk,
        kind=LinkKind.IB_CONTRIBUTION,
        payload={
            "prize": rnd.prize_code,
            "round": rnd.number,
            "game": game.pk,
            "number": game.number,
            "sales": money.text(game.sales_total),
            "to_meter": str(row.to_meter),
            "to_reserve": str(row.to_reserve),
            "cards_sold": game.cards_sold,
            "sold": sold,
        },
    )


def ended(game: Game) -> None:
    """bingo's listener at the game's end (its Bingo confirmed, or the void): the result, once."""
    row = RoundGame.objects.filter(game=game, reported=False).select_related("round").first()
    if row is None:
        return
    ordinal = None
    cards: list[str] = []
    void = game.state == GameState.VOID
    if not void:
        bingo = PrizeResult.objects.filter(game=game, kind=ClaimKind.BINGO).first()
        if bingo is not None:
            ordinal = bingo.ordinal
            cards = sorted(
                card_label(a.claim.series.code, a.claim.serial)
                for a in bingo.awards.select_related("claim__series")
            )
    outbox.enqueue(
        venue_id=row.venue_id,
        kind=LinkKind.IB_RESULT,
        payload={
            "prize": row.round.prize_code,
            "round": row.round.number,
            "game": game.pk,
            "void": void,
            "ordinal": ordinal if cards else None,
            "cards": cards,
        },
    )
    row.reported = True
    row.save(update_fields=["reported"])


# --- the central's entries ------------------------------------------------------------------------------


def round_opened(payload: dict[str, Any]) -> None:
    KnownRound.objects.get_or_create(
        prize_code=str(payload["prize"]),
        number=int(payload["round"]),
        defaults={
            "name": str(payload["name"]),
            "percent": money.parse("percent", payload["percent"]),
            "reserve_percent": money.parse("reserve_percent", payload["reserve_percent"]),
            "max_ball": int(payload["max_ball"]),
            "halls": list(payload["halls"]),
            "closes_at": datetime.fromisoformat(payload["closes_at"]),
        },
    )


def decided(payload: dict[str, Any]) -> None:
    """The round's winning cards of this installation's halls wait at their cashiers."""
    code, number = str(payload["prize"]), int(payload["round"])
    KnownRound.objects.filter(prize_code=code, number=number).update(decided=True)
    games = {
        g.venue.licence_number: g
        for g in RoundGame.objects.filter(round__prize_code=code, round__number=number).select_related(
            "venue", "round", "game__room"
        )
    }
    mine = [s for s in payload["shares"] if s["hall"] in games]
    if not mine:
        return
    venue_ids = sorted({games[s["hall"]].venue_id for s in mine})
    payables.hold_award_accounts(venue_ids)
    for venue_id in venue_ids:  # one installation may hold several halls (the loopback): every chain first
        lock_audit_head(venue_id)
    won: dict[str, Decimal] = {}
    for share in mine:  # the decision's every share of these halls: set, so a replay sets the same
        won[share["hall"]] = won.get(share["hall"], Decimal("0.00")) + Decimal(share["amount"])
    for hall, amount in won.items():
        RoundGame.objects.filter(pk=games[hall].pk).update(prize_won=amount)
    for share in mine:
        row = games[share["hall"]]
        with payables.venue_language(row.venue_id):
            payables.create_payable(
                venue_id=row.venue_id,
                kind=PayableKind.ACCUMULATED,
                source=f"network.share:{share['id']}",
                # Like every bingo prize: the room and its game first, then the network's prize and round.
                description=_(
                    "%(room)s · Game %(game)s · Interconnected prize %(prize)s (round %(round)s)"
                    " · card %(card)s"
                )
                % {
                    "room": row.game.room.name,
                    "game": row.game.number,
                    "prize": code,
                    "round": number,
                    "card": share["card"],
                },
                amount=Decimal(share["amount"]),
                actor="network",
            )
    interconnected_feed.traditional_won(payload, games, mine)  # last: a feed number is the last lock


def meter(payload: dict[str, Any]) -> None:
    """The prize's meter on the screens of this installation's rooms that play it."""
    shown = NetworkPrizeMeter(
        prize=str(payload["prize"]),
        kind=str(payload.get("kind", PrizeKind.INTERCONNECTED)),  # an entry from before kinds: interconnected
        name=str(payload["name"]),
        amount=money.parse("amount", payload["amount"]),
        max_ball=int(payload["max_ball"]),
        at=datetime.fromisoformat(payload["at"]),
    )
    memberships = list(RoomMembership.objects.filter(prize_code=shown["prize"], active=True))
    for membership in memberships:
        membership.meter_name = shown["name"]
        membership.meter_amount = shown["amount"]
        membership.meter_max_ball = shown["max_ball"]
        membership.meter_at = shown["at"]
        membership.save(update_fields=["meter_name", "meter_amount", "meter_max_ball", "meter_at"])
        events.emit(room_stream(membership.room_id), EventType.NETWORK_PRIZE_METER, shown)
