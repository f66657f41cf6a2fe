"""What the API and the croupier's console show of a table and a hand. Read-only; money stays Decimal.

The pool meter is the engine's (`jackpots.services.readmodels.meters`): the live amount, capped at the
ceiling and rounded down to the cent, so a meter never shows more than the pool holds. The hidden
reserve and the must-hit-by value are not shown at the table.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from halls.cashier.services import readmodels as cashier_readmodels
from jackpots.services.readmodels.meters import PoolMeter, pool_meters
from jackpots.tables import rules
from jackpots.tables.models import CasinoTable, Hand, HandState
from jackpots.tables.services.table_pool import table_pack

TABLE_HITS = 10


def meter_view(meter: PoolMeter | None) -> dict[str, Any] | None:
    if meter is None:
        return None
    return {
        "pool": meter.pool_id,
        "code": meter.code,
        "name": meter.name,
        "currency": meter.currency,
        "carousel_bet": meter.carousel_bet,
        "active": meter.active,
        "amount": meter.levels[0].amount if meter.levels else Decimal(0),
        "levels": [
            {
                "level": level.level_id,
                "name": level.name,
                "kind": level.kind,
                "amount": level.amount,
                "seed": level.seed,
                "ceiling": level.ceiling,
                "hits": level.hits,
                "total_paid": level.total_paid,
            }
            for level in meter.levels
        ],
        "last_hits": [
            {
                "at": hit.at,
                "member": hit.source,
                "hand": hit.hand,
                "seat": hit.seat,
                "category": hit.category,
                "amount": hit.amount,
            }
            for hit in meter.last_hits[:TABLE_HITS]
        ],
        "as_of": meter.as_of,
    }


def _rules_view(table: CasinoTable) -> dict[str, Any]:
    pack = table_pack(table)
    cap = pack.max_pool_bet(table.table_minimum)
    fewest, most = (
        rules.seat_card_count(pack, table.game) if pack.ordering or table.game == "blackjack" else (0, 0)
    )
    return {
        "code": pack.code,
        "title": pack.title,
        "citation": pack.source,
        "max_pool_bet": cap,
        "requires_initial_bet": pack.requires_initial_bet,
        "manual_total": rules.is_manual_total(pack),
        "extra_card_forfeits": pack.extra_card_forfeits_pool_bet,
        "first_five_cards_only": pack.first_five_cards_only,
        "discards": table.game == "poker_con_descarte",
        "community_cards": rules.community_cards_for(pack, table.game),
        "cards_per_seat": {"min": fewest, "max": most},
        "paytable": [
            {
                "category": row.category.value,
                "prize": _prize(row.prize),
                **_prize_data(row.prize),
                "ties": row.ties.value,
            }
            for row in pack.paytable.rows
        ],
        "discard_paytable": [
            {
                "category": row.category.value,
                "prize": _prize(row.prize),
                **_prize_data(row.prize),
                "ties": row.ties.value,
            }
            for row in (pack.discard_paytable.rows if pack.discard_paytable else ())
        ],
    }


def _prize_data(prize: Any) -> dict[str, str]:
    """The prize as data, which the console says in its reader's language (`prize` is the English)."""
    if hasattr(prize, "percent"):
        return {"prize_kind": "percent", "prize_value": str(prize.percent)}
    if hasattr(prize, "multiple"):
        return {"prize_kind": "multiple", "prize_value": str(prize.multiple)}
    return {"prize_kind": "amount", "prize_value": str(prize.amount)}


def _prize(prize: Any) -> str:
    if hasattr(prize, "percent"):
        return f"{prize.percent} % of the meter"
    if hasattr(prize, "multiple"):
        return f"{prize.multiple} × the bet"
    return f"{prize.amount}"


def current_hand(table: CasinoTable) -> Hand | None:
    """The open hand, else the last one."""
    return (
        Hand.objects.filter(table=table, state=HandState.OPEN).first()
        or Hand.objects.filter(table=table).order_by("-number").first()
    )


def table_views(tables: Iterable[CasinoTable], *, detail: bool = False) -> list[dict[str, Any]]:
    """Tables with their pool meter (one meter query for all of them)."""
    found = list(tables)
    meters = pool_meters({t.pool_id for t in found if t.pool_id is not None})
    views = []
    for table in found:
        view: dict[str, Any] = {
            "id": table.pk,
            "venue": table.venue_id,
            "number": table.number,
            "name": table.name,
            "game": table.game,
            "table_minimum": table.table_minimum,
            "seats": table.seats,
            "layout": table.layout,
            "rule_pack": table.rule_pack,
            "state": table.state,
            "meter": meter_view(meters.get(table.pool_id)) if table.pool_id is not None else None,
            "open_hand": Hand.objects.filter(table=table, state=HandState.OPEN)
            .values_list("pk", flat=True)
            .first(),
        }
        if detail:
            hand = current_hand(table)
            view["rules"] = _rules_view(table)
            view["current_hand"] = hand_view(hand) if hand else None
        views.append(view)
    return views


def table_view(table: CasinoTable) -> dict[str, Any]:
    return table_views([table], detail=True)[0]


def hand_view(hand: Hand) -> dict[str, Any]:
    """The hand, seat by seat: bets, cards and rank, payout."""
    bets = {b.seat: b for b in hand.bets.all()}
    cards = {c.seat: c for c in hand.cards.all()}
    payouts = {p.seat: p for p in hand.payouts.all()}
    # What the cashier paid of each seat's payout (halls.cashier, keyed by the pool's award).
    paid = cashier_readmodels.payouts(
        [cashier_readmodels.pool_award_source(p.award_id) for p in payouts.values()],
        venue_id=hand.table.venue_id,
    )
    seats = []
    for seat in sorted(set(bets) | set(cards) | set(payouts)):
        bet, seat_cards, payout = bets.get(seat), cards.get(seat), payouts.get(seat)
        seats.append(
            {
                "seat": seat,
                "initial_bet": bet.initial_bet if bet else None,
                "pool_bet": bet.pool_bet if bet else None,
                "extra_card": bet.extra_card if bet else False,
                "forfeited": bet.forfeited if bet else False,
                "forfeit_reason": bet.forfeit_reason if bet else "",
                "cards": seat_cards.cards if seat_cards else "",
                "discard": seat_cards.discard if seat_cards else False,
                "category": seat_cards.category if seat_cards else "",
                "rank": seat_cards.rank if seat_cards else "",
                "payout": payout.amount if payout else None,
                "payout_order": payout.order if payout else None,
                "payout_note": payout.note if payout else "",
                "from_operator": payout.from_operator if payout else None,
                "payment": paid.get(cashier_readmodels.pool_award_source(payout.award_id))
                if payout
                else None,
            }
        )
    pool_bets = sum((b.pool_bet for b in bets.values()), Decimal(0))
    return {
        "id": hand.pk,
        "table": hand.table_id,
        "number": hand.number,
        "state": hand.state,
        "opened_at": hand.opened_at,
        "opened_by": hand.opened_by.get_username() if hand.opened_by_id else "",
        "settled_at": hand.settled_at,
        "manual_total": hand.manual_total,
        "community_cards": hand.community_cards,
        "pool_bets": pool_bets,
        "total_paid": sum((p.amount for p in payouts.values()), Decimal(0)),
        "meter_before": hand.meter_before,
        "meter_after_payouts": hand.meter_after_payouts,
        "meter_after": hand.meter_after,
        "void_reason": hand.void_reason,
        "seats": seats,
    }
