"""A hand at a casino table, against its pool: open, register bets, register cards, settle, or void.

- open_hand: one open hand per table; the pool's level rows are share-locked meanwhile, so a parameter
  change either sees the open hand (open-play guard) or happened before it.
- register_bets (services.bets): seats' pool bets, each contributing once under a key per (table, hand,
  seat); written alone or, outside a transaction on PostgreSQL, grouped with other tables' calls.
- register_cards: each seat's cards (parsed, counted, one deck per poker hand), ranked by the pack's
  ordering; an extra card bought after the pool bet forfeits it where the pack says so (JP-EU11-09).
- settle_hand: every standing pool bet with cards goes to the engine's award_hand ONCE; the payouts
  (whole cents) are recorded per seat. Settling twice is a Conflict.
- void_hand: a misdeal: no payouts; contributions already made stay in the pool's append-only ledger
  (a refund of pool bets is an authorised meter correction of the engine, outside this service).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max, Sum
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from halls.cashier.models import PayableKind
from halls.cashier.services import payables
from halls.cashier.services import readmodels as cashier_readmodels
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import (
    EventType,
    HandCardsRegistered,
    HandOpened,
    HandSettled,
    HandVoided,
    PaidSeat,
    SeatCardsShown,
    SeatForfeit,
)
from jackpots import engine
from jackpots.models import Pool
from jackpots.poker import Card
from jackpots.rulepacks import RulePack
from jackpots.services.awards import award_hand
from jackpots.services.locks import hold_pool, lock_levels
from jackpots.services.readmodels.screens import CATEGORY_LABELS
from jackpots.sources import PoolSource
from jackpots.tables import rules
from jackpots.tables.models import (
    SOURCE_TYPE,
    CasinoTable,
    Hand,
    HandState,
    SeatCards,
    SeatPayout,
    TableGame,
    TableState,
)
from jackpots.tables.services.bets import register_bets as register_bets  # this module's door to it
from jackpots.tables.services.changes import head, record
from jackpots.tables.services.locks import lock_hand, lock_table
from jackpots.tables.services.refusals import require_open
from jackpots.tables.services.table_pool import pool_of, table_pack

MAX_KEY = 80


# --- open -----------------------------------------------------------------------------------------------


def open_hand(*, table: CasinoTable, actor: User, idempotency_key: str | None = None) -> Hand:
    """Start the table's next hand. A retry with the same key answers with the hand it opened."""
    key = (idempotency_key or "").strip() or None
    if key is not None and len(key) > MAX_KEY:
        raise InvalidInput(
            _("An idempotency key has at most %(max_key)s characters.") % {"max_key": MAX_KEY},
            code="bad_idempotency_key",
        )
    with transaction.atomic():
        table = lock_table(table.pk)
        if key is not None:
            previous = Hand.objects.filter(table=table, idempotency_key=key).first()
            if previous is not None:
                previous.table = table
                return previous
        if table.state != TableState.OPEN:
            raise Conflict(
                _("%(table)s is closed for now: it takes no hands.") % {"table": table}, code="table_closed"
            )
        pool = pool_of(table)
        if not pool.active:
            raise Conflict(_("Pool %(code)s is closed.") % {"code": pool.code}, code="pool_inactive")
        current = Hand.objects.filter(table=table, state=HandState.OPEN).first()
        if current is not None:
            raise Conflict(
                _("Hand %(number)s is still open at %(table)s: settle or void it first.")
                % {"number": current.number, "table": table},
                code="hand_open",
                hand=current.pk,
            )
        hold_pool(pool.pk)
        number = (Hand.objects.filter(table=table).aggregate(n=Max("number"))["n"] or 0) + 1
        hand = Hand.objects.create(
            table=table,
            number=number,
            opened_by=actor,
            opened_at=timezone.now(),
            idempotency_key=key,
        )
        opened = HandOpened(**head(table), hand=hand.pk, number=number, pool=pool.pk)
        record(table, actor, EventType.HAND_OPENED, hand, opened)
    return hand


def open_hand_guard(pool: Pool) -> str | None:
    """The engine's open-play guard: the pool is in play while a member table has a hand open."""
    hand = (
        Hand.objects.filter(state=HandState.OPEN, table__pool=pool)
        .select_related("table")
        .order_by("pk")
        .first()
    )
    return f"hand {hand.number} is open at {hand.table}" if hand else None


# --- cards ----------------------------------------------------------------------------------------------


def _cards_of(table: CasinoTable, text: str, what: str) -> tuple[Card, ...]:
    return rules.read_cards(text, what=what, allow_duplicates=table.game == TableGame.BLACKJACK)


def register_cards(
    *,
    hand: Hand,
    actor: User,
    seats: Sequence[rules.SeatCardsInput] = (),
    community: str | Sequence[str] | None = None,
) -> Hand:
    """Register seats' final cards (and a tripóquer table's community cards), ranked by the pack.

    Only seats with a pool bet register cards (the pool pays on the player's cards alone). All or
    nothing; a seat registered before with the same cards is a retry, with other cards a Conflict.
    """
    if not seats and not community:
        raise InvalidInput(_("Give the seats' cards or the community cards."), code="no_cards")
    numbers = [s.seat for s in seats]
    if len(set(numbers)) != len(numbers):
        raise InvalidInput(_("A seat appears twice in the request."), code="duplicate_seat")
    with transaction.atomic():
        hand = lock_hand(hand.pk)
        table = hand.table
        require_open(hand, gettext_noop("take cards"))
        pack = table_pack(table)
        wants_community = rules.community_cards_for(pack, table.game)
        if community and not wants_community:
            raise InvalidInput(
                _("%(table)s shows no community cards.") % {"table": table}, code="no_community_cards"
            )
        shared = rules.read_community(pack, table.game, community)
        if hand.community_cards and shared and rules.cards_text(shared) != hand.community_cards:
            raise Conflict(
                _("Hand %(number)s's community cards are %(community_cards)s already.")
                % {"number": hand.number, "community_cards": hand.community_cards},
                code="cards_already_registered",
            )
        bets = {b.seat: b for b in hand.bets.all()}
        known = {c.seat: c for c in hand.cards.all()}
        read: dict[int, rules.ReadHand] = {}
        for entry in seats:
            rules.check_seat(entry.seat, table.seats)
            seat_hand = rules.read_seat(pack, table.game, entry)
            if entry.seat not in bets:
                raise Conflict(
                    _("Seat %(seat)s has no pool bet in hand %(number)s: its cards win nothing.")
                    % {"seat": entry.seat, "number": hand.number},
                    code="no_pool_bet",
                    seat=entry.seat,
                )
            previous = known.get(entry.seat)
            if previous is not None:
                same = (previous.cards, previous.discard, bets[entry.seat].extra_card) == (
                    rules.cards_text(seat_hand.cards),
                    seat_hand.discard,
                    seat_hand.extra_card,
                )
                if not same:
                    raise Conflict(
                        _("Seat %(seat)s's cards are registered already in hand %(number)s.")
                        % {"seat": entry.seat, "number": hand.number},
                        code="cards_already_registered",
                        seat=entry.seat,
                    )
                continue
            read[entry.seat] = seat_hand
        community_cards = shared or (
            rules.read_cards(hand.community_cards, what="Community cards", allow_duplicates=False)
            if hand.community_cards
            else ()
        )
        everyone = {seat: _cards_of(table, row.cards, f"Seat {seat}") for seat, row in known.items()}
        everyone.update({seat: h.cards for seat, h in read.items()})
        rules.check_one_deck(table.game, everyone, community_cards)
        new_community = bool(shared) and not hand.community_cards
        if not read and not new_community:
            return hand  # a retry: nothing written

        at = timezone.now()
        rows = []
        forfeited = []
        for seat, seat_hand in sorted(read.items()):
            rank = None
            if not wants_community or community_cards:
                rank = rules.rank_seat(pack, table.game, seat_hand.cards, community_cards)
            rows.append(
                SeatCards(
                    hand=hand,
                    seat=seat,
                    cards=rules.cards_text(seat_hand.cards),
                    discard=seat_hand.discard,
                    category=rank.category.value if rank else "",
                    rank=str(rank) if rank else "",
                    registered_by=actor,
                    registered_at=at,
                )
            )
            if seat_hand.extra_card:
                bet = bets[seat]
                bet.extra_card = True
                reason = rules.forfeits(pack, extra_card=True)
                if reason and not bet.forfeited:
                    bet.forfeited = True
                    bet.forfeit_reason = reason
                    forfeited.append(seat)
                bet.save(update_fields=["extra_card", "forfeited", "forfeit_reason"])
        SeatCards.objects.bulk_create(rows)
        # The table's head written out: a ** of `head` would not let the optional keys follow (mypy).
        data = HandCardsRegistered(
            table=table.pk, table_number=table.number, hand=hand.pk, number=hand.number
        )
        if new_community:
            hand.community_cards = rules.cards_text(shared)
            hand.save(update_fields=["community_cards"])
            data["community_cards"] = hand.community_cards
            _rank_waiting(pack, table, hand, community_cards)
        if rows:
            data["cards"] = [
                SeatCardsShown(seat=r.seat, cards=r.cards, discard=r.discard, rank=r.rank) for r in rows
            ]
        if forfeited:
            data["forfeited"] = [SeatForfeit(seat=s, reason=rules.EXTRA_CARD_FORFEIT) for s in forfeited]
        record(table, actor, EventType.HAND_CARDS_REGISTERED, hand, data)
    return hand


def _rank_waiting(pack: RulePack, table: CasinoTable, hand: Hand, community: Sequence[Card]) -> None:
    """Once the community cards are in, rank the seats registered before them."""
    for row in SeatCards.objects.filter(hand=hand, category=""):
        rank = rules.rank_seat(pack, table.game, _cards_of(table, row.cards, f"Seat {row.seat}"), community)
        row.category = rank.category.value if rank else ""
        row.rank = str(rank) if rank else ""
        row.save(update_fields=["category", "rank"])


# --- settle and void ------------------------------------------------------------------------------------


def _winners(pack: RulePack, table: CasinoTable, hand: Hand) -> list[engine.Winner]:
    """Every seat whose pool bet stands and whose cards are registered, ranked by the pack."""
    bets = {b.seat: b for b in hand.bets.all()}
    community = (
        rules.read_cards(hand.community_cards, what="Community cards", allow_duplicates=False)
        if hand.community_cards
        else ()
    )
    if rules.community_cards_for(pack, table.game) and not community and hand.cards.exists():
        raise Conflict(
            _("Hand %(number)s needs its %(community_cards)s community cards before it settles.")
            % {"number": hand.number, "community_cards": pack.community_cards},
            code="community_cards_missing",
        )
    winners = []
    for row in hand.cards.order_by("seat"):
        bet = bets[row.seat]
        if bet.forfeited or not pack.pool_bet_stands(
            made_initial_bet=bet.initial_bet > 0, bought_extra_card=bet.extra_card
        ):
            continue
        rank = rules.rank_seat(pack, table.game, _cards_of(table, row.cards, f"Seat {row.seat}"), community)
        if rank is not None:
            winners.append(engine.Winner(row.seat, rank, row.discard))
    return winners


def settle_hand(*, hand: Hand, actor: User) -> Hand:
    """Pay the hand's pool prizes through the engine (one award_hand call) and record them per seat."""
    with transaction.atomic():
        hand = lock_hand(hand.pk)
        table = hand.table
        require_open(hand, gettext_noop("settle it"))
        pool = pool_of(table)
        pack = table_pack(table, pool)
        if rules.is_manual_total(pack) and hand.manual_total is None and hand.bets.exists():
            raise Conflict(
                _("Enter hand %(number)s's total jackpot bets (b.1) before settling it.")
                % {"number": hand.number},
                code="manual_total_missing",
            )
        winners = _winners(pack, table, hand)
        result = None
        if winners:
            # The award's lock (the pool's levels), then the accounts its payables post to, then the audit.
            lock_levels(pool.pk)
            payables.hold_award_accounts([table.venue_id])
            result = award_hand(
                pool=pool,
                winners=winners,
                idempotency_key=rules.hand_award_key(table.pk, hand.pk),
                actor=actor,
                context={
                    "table": table.pk,
                    "table_name": table.name,
                    "table_number": table.number,
                    "hand": hand.number,
                    "source": PoolSource.of(SOURCE_TYPE, table.pk),
                },
            )
        payouts = [
            SeatPayout(
                hand=hand,
                seat=int(line.seat),
                order=line.order,
                category=line.category,
                discard=line.discard,
                amount=line.amount,
                from_meter=line.from_meter,
                from_operator=line.from_operator,
                basis=line.basis,
                note=line.note[:200],
                award_id=line.award_id,
            )
            for line in (result.lines if result else ())
        ]
        SeatPayout.objects.bulk_create(payouts)
        _payables(table, hand, payouts, actor)
        hand.state = HandState.SETTLED
        hand.settled_at = timezone.now()
        hand.settled_by = actor
        if result is not None and result.settlement_id is not None:
            hand.settlement_id = result.settlement_id
            hand.meter_before = result.meter_before
            hand.meter_after_payouts = result.meter_after_payouts
            hand.meter_after = result.meter_after
        hand.save(
            update_fields=[
                "state",
                "settled_at",
                "settled_by",
                "settlement",
                "meter_before",
                "meter_after_payouts",
                "meter_after",
            ]
        )
        record(
            table,
            actor,
            EventType.HAND_SETTLED,
            hand,
            HandSettled(
                **head(table),
                hand=hand.pk,
                number=hand.number,
                settlement=result.settlement_id if result else None,
                meter_before=result.meter_before if result else None,
                meter_after_payouts=result.meter_after_payouts if result else None,
                meter_after=result.meter_after if result else None,
                payouts=[
                    PaidSeat(seat=p.seat, category=p.category, discard=p.discard, amount=p.amount)
                    for p in payouts
                ],
                total_paid=sum((p.amount for p in payouts), Decimal(0)),
            ),
        )
    return hand


def _payables(table: CasinoTable, hand: Hand, payouts: list[SeatPayout], actor: User) -> None:
    """Each seat's payout waits at the cashier (a payout of 0 makes none), in the venue's language."""
    with payables.venue_language(table.venue_id):
        for p in payouts:
            category = CATEGORY_LABELS.get(p.category, p.category)
            payables.create_payable(
                venue_id=table.venue_id,
                kind=PayableKind.TABLE,
                source=cashier_readmodels.pool_award_source(p.award_id),
                description=_("Table %(number)s · seat %(seat)s · %(category)s")
                % {"number": table.number, "seat": p.seat, "category": str(category).lower()},
                amount=p.amount,
                actor=actor,
            )


def void_hand(*, hand: Hand, actor: User, reason: str) -> Hand:
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput(_("Voiding a hand needs a reason."), code="reason_required")
    with transaction.atomic():
        hand = lock_hand(hand.pk)
        require_open(hand, gettext_noop("void it"))
        hand.state = HandState.VOID
        hand.void_reason = reason
        hand.settled_at = timezone.now()
        hand.settled_by = actor
        hand.save(update_fields=["state", "void_reason", "settled_at", "settled_by"])
        contributed = hand.bets.exclude(contribution_key="").aggregate(total=Sum("pool_bet"))["total"]
        record(
            hand.table,
            actor,
            EventType.HAND_VOIDED,
            hand,
            HandVoided(
                **head(hand.table),
                hand=hand.pk,
                number=hand.number,
                reason=reason,
                # Pool bets already in the pool's ledger; refunding them is an authorised meter correction.
                contributed=(contributed or Decimal(0)) + (hand.manual_total or Decimal(0)),
            ),
        )
    return hand
