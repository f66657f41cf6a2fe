"""A venue's automatic bingo in the network's Gran Línea / Gran Bingo (AB-05, AB-08): the round mechanism of
the interconnected prize (bingo.network.interconnected.services.rounds decides at the central, unchanged)
over electronic
specialities, plugged into bingo.electronic through its network hook (bingo.electronic.network_hooks).

- `join_speciality` / `leave_speciality`: the operator names the speciality's Gran prize (a gran_line /
  gran_bingo of its table) that plays the network prize (one speciality per venue and prize), or stops it.
- `joins` (the close of sales): the game joins the oldest open round of each joined prize it has no game in
  (`EGameRound`) whose wait outlasts it by `join_margin`, so its Gran prize is in play (the central opens a
  fresh round as soon as a game joins the last one:
  bingo.network.interconnected.services.prizes.ensure_round_locked);
  `sales_closed` then sends each contribution (the round's percent of the sales) through the outbox, in the
  close's transaction.
- `decided` (a ball): the hall's first completion of the Gran pattern (ordinal and cards) kept;
  `ended` (the game closed): the result through the outbox. The venue never decides the prize.
- `apply_decision` (the central's decision entry): each winning card's share of this installation's halls
  credited to the player card that bought it (ledger: pool funding -> the card), once per share
  (`GranCredit`), the terminal told (TERMINAL_PRIZE with the balance); `apply_meter`: the meter on the
  speciality's room stream (its terminals and screens), NETWORK_PRIZE_METER as the rooms get it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from functools import partial
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo.electronic.models import ECard, ElectronicGame, Speciality
from bingo.electronic.prizetable import Decision, PrizeSpec, PrizeType
from bingo.electronic.services.specialities import version_in_force
from bingo.electronic.services.steps import rules_of, tell_terminal
from bingo.network.interconnected.models import EGameRound, GranCredit, PrizeKind, SpecialityMembership
from bingo.network.interconnected.services import feed as interconnected_feed
from bingo.network.interconnected.services.locks import lock_membership
from bingo.network.interconnected.services.payloads import card_label
from bingo.network.interconnected.services.venue import join_round, open_round
from halls import events, money
from halls.actors import Actor
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, PlayerCard, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services.locks import lock_accounts
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import EventType, NetworkPrizeMeter, TerminalPrize
from halls.link.kinds import LinkKind
from halls.link.services import outbox
from halls.models import Network, Venue
from halls.services import audit
from halls.services.locks import lock_audit_head

SERIES = "E"  # an electronic card as a result names it: "E-<card id>"


def join_speciality(
    *, speciality: Speciality, network: Network, prize_code: str, table_code: str, actor: Actor
) -> SpecialityMembership:
    """The speciality's network prize `table_code` plays the network's `prize_code` from its next game on."""
    if not network.venues.filter(pk=speciality.venue_id).exists():
        raise Conflict(
            _("%(venue)s is not in the network %(network)s.")
            % {"venue": speciality.venue.name, "network": network.code},
            code="not_in_network",
        )
    rules = rules_of(version_in_force(speciality, timezone.now()))
    if not any(p.code == table_code and p.network for p in rules.prizes):
        raise InvalidInput(
            _("%(code)s is not a Gran Línea or Gran Bingo of the speciality's prize table.")
            % {"code": table_code},
            code="not_a_network_prize",
        )
    try:
        with transaction.atomic():
            membership = SpecialityMembership.objects.create(
                venue_id=speciality.venue_id,
                speciality=speciality,
                network=network,
                prize_code=prize_code.strip(),
                table_code=table_code,
                created_at=timezone.now(),
            )
            audit.record(
                venue_id=speciality.venue_id,
                actor=actor,
                action="network.speciality_joined",
                obj=membership,
                data={"speciality": speciality.pk, "network": network.code, "prize": prize_code},
            )
    except IntegrityError as exc:
        raise Conflict(
            _("Another speciality of this venue already plays %(code)s.") % {"code": prize_code},
            code="prize_room_taken",
        ) from exc
    return membership


def leave_speciality(*, membership: SpecialityMembership, actor: Actor) -> SpecialityMembership:
    """The speciality stops playing the network prize from its next close of sales on (a game that joined
    a round already plays it out and reports). Kept, inactive: its rounds' games still name it."""
    with transaction.atomic():
        membership = lock_membership(membership.pk)
        if not membership.active:
            raise Conflict(
                _("The speciality no longer plays %(code)s.") % {"code": membership.prize_code},
                code="already_left",
            )
        membership.active = False
        membership.save(update_fields=["active"])
        audit.record(
            venue_id=membership.venue_id,
            actor=actor,
            action="network.speciality_left",
            obj=membership,
            data={"speciality": membership.speciality_id, "prize": membership.prize_code},
        )
    return membership


def join_margin() -> timedelta:
    """A game joins only a round whose wait outlasts it by this much (HALL_GRAN_JOIN_MARGIN_SECONDS): its
    contribution and its result must reach the central before the round's wait ends, or they are refused
    and a winner there would go unpaid. A round closer to its end is left to the next game."""
    return timedelta(seconds=float(settings.HALL_GRAN_JOIN_MARGIN_SECONDS))


def joins(game: ElectronicGame) -> frozenset[str]:
    """The close of sales (sales counted): the game's Gran prizes that join an open round."""
    memberships = list(SpecialityMembership.objects.filter(speciality_id=game.speciality_id, active=True))
    if not memberships or not game.cards_sold or not game.sales_total:
        return frozenset()
    network_codes = {p.code for p in rules_of(game.version).prizes if p.network}
    venue = Venue.objects.get(pk=game.speciality.venue_id)
    at = timezone.now()
    joined = set()
    for membership in memberships:
        if membership.table_code not in network_codes:
            continue  # the version in force has no such prize: not played
        rnd = open_round(
            EGameRound,
            venue_id=membership.venue_id,
            prize_code=membership.prize_code,
            licence=venue.licence_number,
            at=at + join_margin(),
        )
        if rnd is None:
            continue
        join_round(
            EGameRound, rnd, venue=venue, game=game, sales=game.sales_total, table_code=membership.table_code
        )
        joined.add(membership.table_code)
    return frozenset(joined)


def _sold(game: ElectronicGame) -> list[dict[str, Any]]:
    """The game's cards as ranges of their ids: [{series "E", ranges [[first, last], ...]}]."""
    ranges: list[list[int]] = []
    for card_id in ECard.objects.filter(game=game).order_by("pk").values_list("pk", flat=True).iterator():
        if ranges and ranges[-1][1] + 1 == card_id:
            ranges[-1][1] = card_id
        else:
            ranges.append([card_id, card_id])
    return [{"series": SERIES, "ranges": ranges}]


def sales_closed(game: ElectronicGame) -> None:
    """Each round the game joined: the joining audited, then its contribution to the outbox (last)."""
    rows = list(EGameRound.objects.filter(game=game).select_related("round").order_by("pk"))
    if not rows:
        return
    sold = _sold(game)
    for row in rows:
        audit.record(
            venue_id=row.venue_id,
            actor="network",
            action="network.round_joined",
            obj=game,
            data={"prize": row.round.prize_code, "round": row.round.number, "egame": game.pk},
        )
    for row in rows:
        outbox.enqueue(
            venue_id=row.venue_id,
            kind=LinkKind.IB_CONTRIBUTION,
            payload={
                "prize": row.round.prize_code,
                "round": row.round.number,
                "game": game.pk,
                "number": game.number,
                "sales": money.text(row.sales),
                "to_meter": str(row.to_meter),
                "to_reserve": str(row.to_reserve),
                "cards_sold": game.cards_sold,
                "sold": sold,
            },
        )


def decided(game: ElectronicGame, decisions: Sequence[Decision]) -> None:
    """A ball decided the game's Gran prize(s) for this hall: its first completion (or none) kept."""
    for decision in decisions:
        EGameRound.objects.filter(game=game, table_code=decision.code, first_decided=False).update(
            first_decided=True,
            ordinal=decision.ordinal if decision.won else None,
            cards=list(decision.winners),
        )


def ended(game: ElectronicGame) -> None:
    """The game closed: each round game's result (the first completion's ordinal and cards), once."""
    for row in EGameRound.objects.filter(game=game, reported=False).select_related("round").order_by("pk"):
        cards = sorted(card_label(SERIES, card) for card in row.cards)
        outbox.enqueue(
            venue_id=row.venue_id,
            kind=LinkKind.IB_RESULT,
            payload={
                "prize": row.round.prize_code,
                "round": row.round.number,
                "game": game.pk,
                "void": False,
                "ordinal": row.ordinal if cards else None,
                "cards": cards,
            },
        )
        row.reported = True
        row.save(update_fields=["reported"])


# --- the central's entries ------------------------------------------------------------------------------


def _card_id(label: str) -> int:
    return int(label.rpartition("-")[2])


def apply_decision(payload: dict[str, Any]) -> list[GranCredit]:
    """The decision's shares won by this installation's halls' electronic cards, credited once each."""
    code, number = str(payload["prize"]), int(payload["round"])
    games = {
        g.venue.licence_number: g
        for g in EGameRound.objects.filter(round__prize_code=code, round__number=number).select_related(
            "venue", "round", "game__speciality__room", "game__version"
        )
    }
    # A share of 0.00 (a pool smaller than a cent per winning card) moves no money: nothing to credit.
    mine = [s for s in payload["shares"] if s["hall"] in games and Decimal(s["amount"]) > 0]
    done = set(GranCredit.objects.filter(share__in=[s["id"] for s in mine]).values_list("venue_id", "share"))
    mine = [s for s in mine if (games[s["hall"]].venue_id, s["id"]) not in done]
    if not mine:
        return []
    holders = {
        card: (player, terminal)
        for card, player, terminal in ECard.objects.filter(
            pk__in=[_card_id(s["card"]) for s in mine]
        ).values_list("pk", "purchase__player_card_id", "purchase__terminal_id")
    }
    accounts = {
        card.pk: books.card_account(card).pk
        for card in PlayerCard.objects.filter(pk__in={p for p, _t in holders.values()})
    }
    venue_ids = sorted({games[s["hall"]].venue_id for s in mine})
    funding = {v: books.venue_account(v, Kind.POOL_FUNDING).pk for v in venue_ids}
    lock_accounts([*accounts.values(), *funding.values()])  # id order, before any audit
    for venue_id in venue_ids:
        lock_audit_head(venue_id)
    credits = []
    told: list[TerminalPrize] = []
    for share in mine:
        row = games[share["hall"]]
        card = _card_id(share["card"])
        player, terminal = holders[card]
        amount = Decimal(share["amount"])
        posted = books.post(
            venue_id=row.venue_id,
            kind=TxKind.PRIZE_AWARD,
            key=f"gran:{code}:{number}:{share['id']}",
            legs=[ledger.debit(funding[row.venue_id], amount), ledger.credit(accounts[player], amount)],
            actor="network",
            memo=f"{code} · {number} · {row.game.speciality.name} {row.game.number}"[:200],
            data={"prize": code, "round": number, "share": share["id"], "egame": row.game_id, "card": card},
        )
        credits.append(
            GranCredit.objects.create(
                venue_id=row.venue_id,
                share=share["id"],
                round=row,
                card_id=card,
                amount=amount,
                transaction=posted.transaction,
                credited_at=timezone.now(),
            )
        )
        balance = Account.objects.get(pk=accounts[player]).balance
        told.append(
            TerminalPrize(
                terminal=terminal,
                game=row.game_id,
                code=row.table_code,
                name=rules_of(row.game.version).prize(row.table_code).name,
                ordinal=int(payload["ordinal"]),
                card=card,
                amount=amount,
                balance=balance,
            )
        )
    for prize in told:  # last: numbering an event is the last lock (halls.locks.Rank.STREAM)
        tell_terminal(prize["terminal"], EventType.TERMINAL_PRIZE, prize)
    interconnected_feed.electronic_won(payload, games, mine)  # the authority's feed, after the events
    return credits


def _table_prize(membership: SpecialityMembership) -> PrizeSpec | None:
    """The speciality's prize that plays the network prize (its table's `table_code`, the version in
    force), or None (no version in force, or it has no such prize)."""
    try:
        version = version_in_force(membership.speciality, timezone.now())
    except Conflict:
        return None
    return next((p for p in rules_of(version).prizes if p.code == membership.table_code), None)


def _kind(spec: PrizeSpec | None) -> str:
    """Gran Línea or Gran Bingo, by the type of the speciality's prize that plays it."""
    if spec is not None and spec.type is PrizeType.GRAN_BINGO:
        return PrizeKind.GRAN_BINGO.value
    return PrizeKind.GRAN_LINEA.value


def meter_view(membership: SpecialityMembership) -> NetworkPrizeMeter | None:
    """The membership's meter as the central last sent it, as a screen or terminal shows it (its kind,
    its own max ball), or None before the first meter entry."""
    if membership.meter_amount is None or membership.meter_at is None:
        return None
    spec = _table_prize(membership)
    return NetworkPrizeMeter(
        prize=membership.prize_code,
        kind=_kind(spec),
        name=membership.meter_name,
        amount=membership.meter_amount,
        max_ball=spec.max_ball if spec is not None else None,  # its own (None: the first in the network)
        at=membership.meter_at,
    )


def speciality_meters(speciality: Speciality) -> list[dict[str, Any]]:
    """The Gran meters of the speciality's network prizes (bingo.electronic's terminal snapshot asks
    through its network hook): [{prize, kind, name, amount, max_ball, at}] as the event carries them."""
    rows = SpecialityMembership.objects.filter(speciality=speciality, active=True).select_related(
        "speciality"
    )
    found = [meter_view(m) for m in rows.order_by("prize_code")]
    return [
        {**shown, "amount": money.text(shown["amount"]), "at": shown["at"].isoformat()}
        for shown in found
        if shown is not None
    ]


def apply_meter(payload: dict[str, Any]) -> None:
    """The prize's meter on the room stream of this installation's specialities that play it."""
    rows = SpecialityMembership.objects.filter(prize_code=str(payload["prize"]), active=True).select_related(
        "speciality"
    )
    for membership in rows:
        membership.meter_name = str(payload["name"])
        membership.meter_amount = money.parse("amount", payload["amount"])
        membership.meter_at = datetime.fromisoformat(payload["at"])
        membership.save(update_fields=["meter_name", "meter_amount", "meter_at"])
        shown = meter_view(membership)
        assert shown is not None
        # Numbered once the stream's entries are applied: an entry after this one (a decision) still
        # takes its account locks, which come before the events' (halls.locks.Rank).
        transaction.on_commit(partial(_emit_meter, membership.speciality.stream, shown))


def _emit_meter(stream: str, shown: NetworkPrizeMeter) -> None:
    with transaction.atomic():
        events.emit(stream, EventType.NETWORK_PRIZE_METER, shown)
